"""A tiny, untrained model directory: exercises loading and inference plumbing fast."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from deid_core.config import DeidConfig
from deid_core.training.export import save_model
from deid_core.deep.model import build_network
from deid_core.deep.vocabulary import Vocabulary
from deid_core.deep.encoding import char_width
from deid_core.deep.features import arch_feature_names
from deid_core.dictionaries.artifact import DictionaryArtifact

TEXTS = [
    "Patient seen by Dr. Smith on 12/03/2019 at Mercy Hospital.",
    "Aspirin 81 mg daily; BP 120/80. No rash.",
    "She called 555-123-4567 on Monday.",
]


def tiny_arch(cfg: DeidConfig, **updates: object):  # type: ignore[no-untyped-def]
    arch = cfg.deep.architecture.model_copy(
        update={"char_embedding_dim": 4, "char_lstm_units": 3, "token_embedding_dim": 5, "token_lstm_units": 4,
                **updates}
    )
    return type(arch).model_validate(arch.model_dump())


def make_model_dir(cfg: DeidConfig, artifact: DictionaryArtifact, out: Path, **updates: object) -> Path:
    words = Counter("patient seen by dr on at hospital aspirin mg daily bp no rash she called".split())
    chars = Counter("".join(TEXTS))
    vocab = Vocabulary.from_counts(words, chars, min_count=1, max_size=100)
    arch = tiny_arch(cfg, **updates)
    seq = cfg.deep.sequence.model_copy(update={"window_tokens": 8, "overlap": 2})
    net = build_network(
        arch, n_words=vocab.n_words, n_chars=vocab.n_chars, char_width=char_width(arch),
        n_features=len(arch_feature_names(arch)),
        n_classes=len(cfg.deep.classes),
    )
    save_model(net, vocab, arch, seq, cfg.deep.classes, out,
               dictionary_version=artifact.version, dictionary_sha256=artifact.content_hash)
    return out


@pytest.fixture(scope="session")
def tiny_model_dir(cfg: DeidConfig, artifact: DictionaryArtifact, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_model_dir(cfg, artifact, tmp_path_factory.mktemp("tiny_model"))
