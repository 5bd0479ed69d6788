"""The ingest UDF body, without Spark: one outcome row per file, reports streamed in bounded batches."""

from __future__ import annotations

import os
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch
from udfs import parse_e2b
from udfs.parse_e2b import FILE, REPORT, file_uri, parse_batches, parse_file

NOW = datetime(2026, 11, 26, tzinfo=timezone.utc)


def _outcome(path: Path, size: int | None = None) -> tuple[list[dict], dict]:
    rows = list(parse_file(file_uri(path), path.stat().st_size if size is None else size, NOW))
    assert [r["row_kind"] for r in rows[:-1]] == [REPORT] * (len(rows) - 1) and rows[-1]["row_kind"] == FILE
    return rows[:-1], rows[-1]


@pytest.mark.parametrize(("name", "content", "code"), [
    ("empty.xml", b"", "E_EMPTY"),
    ("blank.xml", b"  \r\n\t ", "E_EMPTY"),
    ("random.xml", bytes(range(256)) * 4, "E_NOT_XML"),
    ("letter.xml", b"Dear colleague, the patient Jane Roe ...", "E_NOT_XML"),
    ("other.xml", b"<?xml version='1.0'?><invoice><total>3</total></invoice>", "E_PARSE"),
    ("notes.txt", b"<ichicsr/>", "E_FILE_TYPE"),
    ("report", b"<ichicsr/>", "E_FILE_TYPE"),
    ("no-reports.xml", b"<ichicsr></ichicsr>", "E_EMPTY"),
])
def test_every_bad_file_has_one_outcome_with_a_code(tmp_path: Path, name: str, content: bytes, code: str) -> None:
    p = tmp_path / name
    p.write_bytes(content)
    reports, outcome = _outcome(p)
    assert reports == [] and outcome["error_code"] == code and outcome["reason"]
    assert "Jane" not in outcome["reason"] and "Roe" not in outcome["reason"]


def test_upper_case_extension_is_e2b_and_file_hash_is_the_files(tmp_path: Path) -> None:
    import hashlib

    p = tmp_path / "REPORT.XML"
    data = synthetic_r2_batch(3, 5) + b"\n\n   \n"
    p.write_bytes(data)
    reports, outcome = _outcome(p)
    assert len(reports) == 3 and outcome["error_code"] is None
    assert outcome["file_sha256"] == hashlib.sha256(data).hexdigest()


def test_unreadable_entries(tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.symlink_to(tmp_path / "nowhere")
    assert list(parse_file(file_uri(broken), None, NOW))[-1]["error_code"] == "E_READ"
    gone = tmp_path / "gone.xml"  # listed, then removed before it was read
    assert list(parse_file(file_uri(gone), 10, NOW))[-1]["error_code"] == "E_READ"


def test_a_file_malformed_half_way_streams_reports_then_fails_as_a_whole(tmp_path: Path) -> None:
    data = synthetic_r3_batch(6, 8)
    p = tmp_path / "truncated.xml"
    p.write_bytes(data[: int(len(data) * 0.7)])
    reports, outcome = _outcome(p)
    assert len(reports) >= 1  # emitted as parsed; the job drops them because the file failed
    assert outcome["error_code"] == "E_PARSE" and outcome["file_sha256"] is None


def test_batches_are_bounded_and_memory_does_not_hold_the_file(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "big.xml"
    p.write_bytes(synthetic_r2_batch(1500, 9))
    monkeypatch.setattr(parse_e2b, "BATCH_REPORTS", 100)
    frame = pd.DataFrame({"path": [file_uri(p)], "size": [p.stat().st_size]})
    tracemalloc.start()
    sizes = []
    n_reports = 0
    for out in parse_batches(iter([frame])):
        sizes.append(len(out))
        n_reports += int((out["row_kind"] == REPORT).sum())
        del out
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert n_reports == 1500 and max(sizes) <= 100 and len(sizes) >= 15
    # the whole file's reports as rows would take many times the file's size
    assert peak < os.path.getsize(p), (peak, os.path.getsize(p))


def test_a_fifo_swapped_in_after_listing_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "swapped.xml"
    os.mkfifo(fifo)
    (outcome,) = parse_file(file_uri(fifo), 100, NOW)  # the listing saw a regular file of 100 bytes
    assert outcome["error_code"] == "E_READ" and "NotARegularFile" in outcome["reason"]
