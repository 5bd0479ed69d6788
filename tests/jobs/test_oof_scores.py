"""Out-of-fold scores end to end on a tiny corpus (local Spark, tiny network)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from deid_core.corpus.jsonl import write_jsonl
from deid_core.synthetic import generate_narratives
from deid_core.training.folds import compile_key, fold_of

pytestmark = pytest.mark.spark


def test_fold_models_score_only_what_they_did_not_see(cfg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from deid_core.training.out_of_fold import read_oof
    from jobs.oof_scores import out_of_fold_scores

    from tests.deep.conftest import tiny_arch

    docs = [n.to_document() for n in generate_narratives(36, seed=21)]
    train_path, dev_path = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    write_jsonl(docs[:24], train_path)
    write_jsonl(docs[24:], dev_path)
    deep = cfg.deep.model_copy(update={
        "architecture": tiny_arch(cfg),
        "sequence": cfg.deep.sequence.model_copy(update={"window_tokens": 32, "overlap": 8}),
        "training": cfg.deep.training.model_copy(update={
            "corpora": [train_path], "dev": dev_path, "synthetic_docs": 0, "workdir": tmp_path / "work",
            "batch_size": 8, "spark_conf": {}, "surrogate_copies": 0, "vaers_docs": 0,
            "pretrained_vectors": None, "tuning_standoff": []}),
    })
    small = cfg.model_copy(update={"deep": deep})
    out = tmp_path / "oof"
    oof = out_of_fold_scores(small, out, folds=2, fold_key=r"^[^#]+", max_epochs=1)
    index = json.loads((out / "oof.json").read_text())
    assert [f["fold"] for f in index["folds"]] == [0, 1]
    key = compile_key(r"^[^#]+")
    for k in (0, 1):
        held = {d.doc_id for d in docs[:24] if fold_of(d.doc_id, 2, key) == k}
        trained_on = [json.loads(line)["doc_id"] for line in
                      (out / f"fold-{k}" / "corpora" / "train.jsonl").read_text().splitlines()]
        # the fold model never trained on what it scores, and trained on everything else
        assert held and not held & set(trained_on)
        assert set(trained_on) | held == {d.doc_id for d in docs[:24]}
        assert index["folds"][k]["documents"] == len(held)
        assert (out / f"fold-{k}" / "model" / "manifest.json").exists()
    pooled = oof.pooled
    assert len(pooled) == sum(f["tokens"] for f in index["folds"]) > 0
    assert pooled.gold_phi.sum() == sum(f["gold_phi"] for f in index["folds"]) > 0
    assert np.all((pooled.p_safe >= 0) & (pooled.p_safe <= 1)) and pooled.families is not None
    # the folds' input layout is recorded: they tune their own layout's network, not another's
    from deid_core.deep.features import arch_feature_names

    assert index["feature_names"] == list(arch_feature_names(small.deep.architecture))
    oof.check_model(out / "fold-0" / "model")
    flipped = {"rule_categories": not small.deep.architecture.rule_categories}
    with pytest.raises(ValueError, match="other per-token inputs"):
        oof.check_inputs(list(arch_feature_names(small.deep.architecture.model_copy(update=flipped))))
    # the setup is what trains the folds, not where the checkout or the scratch folder is
    from jobs.oof_scores import _setup_key

    moved = small.model_copy(update={"deep": small.deep.model_copy(update={
        "training": small.deep.training.model_copy(update={"workdir": tmp_path / "elsewhere"})})})
    assert _setup_key(moved, 2, r"^[^#]+", 1) == index["setup"]
    changed = small.model_copy(update={"deep": small.deep.model_copy(update={
        "training": small.deep.training.model_copy(update={"seed": 99})})})
    assert _setup_key(changed, 2, r"^[^#]+", 1) != index["setup"]
    retuned = small.model_copy(update={"deep": small.deep.model_copy(update={
        "training": small.deep.training.model_copy(update={"threshold_target_recall": 0.9, "tuning_oof": out})})})
    assert _setup_key(retuned, 2, r"^[^#]+", 1) == index["setup"]  # tuning settings train no fold model
    categories = small.model_copy(update={"deep": small.deep.model_copy(update={
        "architecture": small.deep.architecture.model_copy(update=flipped)})})
    assert _setup_key(categories, 2, r"^[^#]+", 1) != index["setup"]  # other inputs, other fold networks
    # options added after folds existed keep the key at their off value and change it when on
    def training(**update):  # type: ignore[no-untyped-def]
        return small.model_copy(update={"deep": small.deep.model_copy(update={
            "training": small.deep.training.model_copy(update=update)})})

    assert small.deep.training.learning_rate_schedule == "constant" and small.deep.training.average_from_epoch is None
    assert _setup_key(training(learning_rate_floor=0.5), 2, r"^[^#]+", 1) == index["setup"]  # no effect when constant
    assert _setup_key(training(learning_rate_schedule="cosine"), 2, r"^[^#]+", 1) != index["setup"]
    assert _setup_key(training(average_from_epoch=2), 2, r"^[^#]+", 1) != index["setup"]
    # a rerun with the same setup reuses the scores instead of training again
    mtime = (out / "fold-0.npz").stat().st_mtime_ns
    again = out_of_fold_scores(small, out, folds=2, fold_key=r"^[^#]+", max_epochs=1)
    assert (out / "fold-0.npz").stat().st_mtime_ns == mtime and again.index["sha256"] == index["sha256"]
    # after a rules change the fold models score their folds again without training
    model_mtime = (out / "fold-0" / "model" / "manifest.json").stat().st_mtime_ns
    rescored = out_of_fold_scores(small, out, folds=2, fold_key=r"^[^#]+", max_epochs=1, rescore=True)
    assert (out / "fold-0" / "model" / "manifest.json").stat().st_mtime_ns == model_mtime
    assert len(rescored.pooled) == len(pooled)
    assert all(f.get("rescored") for f in rescored.index["folds"])
    # a changed scores file is refused, not silently pooled
    (out / "fold-1.npz").write_bytes(b"not scores")
    with pytest.raises(ValueError, match="changed"):
        read_oof(out)
    # rescoring needs the fold models of this setup
    import typer

    with pytest.raises(typer.BadParameter, match="fold model"):
        out_of_fold_scores(small, tmp_path / "empty", folds=2, fold_key=r"^[^#]+", max_epochs=1, rescore=True)
