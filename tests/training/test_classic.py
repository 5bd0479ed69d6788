"""deid_core/training/classic.py: training the CRF and SVM with the training job's one command, on a tiny corpus (no Spark, no ../shared)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import typer

from deid_core.corpus.jsonl import write_jsonl
from deid_core.models import read_manifest
from deid_core.training.classic import fit_platt

from tests.classic.conftest import small_config, svm_dir, tiny_corpus  # noqa: F401 - svm_dir: a fixture


@pytest.mark.parametrize("family", ["crf", "svm"])
def test_train_model_family_trains_exports_and_tunes(cfg, tmp_path: Path, family: str) -> None:  # type: ignore[no-untyped-def]
    from jobs.train_model import train_model

    docs = tiny_corpus(50, seed=11)
    train_path, dev_path = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    write_jsonl(docs[:36], train_path)
    write_jsonl(docs[36:], dev_path)
    small = small_config(cfg)
    small = small.model_copy(update={"deep": small.deep.model_copy(update={
        "training": small.deep.training.model_copy(update={"surrogate_copies": 1})})})
    out = tmp_path / family
    m = train_model(small, config_file=None, out=out, corpora=[train_path], dev_path=dev_path, synthetic_docs=8,
                    target_recall=0.5, family=family)
    assert m.family == family and m.model_version.startswith(f"{family}-")
    assert read_manifest(out) == m
    assert [s.kind for s in m.training_data] == ["corpus", "augmented", "synthetic"]
    assert m.training_data[0].documents == 36 and m.dictionary_version.startswith("dict-")
    assert m.training["fit_seconds"] >= 0 and m.training["texts"] == 36 * 2 + 8
    assert m.thresholds is not None and m.thresholds.tuned_on == "dev.jsonl" and m.thresholds.by_reason
    assert 0 < m.metrics["dev_model_token_recall"] <= 1 and m.metrics["dev_tokens_per_second"] > 0
    assert not (tmp_path / "work").exists()  # no Spark scratch folder
    with pytest.raises(typer.BadParameter, match="network"):
        train_model(small, config_file=None, out=out, corpora=[train_path], dev_path=dev_path, synthetic_docs=0,
                    head="crf", family=family)


def test_a_classical_model_pools_only_its_own_out_of_fold_scores(cfg, artifact, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.train_model import _tuning_oof, default_out, tune_and_record

    from tests.training.oof_fixture import one_fold_oof

    assert _tuning_oof(None, False, cfg, "crf") is None  # the configured scores are the network's
    assert _tuning_oof(tmp_path, False, cfg, "svm") == tmp_path
    assert _tuning_oof(None, False, cfg) == cfg.deep.training.tuning_oof
    assert default_out(cfg, "crf").parts[-2:] == ("models", "crf") and default_out(cfg, "bilstm") == cfg.deep.model_dir
    oof = one_fold_oof(tmp_path / "oof")
    from tests.classic.conftest import train_dir

    model = train_dir(cfg, artifact, "crf", tmp_path / "crf")
    docs = tiny_corpus(10, seed=3)
    with pytest.raises(typer.BadParameter, match="bilstm model.s, the model to tune is a crf model"):
        tune_and_record(small_config(cfg), model, docs, "dev", 0.5, oof=oof)


def test_platt_fit_is_scikit_learns_sigmoid_calibration() -> None:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 0] + 0.5 * rng.normal(size=400) > 0.3).astype(int)
    svc = LinearSVC(C=1.0).fit(x[:200], y[:200])
    ref = CalibratedClassifierCV(FrozenEstimator(svc), method="sigmoid").fit(x[200:], y[200:])
    a, b = fit_platt(svc.decision_function(x[200:]), y[200:] == 1)
    mine = 1.0 / (1.0 + np.exp(a * svc.decision_function(x[200:]) + b))
    np.testing.assert_allclose(mine, ref.predict_proba(x[200:])[:, 1], atol=1e-4)


def test_svm_margins_are_liblinear_s(cfg, rules, svm_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The exported arrays give the margins LinearSVC gives when refitted the same way."""
    from deid_core.classic.svm import SvmModel, feature_matrix
    from deid_core.training.classic import _svc, encode_rows, examples_from

    model = SvmModel.load(svm_dir, cfg)
    small = small_config(cfg)
    examples = examples_from([("train.jsonl", d) for d in tiny_corpus()], rules, small)
    x, y, _, names = encode_rows(examples, model.features)
    assert names == sorted(model.index, key=model.index.__getitem__)
    svc = _svc(small).fit(x, y)
    x_new = feature_matrix(model.features.sequence(rules.analyse("Seen by Dr. Smith on 12/03/2019.")), model.index)
    np.testing.assert_allclose(np.asarray(x_new @ model.params.coef.T) + model.params.intercept,
                               svc.decision_function(x_new), atol=1e-4)
