"""Every file in the landing folder ends in bronze or in quarantine with a reason, whatever it is.

Before, a 0-byte `.xml`, `report.XML`, hidden files and other names were
never listed and left no trace.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.spark.conftest import write_synthetic_e2b

pytestmark = pytest.mark.spark


def _landing(root: Path) -> dict[str, str | None]:
    """A hostile landing folder; file name -> expected quarantine code (None: its reports reach bronze)."""
    from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch

    write_synthetic_e2b(root, 4, seed=51)  # synthetic_000.xml (R3), synthetic_001.xml (R2)
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "UPPER.XML").write_bytes(synthetic_r2_batch(2, 56))
    (root / "copy-of-001.xml").write_bytes((root / "synthetic_001.xml").read_bytes())  # sent twice
    (root / ".hidden.xml").write_bytes(synthetic_r3_batch(1, 53))
    (root / "sub" / "deeper" / "nested report.xml").write_bytes(synthetic_r2_batch(1, 54))
    (root / "empty.xml").write_bytes(b"")
    (root / "blank.xml").write_bytes(b"\n   \n")
    (root / "random.xml").write_bytes(os.urandom(4096))
    whole = synthetic_r3_batch(3, 55)
    (root / "truncated.xml").write_bytes(whole[: len(whole) * 2 // 3])
    (root / "invoice.xml").write_bytes(b"<?xml version='1.0'?><invoice><total>3</total></invoice>")
    (root / "bomb.xml").write_bytes(
        b"<?xml version='1.0'?><!DOCTYPE lolz [<!ENTITY lol 'lol'>"
        + b"".join(b"<!ENTITY lol%d '%s'>" % (i, b"&lol%d;" % (i - 1) * 10 if i else b"&lol;" * 10) for i in range(9))
        + b"]><ichicsr><safetyreport>&lol8;</safetyreport></ichicsr>")
    (root / "notes.txt").write_bytes(b"Patient Jane Roe called.")
    (root / "README").write_bytes(b"no extension")
    (root / "dangling.xml").symlink_to(root / "nowhere")
    return {
        "synthetic_000.xml": None, "synthetic_001.xml": None, "UPPER.XML": None, ".hidden.xml": None,
        "sub/deeper/nested report.xml": None,
        "empty.xml": "E_EMPTY", "blank.xml": "E_EMPTY", "random.xml": "E_NOT_XML", "truncated.xml": "E_PARSE",
        "invoice.xml": "E_PARSE", "bomb.xml": "E_PARSE", "notes.txt": "E_FILE_TYPE", "README": "E_FILE_TYPE",
        "dangling.xml": "E_READ", "copy-of-001.xml": "E_REDUNDANT",
    }


def test_every_landed_file_is_accounted_for(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables
    from udfs.parse_e2b import local_path

    root = tmp_path / "landing"
    root.mkdir()
    expected = _landing(root)
    tables = Tables(tmp_path / "lake")
    stats = ingest(spark, str(root), tables)

    def outcomes() -> tuple[dict[str, int], dict[str, list[str]]]:
        bronze = spark.read.format("delta").load(tables.bronze).groupBy("source_file").count().collect()
        quarantine = spark.read.format("delta").load(tables.quarantine).filter("stage = 'ingest'").collect()
        rel = lambda uri: str(local_path(uri).relative_to(root))  # noqa: E731
        q: dict[str, list[str]] = {}
        for r in quarantine:
            q.setdefault(rel(r.source_file), []).append(r.error_code)
            assert r.reason and "Jane" not in r.reason
        return {rel(r.source_file): r["count"] for r in bronze}, q

    in_bronze, quarantined = outcomes()
    assert stats.files == len(expected)
    assert set(in_bronze) | set(quarantined) == set(expected)  # every file has a record
    assert not set(in_bronze) & set(quarantined)                # and only one
    assert {f: sorted(set(codes)) for f, codes in quarantined.items()} == {f: [c] for f, c in expected.items() if c}
    assert len(quarantined["copy-of-001.xml"]) == 2  # one row per redundant report
    assert in_bronze == {"synthetic_000.xml": 2, "synthetic_001.xml": 2, "UPPER.XML": 2, ".hidden.xml": 1,
                         "sub/deeper/nested report.xml": 1}
    assert stats.reports == 8 and stats.quarantined == 11

    # a rerun changes nothing
    versions = {p: len(list((tmp_path / "lake" / p / "_delta_log").glob("*.json")))
                for p in ("bronze_reports", "quarantine")}
    ingest(spark, str(root), tables)
    assert outcomes() == (in_bronze, quarantined)
    # a re-ingest of the same files commits nothing: rows that change nothing never reach MERGE
    for p in ("bronze_reports", "quarantine"):
        assert len(list((tmp_path / "lake" / p / "_delta_log").glob("*.json"))) == versions[p]


def test_a_file_resent_on_a_later_night_is_recorded_as_redundant(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    write_synthetic_e2b(tmp_path / "night1", 2, seed=61, files=1)
    ingest(spark, str(tmp_path / "night1"), tables)
    (tmp_path / "night2").mkdir()
    (tmp_path / "night2" / "resent.xml").write_bytes((tmp_path / "night1" / "synthetic_000.xml").read_bytes())
    stats = ingest(spark, str(tmp_path / "night2"), tables)
    q = spark.read.format("delta").load(tables.quarantine).collect()
    assert stats.quarantined == 2 and {(r.error_code, r.source_file.rsplit("/", 1)[-1]) for r in q} == {
        ("E_REDUNDANT", "resent.xml")}
    assert spark.read.format("delta").load(tables.bronze).count() == 2
