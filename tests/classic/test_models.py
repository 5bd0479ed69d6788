"""The CRF and SVM at run time: probabilities, export/load round trips, the family loader, failing closed."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pycrfsuite
import pytest

from deid_core.classic.crf import CRF_FILE, CrfModel
from deid_core.classic.manifest import LEXICON_FILE, ClassicManifest
from deid_core.classic.svm import FEATURE_INDEX_FILE, WEIGHTS_FILE, SvmModel, SvmParameters, feature_matrix
from deid_core.detectors import Method, NetworkDetector, build_detector
from deid_core.model_files import MANIFEST_FILE, ModelError, manifest_family
from deid_core.models import load_model, read_manifest

from .conftest import TEXTS

REPO = Path(__file__).resolve().parents[2]
SECRET = "Quackenbush"


@pytest.fixture(params=["crf", "svm"])
def model_dir(request: pytest.FixtureRequest, crf_dir: Path, svm_dir: Path) -> Path:
    return crf_dir if request.param == "crf" else svm_dir


def test_probabilities_are_distributions_in_the_class_order(cfg, rules, model_dir: Path) -> None:  # type: ignore[no-untyped-def]
    model = load_model(model_dir, cfg)
    assert model.classes == list(cfg.deep.classes) and model.classes[0] == "SAFE"
    analyses = [rules.analyse(t) for t in TEXTS]
    probs = model.predict(analyses)
    assert [p.shape for p in probs] == [(len(a.tokens), len(model.classes)) for a in analyses]
    allp = np.concatenate(probs)
    assert np.isfinite(allp).all() and (allp >= 0).all() and (allp <= 1).all()
    np.testing.assert_allclose(allp.sum(axis=1), 1.0, atol=1e-5)
    # it learnt something: the date of the first text is PHI, "Aspirin" is not
    first, second = probs[0], probs[1]
    assert first[[t.text for t in analyses[0].tokens].index("2019"), 0] < 0.5
    assert second[0, 0] > 0.5


def test_round_trip_gives_identical_probabilities(cfg, rules, model_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A copied directory loads to the same model; each reads its files as the trainer wrote them."""
    copy = tmp_path / "copy"
    shutil.copytree(model_dir, copy)
    analyses = [rules.analyse(t) for t in TEXTS]
    a = load_model(model_dir, cfg).predict(analyses)
    b = load_model(copy, cfg).predict(analyses)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert load_model(copy, cfg).version == read_manifest(model_dir).model_version


def test_crf_marginals_are_crfsuite_s(cfg, rules, crf_dir: Path) -> None:  # type: ignore[no-untyped-def]
    model = CrfModel.load(crf_dir, cfg)
    analysis = rules.analyse(TEXTS[0])
    tagger = pycrfsuite.Tagger()
    tagger.open(str(crf_dir / CRF_FILE))
    tagger.set(model.features.sequence(analysis))
    safe = [tagger.marginal("SAFE", t) for t in range(len(analysis.tokens))]
    np.testing.assert_allclose(model.predict([analysis])[0][:, 0], safe, atol=1e-6)


