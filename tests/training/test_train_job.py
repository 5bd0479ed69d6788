"""The training job end to end on a few synthetic documents (local Spark, tiny network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_core.corpus.jsonl import write_jsonl
from deid_core.deep.manifest import ModelManifest
from deid_core.deep.vocabulary import Vocabulary, normalise_word
from deid_core.text.tokenize import tokenize
from deid_core.synthetic import generate_narratives

pytestmark = pytest.mark.spark


def test_train_then_fine_tune(cfg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.train_model import train_model

    from tests.deep.conftest import tiny_arch

    docs = [n.to_document() for n in generate_narratives(60, seed=5)]
    train_path, dev_path, site_path = tmp_path / "train.jsonl", tmp_path / "dev.jsonl", tmp_path / "site.jsonl"
    write_jsonl(docs[:30], train_path)
    write_jsonl(docs[30:45], dev_path)
    write_jsonl(docs[45:], site_path)
    deep = cfg.deep.model_copy(
        update={
            "architecture": tiny_arch(cfg),
            "sequence": cfg.deep.sequence.model_copy(update={"window_tokens": 32, "overlap": 8}),
            "training": cfg.deep.training.model_copy(
                update={"workdir": tmp_path / "work", "batch_size": 8, "spark_conf": {}, "surrogate_copies": 0,
                        "vaers_docs": 0, "pretrained_vectors": None, "tuning_standoff": []}
            ),
        }
    )
    small = cfg.model_copy(update={"deep": deep})
    out = tmp_path / "model"
    m = train_model(small, config_file=None, out=out, corpora=[train_path], dev_path=dev_path, synthetic_docs=10,
                    max_epochs=1, target_recall=0.5)
    assert (out / "weights.weights.h5").exists() and (out / "precision_recall_dev.png").exists()
    assert m.model_version.startswith("model-") and m.training["epochs"] == 1
    # each epoch records the network's own dev F1 beside the hybrid score that selects the epoch
    history = m.training["history"]
    assert len(history["val_network_f1"]) == 1 and 0.0 <= history["val_network_f1"][0] <= 1.0
    assert len(history["val_hybrid_precision"]) == 1
    assert [s.kind for s in m.training_data] == ["corpus", "synthetic"]
    assert m.training_data[0].documents == 30 and m.dictionary_version.startswith("dict-")
    assert m.thresholds is not None and m.thresholds.tuned_on == "dev.jsonl"
    # no word seen only inside PHI is in the vocabulary
    vocab = Vocabulary.from_json((out / "vocabulary.json").read_text())
    inside, outside = set(), set()
    for d in docs[:30]:
        for t in tokenize(d.text):
            # ages under 90 are trained as SAFE (age_phi_min), so only other PHI counts here
            hit = any(s.start < t.end and t.start < s.end for s in d.spans if s.label != "AGE")
            (inside if hit else outside).add(normalise_word(t.lower))
    only_phi = inside - outside
    assert len(only_phi) > 20 and not only_phi & set(vocab.words)
    # fine-tuning keeps the vocabulary and records its base; out-of-fold scores join its threshold search
    from tests.training.oof_fixture import one_fold_oof

    from deid_core.deep.features import arch_feature_names

    oof = one_fold_oof(tmp_path / "oof", arch_feature_names(small.deep.architecture))
    out2 = tmp_path / "site_model"
    m2 = train_model(small, config_file=None, out=out2, corpora=[site_path], dev_path=dev_path, synthetic_docs=0,
                     base_model=out, max_epochs=1, target_recall=0.5, oof=oof)
    assert m2.thresholds is not None and m2.thresholds.tuned_on.startswith("dev.jsonl+oof(train.jsonl;1folds;")
    assert m2.base_model == m.model_version
    assert m2.vocabulary_sha256 == m.vocabulary_sha256 and m2.model_version != m.model_version
    assert json.loads((out2 / "manifest.json").read_text())["training_data"][0]["name"] == "site.jsonl"
    assert ModelManifest.read(out2).architecture == m.architecture


def test_pretrained_vectors_and_surrogate_copies(cfg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Frozen vectors reach the model, unseen vector words join the vocabulary, PHI words stay out of the trained part."""
    import numpy as np

    from deid_core.deep.predictor import DeepModel
    from jobs.train_model import train_model

    from tests.deep.conftest import tiny_arch

    docs = [n.to_document() for n in generate_narratives(40, seed=9)]
    train_path, dev_path = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    write_jsonl(docs[:25], train_path)
    write_jsonl(docs[25:], dev_path)
    rng = np.random.default_rng(0)
    vec_words = ["patient", "the", "received", "zebrafish", "quokka", "was"]
    lines = [f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=8)) for w in vec_words]
    (tmp_path / "vectors.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    deep = cfg.deep.model_copy(
        update={
            "architecture": tiny_arch(cfg),
            "sequence": cfg.deep.sequence.model_copy(update={"window_tokens": 32, "overlap": 8}),
            "training": cfg.deep.training.model_copy(
                update={"workdir": tmp_path / "work", "batch_size": 8, "spark_conf": {},
                        "pretrained_vectors": str(tmp_path / "vectors.txt"), "pretrained_extra_words": 10,
                        "surrogate_copies": 1, "vaers_docs": 0, "tuning_standoff": [],
                        # the weights kept are the mean of both epochs': frozen vectors must come through unchanged
                        "average_from_epoch": 1,
                        # and the rate falls along a cosine over both epochs' steps
                        "learning_rate_schedule": "cosine"}
            ),
        }
    )
    small = cfg.model_copy(update={"deep": deep})
    out = tmp_path / "model"
    m = train_model(small, config_file=None, out=out, corpora=[train_path], dev_path=dev_path, synthetic_docs=0,
                    max_epochs=2, target_recall=0.5)
    assert [s.kind for s in m.training_data] == ["corpus", "augmented"]
    history = m.training["history"]
    assert len(history["avg_val_network_f1"]) == 1 and 0.0 <= history["avg_val_network_f1"][0] <= 1.0
    assert m.training["best_epoch"] == len(history["loss"])
    assert m.training["learning_rate_schedule"] == "cosine"
    assert m.training_data[1].documents == 25
    arch = m.architecture
    assert arch.pretrained_dim == 8 and 0 < arch.trained_words < m.n_words
    vocab = Vocabulary.from_json((out / "vocabulary.json").read_text())
    # words of the vectors that training never saw come after the trained words
    assert {"zebrafish", "quokka"} <= set(vocab.words[arch.trained_words:])
    inside, outside = set(), set()
    for d in docs[:25]:
        for t in tokenize(d.text):
            # ages under 90 are trained as SAFE (age_phi_min), so only other PHI counts here
            hit = any(s.start < t.end and t.start < s.end for s in d.spans if s.label != "AGE")
            (inside if hit else outside).add(normalise_word(t.lower))
    leaked = (inside - outside) & set(vocab.words[: arch.trained_words])
    assert not leaked, sorted(leaked)
    # the frozen table holds the file's vectors, unchanged by training
    net = DeepModel.load(out, small).network
    table = net.sequence.get_layer("pretrained_embedding").get_weights()[0]
    row = vocab.words.index("quokka")
    np.testing.assert_allclose(table[row], np.asarray(lines[4].split()[1:], dtype=np.float32), atol=1e-4)
    assert not table[vocab.words.index("<unk>")].any()


def test_which_out_of_fold_scores_the_search_pools(cfg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import typer

    from jobs.train_model import _tuning_oof

    assert _tuning_oof(None, False, cfg) == cfg.deep.training.tuning_oof
    assert _tuning_oof(tmp_path, False, cfg) == tmp_path
    assert _tuning_oof(None, True, cfg) is None
    with pytest.raises(typer.BadParameter, match="exclude"):
        _tuning_oof(tmp_path, True, cfg)
