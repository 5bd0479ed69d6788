"""Delta upkeep: partitioning and properties at creation, compaction and VACUUM keep every row,
the change-feed stream goes on after them, and VACUUM spares bronze while the stream lags."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deid_core.lakehouse_settings import LakehouseSettings, load_lakehouse_settings
from tests.spark.conftest import write_synthetic_e2b

pytestmark = pytest.mark.spark


def _rows(spark, path: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = spark.read.format("delta").load(path)
    return sorted(tuple(str(v) for v in r) for r in df.drop("processing_ms").collect())


def _no_retention(settings: LakehouseSettings) -> LakehouseSettings:
    """The settings with VACUUM retention 0: what VACUUM deletes after the real retention, now (tests only).

    Built without validation, which (rightly) refuses a retention under 7 days.
    """
    m = settings.maintenance.model_construct(**{**settings.maintenance.model_dump(), "vacuum_retention_hours": 0})
    return settings.model_construct(**{**dict(settings), "maintenance": m})


def test_bronze_is_partitioned_by_month_and_tables_get_their_properties(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from delta.tables import DeltaTable

    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    src = tmp_path / "in"
    write_synthetic_e2b(src, 6, seed=5)
    tables = Tables(tmp_path / "lake")
    ingest(spark, str(src), tables)
    d = DeltaTable.forPath(spark, tables.bronze).detail().first()
    assert d["partitionColumns"] == ["received_month"]
    wanted = load_lakehouse_settings().tables.properties
    assert wanted and all(d["properties"].get(k) == v for k, v in wanted.items())
    assert d["properties"].get("delta.enableChangeDataFeed") == "true"
    months = {r[0] for r in spark.read.format("delta").load(tables.bronze).select("received_month").collect()}
    assert months and all(m == "unknown" or (len(m) == 6 and m.isdigit()) for m in months)


def test_compaction_and_vacuum_keep_every_row_and_the_stream_goes_on(spark, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                   key_file: Path) -> None:
    from jobs.deidentify import prepare, run_stream
    from jobs.ingest_e2b import ingest
    from jobs.maintain_tables import maintain, set_properties
    from jobs.tables import Tables

    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    tables = Tables(tmp_path / "lake")
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file,
                  model_dir=None, ship_archives=False)
    # three nights: three ingests and three stream runs leave small files behind
    for night in range(3):
        src = tmp_path / f"night{night}"
        write_synthetic_e2b(src, 4, seed=100 + night)
        ingest(spark, str(src), tables)
        run_stream(spark, tables, ctx, None)
    # a table of an older release, without the configured properties
    spark.sql(f"ALTER TABLE delta.`{tables.silver}` UNSET TBLPROPERTIES ('delta.logRetentionDuration')")
    paths = (tables.bronze, tables.silver)
    before = {p: _rows(spark, p) for p in paths}
    settings = _no_retention(load_lakehouse_settings())
    done = {u.table: u for u in maintain(spark, tables, settings)}

    assert {"bronze_reports", "silver_fields"} <= set(done)
    for p in paths:
        assert _rows(spark, p) == before[p]
    bronze, silver = done["bronze_reports"], done["silver_fields"]
    assert bronze.compacted_files_removed > bronze.compacted_files_added
    assert bronze.files_after < bronze.files_before
    assert bronze.vacuumed_files and bronze.vacuumed_files > 0
    assert silver.properties_set == ("delta.logRetentionDuration",)
    assert set_properties(spark, tables.silver, settings.tables.properties) == ()
    assert "vacuum deleted" in bronze.line()

    # the stream resumes from its checkpoint: the compaction is not new data, the next night is
    n_silver = len(before[tables.silver])
    write_synthetic_e2b(tmp_path / "night3", 4, seed=200)
    ingest(spark, str(tmp_path / "night3"), tables)
    run_stream(spark, tables, ctx, None)
    after = _rows(spark, tables.silver)
    assert set(before[tables.silver]) < set(after) and len(after) > n_silver
    keys = [(r[0], r[1], r[2]) for r in after]
    assert len(keys) == len(set(keys))


def test_vacuum_spares_bronze_while_the_stream_lags_behind_the_retention(spark, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                      key_file: Path) -> None:
    from jobs.deidentify import prepare, run_stream
    from jobs.ingest_e2b import ingest
    from jobs.maintain_tables import maintain, stream_lag_hours
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file,
                  model_dir=None, ship_archives=False)
    write_synthetic_e2b(tmp_path / "a", 4, seed=300)
    ingest(spark, str(tmp_path / "a"), tables)
    run_stream(spark, tables, ctx, None)
    now = datetime.now(timezone.utc)
    assert stream_lag_hours(spark, tables.bronze, Path(tables.checkpoint), now) is None
    # a night the stream has not read yet, seen 40 days later (beyond the 30-day retention)
    write_synthetic_e2b(tmp_path / "b", 4, seed=301)
    ingest(spark, str(tmp_path / "b"), tables)
    later = now + timedelta(days=40)
    assert stream_lag_hours(spark, tables.bronze, Path(tables.checkpoint), later) >= 40 * 24 - 1
    settings = load_lakehouse_settings()
    done = {u.table: u for u in maintain(spark, tables, settings, optimize=False, now=later)}
    assert done["bronze_reports"].vacuumed_files is None and "stream" in (done["bronze_reports"].vacuum_skipped or "")
    assert done["silver_fields"].vacuumed_files == 0


def test_a_retention_shorter_than_the_audit_or_stream_window_is_refused() -> None:
    from deid_core.lakehouse_settings import LakehouseSettings

    base = load_lakehouse_settings().model_dump()
    for change in ({"vacuum_retention_hours": 100}, {"audit_time_travel_days": 60},
                   {"max_stream_lag_hours": 2000}):
        bad = {**base, "maintenance": {**base["maintenance"], **change}}
        with pytest.raises(ValueError):
            LakehouseSettings.model_validate(bad)
