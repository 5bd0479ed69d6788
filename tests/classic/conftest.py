"""Tiny CRF and SVM model directories, trained in seconds on synthetic narratives (no ../shared needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.config import DeidConfig
from deid_core.corpus.document import Document
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.synthetic import generate_narratives

TEXTS = [
    "Patient seen by Dr. Smith on 12/03/2019 at Mercy Hospital.",
    "Aspirin 81 mg daily; BP 120/80. No rash.",
    "She called 555-123-4567 on Monday.",
    "",
]


def tiny_corpus(n: int = 40, seed: int = 5) -> list[Document]:
    """Synthetic narratives with PhysioNet-like ids ("<patient>-<note>"): 12 patients, so folds have members."""
    docs = [s.to_document() for s in generate_narratives(n, seed=seed)]
    for i, d in enumerate(docs):
        d.doc_id = f"{i % 12}-{i}"
    return docs


def small_config(cfg: DeidConfig, **classic: object) -> DeidConfig:
    deep = cfg.deep
    return cfg.model_copy(update={"deep": deep.model_copy(update={
        "classic": deep.classic.model_copy(update={
            "crf": deep.classic.crf.model_copy(update={"max_iterations": 30}), **classic}),
        "training": deep.training.model_copy(update={"surrogate_copies": 0, "vaers_docs": 0, "tuning_standoff": []}),
    })})


def train_dir(cfg: DeidConfig, artifact: DictionaryArtifact, family: str, out: Path,
              docs: list[Document] | None = None) -> Path:
    from deid_core.training.classic import train_classic

    docs = docs if docs is not None else tiny_corpus()
    train_classic(small_config(cfg), family, [("train.jsonl", d) for d in docs], [], out, artifact,
                  fold_sources=frozenset({"train.jsonl"}), say=lambda _m: None)
    return out


@pytest.fixture(scope="session")
def crf_dir(cfg: DeidConfig, artifact: DictionaryArtifact, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_dir(cfg, artifact, "crf", tmp_path_factory.mktemp("crf") / "model")


@pytest.fixture(scope="session")
def svm_dir(cfg: DeidConfig, artifact: DictionaryArtifact, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_dir(cfg, artifact, "svm", tmp_path_factory.mktemp("svm") / "model")
