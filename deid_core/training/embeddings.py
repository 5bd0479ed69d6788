"""Pretrained word vectors in the GloVe / word2vec text formats.

Both are one word per line followed by its floats; word2vec text files start
with a "<count> <dim>" header line, GloVe files do not. Vectors initialise
the token embedding where a site supplies them; words not in the file keep
the random initialisation. Read line by line: files can be several GB.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deid_core.deep.vocabulary import Vocabulary, normalise_word


class EmbeddingFileError(ValueError):
    """The vectors file is malformed; names the line, never its content."""


def load_vectors(path: Path, vocabulary: Vocabulary, dim: int, *, seed: int = 0) -> tuple[np.ndarray, int]:
    """An embedding matrix for `vocabulary` and how many rows came from the file."""
    rng = np.random.default_rng(seed)
    matrix = rng.uniform(-0.05, 0.05, size=(vocabulary.n_words, dim)).astype(np.float32)
    matrix[0] = 0.0
    index = {w: i for i, w in enumerate(vocabulary.words)}
    found: set[int] = set()
    with path.open(encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                if int(parts[1]) != dim:
                    raise EmbeddingFileError(f"{path}: vectors have {parts[1]} dimensions, the model {dim}")
                continue
            if len(parts) < 2:
                continue
            if len(parts) - 1 != dim:
                raise EmbeddingFileError(f"{path}:{lineno}: expected {dim} values, found {len(parts) - 1}")
            i = index.get(normalise_word(parts[0].lower()))
            if i is None or i in found or i < 2:
                continue
            try:
                matrix[i] = np.asarray(parts[1:], dtype=np.float32)
            except ValueError as exc:
                raise EmbeddingFileError(f"{path}:{lineno}: not a number") from exc
            found.add(i)
    return matrix, len(found)
