"""Cross-family ensembles: the weighted mean of members' probabilities, their checks at load, the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from deid_core.detectors import Method, NetworkDetector, build_detector
from deid_core.ensemble import EnsembleManifest, EnsembleModel, write_ensemble
from deid_core.model_files import MANIFEST_FILE, ModelError
from deid_core.models import load_model, read_manifest
from tests.classic.conftest import TEXTS, train_dir


@pytest.fixture(scope="module")
def members(cfg, artifact, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("members")
    return train_dir(cfg, artifact, "crf", root / "crf"), train_dir(cfg, artifact, "svm", root / "svm")


def test_predict_is_the_weighted_mean_of_the_members(cfg, rules, members, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    crf, svm = members
    ens = tmp_path / "ens"
    write_ensemble(ens, [(crf, 3.0), (svm, 1.0)])
    model = load_model(ens, cfg)
    assert isinstance(model, EnsembleModel) and model.classes == list(cfg.deep.classes)
    analyses = [rules.analyse(t) for t in TEXTS]
    a, b = load_model(crf, cfg).predict(analyses), load_model(svm, cfg).predict(analyses)
    for got, x, y in zip(model.predict(analyses), a, b, strict=True):
        np.testing.assert_allclose(got, 0.75 * x + 0.25 * y, atol=1e-6)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-5)
    # members are stored relative to the ensemble (a folder holding both moves whole)
    stored = [m.path for m in read_manifest(ens).members]  # type: ignore[attr-defined]
    assert not any(Path(p).is_absolute() for p in stored)
    assert [(ens / p).resolve() for p in stored] == [crf.resolve(), svm.resolve()]


def test_the_version_follows_members_and_weights(members, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    crf, svm = members
    v1 = write_ensemble(tmp_path / "a", [(crf, 1.0), (svm, 1.0)]).model_version
    v2 = write_ensemble(tmp_path / "b", [(crf, 1.0), (svm, 1.0)]).model_version
    v3 = write_ensemble(tmp_path / "c", [(crf, 2.0), (svm, 1.0)]).model_version
    assert v1 == v2 != v3 and v1.startswith("ens-")


def test_a_missing_or_retrained_member_is_refused(cfg, members, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    crf, svm = members
    root = tmp_path / "moved"
    shutil.copytree(crf, root / "crf")
    shutil.copytree(svm, root / "svm")
    write_ensemble(root / "ens", [(root / "crf", 1.0), (root / "svm", 1.0)])
    load_model(root / "ens", cfg)  # whole: loads
    # a member retrained since (another version): thresholds tuned on the old one must not apply
    man = json.loads((root / "svm" / MANIFEST_FILE).read_text())
    man["model_version"] = "svm-000000000000"
    (root / "svm" / MANIFEST_FILE).write_text(json.dumps(man))
    with pytest.raises(ModelError, match="rebuild the ensemble"):
        load_model(root / "ens", cfg)
    shutil.rmtree(root / "svm")
    with pytest.raises(ModelError):
        build_detector(Method.hybrid, cfg, model_dir=root / "ens")


def test_a_tampered_manifest_and_nested_ensembles_are_refused(cfg, members, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    crf, svm = members
    ens = tmp_path / "ens"
    write_ensemble(ens, [(crf, 1.0), (svm, 1.0)])
    with pytest.raises(ModelError):
        write_ensemble(tmp_path / "nested", [(ens, 1.0), (crf, 1.0)])
    man = json.loads((ens / MANIFEST_FILE).read_text())
    man["members"][0]["weight"] = 5.0  # weights changed by hand: the version no longer matches
    (ens / MANIFEST_FILE).write_text(json.dumps(man))
    with pytest.raises(ModelError, match="does not match"):
        load_model(ens, cfg)


def test_a_failing_member_masks_the_whole_text(cfg, members, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    crf, svm = members
    write_ensemble(tmp_path / "ens", [(crf, 1.0), (svm, 1.0)])
    det = build_detector(Method.hybrid, cfg, model_dir=tmp_path / "ens")
    inner = det.inner
    assert isinstance(inner, NetworkDetector)

    def broken(_analyses):  # type: ignore[no-untyped-def]
        raise RuntimeError("member failed")

    inner.model.members[1][0].predict = broken  # type: ignore[attr-defined]
    text = "Seen by Dr. Quackenbush for rash."
    masked = det.detect([text])[0]
    assert {text[m.start:m.end] for m in masked} >= {"Seen", "Quackenbush", "rash"} and det.last_failed == [0]


def test_cli_builds_tunes_and_detects_with_an_ensemble(monkeypatch, members, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.cli.test_cli import DOCS, run, write

    crf, svm = members
    ens = tmp_path / "ens"
    assert run(monkeypatch, "build-ensemble", "--member", str(crf), "--member", f"{svm}:0.5", "--out", str(ens)) == 0
    man = EnsembleManifest.read(ens)
    assert [m.weight for m in man.members] == [1.0, 0.5] and man.thresholds is None
    gold = tmp_path / "gold.jsonl"
    from tests.classic.conftest import tiny_corpus

    gold.write_text("".join(json.dumps({"doc_id": d.doc_id, "text": d.text,
                                        "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in d.spans]})
                            + "\n" for d in tiny_corpus(12, seed=9)))
    assert run(monkeypatch, "tune-thresholds", "--model", str(ens), "--gold", str(gold), "--target-recall", "0.9") == 0
    assert EnsembleManifest.read(ens).thresholds is not None
    src = write(tmp_path, [json.dumps(d).encode() for d in DOCS])
    out = tmp_path / "out.jsonl"
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--model", str(ens), "--no-progress") == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert "2014" not in lines[0]["text_deid"] and "aspirin" in lines[1]["text_deid"]
    assert run(monkeypatch, "build-ensemble", "--member", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")) == 2
    capsys.readouterr()


def test_member_specs_name_a_folder_and_an_optional_weight(tmp_path: Path) -> None:
    from deid_core.ensemble import parse_weighted

    assert parse_weighted("models/crf") == (Path("models/crf"), 1.0)
    assert parse_weighted("models/crf:0.5") == (Path("models/crf"), 0.5)
    odd = tmp_path / "a:b"  # an existing folder whose name holds ':' is taken whole
    odd.mkdir()
    assert parse_weighted(str(odd)) == (odd, 1.0)
    with pytest.raises(ValueError, match="not a number"):
        parse_weighted("models/crf:heavy")
