"""A quiet night: the nightly DAG's landing folder for the date does not exist."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from jobs.ingest_e2b import app


def test_missing_landing_folder_is_nothing_landed_only_when_allowed(tmp_path: Path) -> None:
    missing = tmp_path / "landing" / "2026-11-26"
    ok = CliRunner().invoke(app, ["--input", str(missing), "--tables", str(tmp_path / "lake"), "--missing-ok"])
    assert ok.exit_code == 0 and "nothing landed" in ok.output
    assert not (tmp_path / "lake").exists()


def test_missing_input_without_missing_ok_is_one_line_and_exit_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["--input", str(tmp_path / "nowhere"), "--tables", str(tmp_path / "lake")])
    assert res.exit_code == 2 and res.output.strip().splitlines() == [f"error: input not found: {tmp_path / 'nowhere'}"]
    assert not (tmp_path / "lake").exists()
