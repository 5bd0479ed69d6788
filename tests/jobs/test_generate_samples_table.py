"""``python -m jobs.generate_samples table``: one E2B document per row, bounded files, reproducible.

The scale run ingests this table with ``jobs.ingest_e2b --table``: every
row must hold exactly one report of either format with its received date,
the files must be bounded and the output the same for a seed whatever the
number of generator processes, and a folder is only ever replaced whole.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from deid_core.e2b import parse_reports
from jobs.generate_samples import TABLE_MANIFEST, app, table_format

runner = CliRunner()


def _run(*args: str) -> object:
    return runner.invoke(app, ["table", *args])


def _rows(folder: Path) -> list[dict[str, str]]:
    return pq.read_table(sorted(folder.glob("part-*.parquet"))).to_pylist() if folder.exists() else []


def test_one_report_per_row_mixed_formats_bounded_files(tmp_path: Path) -> None:
    out = tmp_path / "t"
    result = _run("--n", "60", "--seed", "3", "--out", str(out), "--rows-per-file", "25", "--row-group-rows", "10",
                  "--workers", "1", "--huge-every", "30", "--huge-length", "20000")
    assert result.exit_code == 0, result.output
    files = sorted(out.glob("part-*.parquet"))
    assert [f.name for f in files] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert [pq.ParquetFile(f).metadata.num_rows for f in files] == [25, 25, 10]
    assert [pq.ParquetFile(f).metadata.num_row_groups for f in files] == [3, 3, 1]
    assert pq.ParquetFile(files[0]).schema_arrow.names == ["doc_id", "xml", "received_date"]
    rows = _rows(out)
    formats: Counter[str] = Counter()
    longest = 0
    for index, row in enumerate(rows):
        [report] = parse_reports(row["xml"].encode("utf-8"))
        assert report.format == table_format(index)
        assert row["received_date"] == report.received_date and len(row["received_date"]) == 8
        formats[report.format] += 1
        longest = max(longest, len(report.text("narrative") or ""))
    assert len({r["doc_id"] for r in rows}) == 60
    assert formats["R3"] >= 25 and formats["R2"] >= 25
    assert 19_000 < longest <= 20_000  # the huge narrative of each block of 30
    manifest = json.loads((out / TABLE_MANIFEST).read_text())
    assert manifest["reports"] == 60 and manifest["follow_ups"] == 15 and manifest["long_narratives"] == 2
    assert manifest["row_groups"] == 7 and sum(f["rows"] for f in manifest["files"]) == 60
    assert "wrote 60 reports (45 cases, 15 follow-ups; R3=" in result.output
    assert not list(tmp_path.glob(".*"))  # no temporary folder left


def test_same_bytes_for_a_seed_with_any_number_of_workers(tmp_path: Path) -> None:
    args = ("--n", "30", "--seed", "8", "--rows-per-file", "20")
    assert _run(*args, "--out", str(tmp_path / "a"), "--workers", "1").exit_code == 0
    assert _run(*args, "--out", str(tmp_path / "b"), "--workers", "2").exit_code == 0
    names = sorted(p.name for p in (tmp_path / "a").glob("part-*"))
    assert names == ["part-00000.parquet", "part-00001.parquet"]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    first = _rows(tmp_path / "a")[:10]
    assert _run("--n", "10", "--seed", "8", "--out", str(tmp_path / "c"), "--workers", "1").exit_code == 0
    assert _rows(tmp_path / "c") == first  # the first k rows do not depend on n


def test_replaces_only_a_table_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "t"
    assert _run("--n", "4", "--out", str(out), "--workers", "1").exit_code == 0
    again = _run("--n", "6", "--out", str(out), "--workers", "1")
    assert again.exit_code == 1 and "exists" in again.output
    assert len(_rows(out)) == 4
    assert _run("--n", "6", "--out", str(out), "--workers", "1", "--overwrite").exit_code == 0
    assert len(_rows(out)) == 6
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("not a table")
    refused = _run("--n", "2", "--out", str(other), "--workers", "1", "--overwrite")
    # the console wraps the message at its width, where a long temporary path may break a line
    assert refused.exit_code == 1 and "not a table written by this command" in " ".join(refused.output.split())
    assert (other / "keep.txt").exists()


def test_zero_reports(tmp_path: Path) -> None:
    result = _run("--n", "0", "--out", str(tmp_path / "z"), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert not list((tmp_path / "z").glob("part-*")) and (tmp_path / "z" / TABLE_MANIFEST).exists()
