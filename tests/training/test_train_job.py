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
                update={"workdir": tmp_path / "work", "batch_size": 8, "spark_conf": {}}
            ),
        }
    )
    small = cfg.model_copy(update={"deep": deep})
    out = tmp_path / "model"
    m = train_model(small, config_file=None, out=out, corpora=[train_path], dev_path=dev_path, synthetic_docs=10,
                    max_epochs=1, target_recall=0.5)
    assert (out / "weights.weights.h5").exists() and (out / "precision_recall_dev.png").exists()
    assert m.model_version.startswith("model-") and m.training["epochs"] == 1
    assert [s.kind for s in m.training_data] == ["corpus", "synthetic"]
    assert m.training_data[0].documents == 30 and m.dictionary_version.startswith("dict-")
    assert m.thresholds is not None and m.thresholds.tuned_on == "dev.jsonl"
    # no word seen only inside PHI is in the vocabulary
    vocab = Vocabulary.from_json((out / "vocabulary.json").read_text())
    inside, outside = set(), set()
    for d in docs[:30]:
        for t in tokenize(d.text):
            hit = any(s.start < t.end and t.start < s.end for s in d.spans)
            (inside if hit else outside).add(normalise_word(t.lower))
    only_phi = inside - outside
    assert len(only_phi) > 20 and not only_phi & set(vocab.words)
    # fine-tuning keeps the vocabulary and records its base
    out2 = tmp_path / "site_model"
    m2 = train_model(small, config_file=None, out=out2, corpora=[site_path], dev_path=dev_path, synthetic_docs=0,
                     base_model=out, max_epochs=1, target_recall=0.5)
    assert m2.base_model == m.model_version
    assert m2.vocabulary_sha256 == m.vocabulary_sha256 and m2.model_version != m.model_version
    assert json.loads((out2 / "manifest.json").read_text())["training_data"][0]["name"] == "site.jsonl"
    assert ModelManifest.read(out2).architecture == m.architecture