def test_svm_saved_arrays_score_as_the_trained_ones(cfg, rules, svm_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model = SvmModel.load(svm_dir, cfg)
    params = model.params
    again = tmp_path / "again.npz"
    params.save(again)
    loaded = SvmParameters.load(again)
    x = feature_matrix(model.features.sequence(rules.analyse(TEXTS[0])), model.index)
    k = len(model.classes)
    np.testing.assert_array_equal(params.probabilities(x, k), loaded.probabilities(x, k))
    with np.load(svm_dir / WEIGHTS_FILE, allow_pickle=False) as data:
        assert set(data.files) == {"coef", "intercept", "platt_a", "platt_b", "columns"}
    assert isinstance(json.loads((svm_dir / FEATURE_INDEX_FILE).read_text()), list)


def test_the_loader_picks_the_family(cfg, artifact, crf_dir: Path, svm_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(load_model(crf_dir, cfg), CrfModel) and isinstance(load_model(svm_dir, cfg), SvmModel)
    assert manifest_family(crf_dir) == "crf" and read_manifest(svm_dir).family == "svm"
    from deid_core.deep.predictor import DeepModel
    from tests.deep.conftest import make_model_dir

    # a BiLSTM manifest written before the field existed is a BiLSTM's
    old = make_model_dir(cfg, artifact, tmp_path / "old")
    assert read_manifest(old).family == "bilstm"
    data = json.loads((old / MANIFEST_FILE).read_text())
    data.pop("family", None)
    (old / MANIFEST_FILE).write_text(json.dumps(data))
    assert manifest_family(old) == "bilstm" and isinstance(load_model(old, cfg), DeepModel)
    data["family"] = "forest"
    (old / MANIFEST_FILE).write_text(json.dumps(data))
    with pytest.raises(ModelError, match="unknown family"):
        load_model(old, cfg)
    # one family's manifest is not read as another's
    from deid_core.deep.manifest import ModelManifest

    with pytest.raises(ModelError, match="crf model"):
        ModelManifest.read(crf_dir)
    with pytest.raises(ModelError, match="not an SVM"):
        SvmModel.load(crf_dir, cfg)


@pytest.mark.parametrize("damage", ["missing", "changed", "rehashed", "lexicon", "manifest"])
def test_a_missing_or_corrupt_model_fails_at_load(cfg, model_dir: Path, tmp_path: Path, damage: str) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad"
    shutil.copytree(model_dir, bad)
    manifest = ClassicManifest.read(bad)
    main_file = CRF_FILE if manifest.family == "crf" else WEIGHTS_FILE
    if damage == "missing":
        (bad / main_file).unlink()
    elif damage == "changed":
        (bad / main_file).write_bytes((bad / main_file).read_bytes()[:100])
    elif damage == "rehashed":
        # garbage whose hash the manifest agrees with: the reader itself must refuse it
        (bad / main_file).write_bytes(b"not a model" * 20)
        from deid_core.model_files import file_sha256

        manifest.model_copy(update={"files": {**manifest.files, main_file: file_sha256(bad / main_file)}}).write(bad)
    elif damage == "lexicon":
        (bad / LEXICON_FILE).write_text('{"words": ["smith"], "affixes": []}')
    else:
        (bad / MANIFEST_FILE).unlink()
    with pytest.raises(ModelError):
        load_model(bad, cfg)
    with pytest.raises(ModelError):
        build_detector(Method.hybrid, cfg, model_dir=bad)


def test_a_failure_inside_predict_masks_the_whole_text(cfg, crf_dir: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    det = build_detector(Method.hybrid, cfg, model_dir=crf_dir)
    inner = det.inner
    assert isinstance(inner, NetworkDetector)

    def broken(_analyses):  # type: ignore[no-untyped-def]
        raise ValueError(f"cannot tag {SECRET}")

    inner.model.predict = broken  # type: ignore[method-assign]
    text = f"Seen by Dr. {SECRET} for rash."
    with caplog.at_level(logging.ERROR):
        masked = det.detect([text])[0]
    covered = {text[m.start:m.end] for m in masked}
    assert {"Seen", "by", "Dr", SECRET, "for", "rash"} <= covered and det.last_failed == [0]
    assert "ValueError" in caplog.text and SECRET not in caplog.text


def test_loading_a_classical_model_imports_no_keras(crf_dir: Path, svm_dir: Path) -> None:
    code = (
        "import sys; from pathlib import Path\n"
        "from deid_core.config import load_config\n"
        "from deid_core.detectors import Method, build_detector\n"
        "cfg = load_config()\n"
        f"for d in ({str(crf_dir)!r}, {str(svm_dir)!r}):\n"
        "    det = build_detector(Method.hybrid, cfg, model_dir=Path(d))\n"
        "    assert det.detect(['Seen by Dr. Smith on 12/03/2019.'])[0]\n"
        "heavy = sorted(m for m in ('keras', 'jax', 'tensorflow') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.mark.parametrize("method", ["hybrid", "deep"])
def test_deid_detect_with_a_crf_directory(monkeypatch, tmp_path: Path, crf_dir: Path, method: str, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.cli.test_cli import DOCS, run, write

    src = write(tmp_path, [json.dumps(d).encode() for d in DOCS])
    out = tmp_path / "out.jsonl"
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--method", method,
               "--model", str(crf_dir), "--no-progress") == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["doc_id"] for x in lines] == ["r1", "r2"]
    assert "2014" not in lines[0]["text_deid"] and "aspirin" in lines[1]["text_deid"]
    err = capsys.readouterr().err
    assert "crf-" in err or method in err
    assert SECRET not in err


def test_deid_detect_refuses_a_broken_crf_directory(monkeypatch, tmp_path: Path, crf_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.cli.test_cli import DOCS, run, write

    bad = tmp_path / "bad"
    shutil.copytree(crf_dir, bad)
    (bad / CRF_FILE).unlink()
    src = write(tmp_path, [json.dumps(DOCS[0]).encode()])
    out = tmp_path / "out.jsonl"
    code = run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--model", str(bad), "--no-progress")
    assert code == 2 and not out.exists()
    assert SECRET not in capsys.readouterr().err


def test_deid_tune_thresholds_on_a_crf_and_only_its_own_out_of_fold_scores(monkeypatch, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                             crf_dir: Path, capsys) -> None:
    from deid_core.training.out_of_fold import file_sha256, write_index
    from tests.cli.test_cli import run, write
    from tests.training.oof_fixture import one_fold_oof

    model = tmp_path / "crf"
    shutil.copytree(crf_dir, model)
    text = f"Seen by Dr. {SECRET} on 12-JAN-2014 for rash."
    gold = {"doc_id": "g1", "text": text, "spans": [{"start": 12, "end": 23, "label": "NAME"},
                                                     {"start": 27, "end": 38, "label": "DATE"}]}
    src = write(tmp_path, [json.dumps(gold).encode()] * 3)
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--target-recall", "1.0", "--model", str(model),
               "--plot", str(tmp_path / "pr.png")) == 0
    t = read_manifest(model).thresholds
    assert t is not None and t.recall == 1.0 and t.tuned_on == "in.jsonl"
    assert read_manifest(model).model_version == read_manifest(crf_dir).model_version
    oof = one_fold_oof(tmp_path / "oof")
    capsys.readouterr()
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--model", str(model), "--oof", str(oof),
               "--plot", str(tmp_path / "pr2.png")) != 0
    assert "bilstm model's" in capsys.readouterr().err
    write_index(oof, setup="t", folds_total=1, fold_key="^[^-]+", corpora="train.jsonl", family="crf",
                entries=[{"fold": 0, "scores": "fold-0.npz", "sha256": file_sha256(oof / "fold-0.npz")}])
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--model", str(model), "--oof", str(oof),
               "--target-recall", "1.0", "--plot", str(tmp_path / "pr3.png")) == 0
    assert read_manifest(model).thresholds.tuned_on.startswith("in.jsonl+oof(crf;train.jsonl;1folds;")  # type: ignore[union-attr]
