"""An ensemble's out-of-fold scores: built from its members' fold models, and pooled only for the same ensemble."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import typer

from deid_core.corpus.jsonl import write_jsonl
from deid_core.detectors import Method, build_detector
from deid_core.ensemble import write_ensemble
from deid_core.hybrid.combiner import never_release_from
from deid_core.training.folds import split_folds
from deid_core.training.out_of_fold import file_sha256, read_oof, write_index
from deid_core.training.scoring import collect_scores
from tests.classic.conftest import tiny_corpus, train_dir

FOLD_KEY = r"^[^-]+"


@pytest.fixture(scope="module")
def setup(cfg, artifact, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A corpus, a config that trains on it, and two members' out-of-fold folders of two folds each.

    The fold models are tiny CRFs and SVMs (one per fold, each trained on the other fold), written
    where `jobs.oof_scores` writes them; the stored member scores are placeholders, since the ensemble
    scores its folds again with the fold models themselves.
    """
    root = tmp_path_factory.mktemp("ens-oof")
    docs = tiny_corpus(36, seed=13)
    corpus = root / "train.jsonl"
    write_jsonl(docs, corpus)
    small = cfg.model_copy(update={"deep": cfg.deep.model_copy(update={
        "training": cfg.deep.training.model_copy(update={"corpora": [corpus]})})})
    folds = split_folds(docs, 2, FOLD_KEY)
    members = {}
    for family in ("crf", "svm"):
        folder = root / f"oof-{family}"
        entries = []
        for k in (0, 1):
            train_dir(cfg, artifact, family, folder / f"fold-{k}" / "model", docs=folds[1 - k])
            scores = collect_scores(build_detector(Method.deep, cfg, artifact,
                                                   model_dir=folder / f"fold-{k}" / "model").inner,  # type: ignore[arg-type]
                                    folds[k], never_release_from(cfg))
            scores.save(folder / f"fold-{k}.npz")
            entries.append({"fold": k, "scores": f"fold-{k}.npz", "sha256": file_sha256(folder / f"fold-{k}.npz"),
                            "documents": len(folds[k])})
        write_index(folder, setup=f"setup-{family}", folds_total=2, fold_key=FOLD_KEY, corpora="train.jsonl",
                    entries=entries, family=family)
        members[family] = folder
    return small, folds, members


def test_the_ensembles_scores_are_its_fold_ensembles_on_the_folds_they_did_not_see(setup, cfg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.oof_scores import ensemble_out_of_fold

    small, folds, members = setup
    out = tmp_path / "oof-ens"
    oof = ensemble_out_of_fold(small, out, [(members["crf"], 3.0), (members["svm"], 1.0)])
    assert oof.family == "ensemble" and oof.name.startswith("oof(ensemble;train.jsonl;2folds;")
    assert [(m["family"], m["weight"]) for m in oof.index["members"]] == [("crf", 3.0), ("svm", 1.0)]
    never = never_release_from(cfg)
    for k in (0, 1):
        # exactly what an ensemble of the two fold-k models gives on fold k
        ens = tmp_path / f"check-{k}"
        write_ensemble(ens, [(members["crf"] / f"fold-{k}" / "model", 3.0), (members["svm"] / f"fold-{k}" / "model", 1.0)])
        want = collect_scores(build_detector(Method.deep, cfg, model_dir=ens).inner, folds[k], never)  # type: ignore[arg-type]
        got = oof.folds[k]
        assert len(got) == len(want) > 0 and oof.index["folds"][k]["documents"] == len(folds[k])
        np.testing.assert_allclose(got.p_safe, want.p_safe, atol=1e-6)
        assert (got.gold_phi == want.gold_phi).all() and (got.families == want.families).all()
    assert read_oof(out).index["sha256"] == oof.index["sha256"]


def test_ensemble_scores_tune_only_the_same_ensemble(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.oof_scores import ensemble_out_of_fold

    small, _, members = setup
    oof = ensemble_out_of_fold(small, tmp_path / "oof-ens", [(members["crf"], 1.0), (members["svm"], 1.0)])
    crf, svm = members["crf"] / "fold-0" / "model", members["svm"] / "fold-0" / "model"
    same = tmp_path / "same"
    write_ensemble(same, [(crf, 2.0), (svm, 2.0)])  # the same mix: weights count as proportions
    oof.check_model(same)
    for name, spec in (("swapped", [(svm, 1.0), (crf, 1.0)]), ("reweighted", [(crf, 3.0), (svm, 1.0)]),
                       ("shorter", [(crf, 1.0)])):
        write_ensemble(tmp_path / name, spec)
        with pytest.raises(ValueError, match="ensemble of"):
            oof.check_model(tmp_path / name)
    with pytest.raises(ValueError, match="ensemble model's"):
        oof.check_model(crf)  # a single model is not tuned on an ensemble's scores
    with pytest.raises(ValueError, match="crf model's"):
        read_oof(members["crf"]).check_model(same)  # nor an ensemble on one member's


def test_members_must_share_their_folds_and_keep_their_fold_models(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.oof_scores import ensemble_out_of_fold

    small, _, members = setup
    with pytest.raises(typer.BadParameter, match="at least two"):
        ensemble_out_of_fold(small, tmp_path / "a", [(members["crf"], 1.0)])
    other = tmp_path / "other-key"
    shutil.copytree(members["svm"], other)
    index = read_oof(other).index
    write_index(other, setup=index["setup"], folds_total=2, fold_key=r"^\d", corpora="train.jsonl",
                entries=index["folds"], family="svm")
    with pytest.raises(typer.BadParameter, match="fold_key"):
        ensemble_out_of_fold(small, tmp_path / "b", [(members["crf"], 1.0), (other, 1.0)])
    no_model = tmp_path / "no-model"
    shutil.copytree(members["svm"], no_model)
    shutil.rmtree(no_model / "fold-1" / "model")
    with pytest.raises(typer.BadParameter, match="no fold model 1"):
        ensemble_out_of_fold(small, tmp_path / "c", [(members["crf"], 1.0), (no_model, 1.0)])
    fewer = small.model_copy(update={"deep": small.deep.model_copy(update={
        "training": small.deep.training.model_copy(update={"corpora": [_subset(small, tmp_path)]})})})
    with pytest.raises(typer.BadParameter, match="corpora changed"):
        ensemble_out_of_fold(fewer, tmp_path / "d", [(members["crf"], 1.0), (members["svm"], 1.0)])


def _subset(small, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """The same corpus file name with a document fewer (the members' held-out counts no longer match)."""
    from deid_core.corpus.jsonl import read_jsonl

    docs = list(read_jsonl(small.deep.training.corpora[0]))
    path = tmp_path / "sub" / "train.jsonl"
    path.parent.mkdir()
    write_jsonl(docs[1:], path)
    return path
