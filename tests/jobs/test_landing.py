"""The landing listing sees every file: hidden, empty, any name, broken links, through links, once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.landing import LandingError, list_landing
from udfs.parse_e2b import file_uri, local_path


def _names(files) -> dict[str, int | None]:  # type: ignore[no-untyped-def]
    return {str(local_path(f.uri)): f.size for f in files}


def test_every_entry_is_listed(tmp_path: Path) -> None:
    root = tmp_path / "landing"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.xml").write_bytes(b"<x/>")
    (root / "B.XML").write_bytes(b"<x/>")
    (root / "empty.xml").write_bytes(b"")
    (root / ".hidden.xml").write_bytes(b"<x/>")
    (root / "_SUCCESS").write_bytes(b"")
    (root / "notes.txt").write_bytes(b"hi")
    (root / "sub" / "deeper" / "c d é.xml").write_bytes(b"<x/>")
    (root / "broken.xml").symlink_to(tmp_path / "nowhere")
    os.mkfifo(root / "pipe.xml")
    got = _names(list_landing(str(root)))
    assert got == {
        str(root / "a.xml"): 4, str(root / "B.XML"): 4, str(root / "empty.xml"): 0, str(root / ".hidden.xml"): 4,
        str(root / "_SUCCESS"): 0, str(root / "notes.txt"): 2, str(root / "sub" / "deeper" / "c d é.xml"): 4,
        str(root / "broken.xml"): None, str(root / "pipe.xml"): None,
    }


def test_linked_folders_are_followed_once(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "r.xml").write_bytes(b"<x/>")
    (real / "loop").symlink_to(real)  # a cycle
    landing = tmp_path / "landing"
    landing.symlink_to(real)  # the nightly DAG links the date's folder
    got = list_landing(str(landing))
    assert [local_path(f.uri) for f in got] == [landing / "r.xml"]


def test_glob_and_single_file_and_missing_input(tmp_path: Path) -> None:
    for d in ("2026-11-25", "2026-11-26"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "r.xml").write_bytes(b"<x/>")
    assert len(list_landing(str(tmp_path / "2026-11-2*"))) == 2
    assert len(list_landing(str(tmp_path / "2026-11-26" / "r.xml"))) == 1
    assert len(list_landing(file_uri(tmp_path / "2026-11-26"))) == 1
    with pytest.raises(LandingError, match="not found"):
        list_landing(str(tmp_path / "2026-11-27"))
    with pytest.raises(LandingError, match="not supported"):
        list_landing("s3://bucket/landing")


def test_uris_are_spark_style_and_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "a b%c.xml"
    uri = file_uri(p)
    assert uri.startswith("file:/") and not uri.startswith("file://") and " " not in uri
    assert local_path(uri) == p
