"""The maintenance job's weekday gate and its settings, without Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from deid_core.lakehouse_settings import LakehouseSettings, interval_hours, load_lakehouse_settings


def test_the_job_does_nothing_on_other_days_and_starts_no_spark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jobs.spark_session
    from jobs.maintain_tables import app

    def no_spark(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark started on a day without maintenance")

    monkeypatch.setattr(jobs.spark_session, "session_or_exit", no_spark)
    assert load_lakehouse_settings().maintenance.weekday == "sunday"
    out = CliRunner().invoke(app, ["--tables", str(tmp_path), "--if-weekday-of", "2026-11-26"])  # a Thursday
    assert out.exit_code == 0 and "not today (Thursday; it runs on sunday)" in out.output
    bad = CliRunner().invoke(app, ["--tables", str(tmp_path), "--if-weekday-of", "26/11/2026"])
    assert bad.exit_code == 2


def test_settings_check_intervals_and_retention() -> None:
    assert interval_hours("interval 30 days") == 720 and interval_hours("interval 2 weeks") == 336
    assert interval_hours("INTERVAL 12 hours") == 12
    with pytest.raises(ValueError):
        interval_hours("30 days")
    base = load_lakehouse_settings().model_dump()
    with pytest.raises(ValueError, match="deletedFileRetentionDuration"):
        LakehouseSettings.model_validate({**base, "tables": {**base["tables"], "properties": {
            "delta.deletedFileRetentionDuration": "interval 1 days"}}})
    with pytest.raises(ValueError, match="not a Delta table property"):
        LakehouseSettings.model_validate({**base, "tables": {**base["tables"], "properties": {"owner": "x"}}})
    with pytest.raises(ValueError, match="partition_chars"):
        LakehouseSettings.model_validate({**base, "work": {"piece_chars": 50_000, "partition_chars": 20_000}})
