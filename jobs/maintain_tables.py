"""Weekly upkeep of the Delta tables: properties, compaction, VACUUM.

    python -m jobs.maintain_tables --tables build/lakehouse [--no-optimize] [--no-vacuum]

Why: every nightly run adds small files (one per task and partition it
wrote), and every MERGE that updates rows leaves the old files behind for
time travel. Unkept, a table read for QA or publication opens thousands of
small files, and storage grows with every update. Once a week (the nightly
DAG's maintenance task, `maintenance.weekday` of conf/lakehouse.yaml) this
job, for every table of the lakehouse that exists:

1. sets the table properties of `tables.properties` where they differ
   (tables created by older releases get them too);
2. compacts small files (delta-spark's OPTIMIZE, bin-packing: files already
   near the target size are left alone, so the cost is what the week wrote).
   OPTIMIZE commits with ``dataChange = false``: a stream over bronze's
   change feed does not see the rewritten files as new rows;
3. VACUUMs files that no table version within `vacuum_retention_hours`
   needs. The retention is checked at load to cover the audit's time travel
   and the longest allowed stream lag; bronze, which the nightly stream
   reads, is additionally skipped (and said so) when the stream's checkpoint
   is further behind than the retention, since its next run would then find
   files deleted under it.

Rows never change: the job only rewrites files and removes unreferenced
ones. It prints one line per table (files and bytes before and after; never
content).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path

import typer
from pyspark.sql import SparkSession

from deid_core.config import ConfigError
from deid_core.lakehouse_settings import LakehouseSettings, load_lakehouse_settings
from jobs.run_log import job_run
from jobs.tables import Tables, exists

app = typer.Typer(add_completion=False, help=__doc__)


@dataclass(frozen=True)
class TableUpkeep:
    """What maintenance did to one table (counts only)."""

    table: str
    files_before: int
    bytes_before: int
    files_after: int
    bytes_after: int
    properties_set: tuple[str, ...]
    compacted_files_removed: int
    compacted_files_added: int
    vacuumed_files: int | None
    #: why VACUUM was skipped, or None
    vacuum_skipped: str | None = None

    def line(self) -> str:
        vac = (f"vacuum skipped ({self.vacuum_skipped})" if self.vacuum_skipped
               else "vacuum off" if self.vacuumed_files is None else f"vacuum deleted {self.vacuumed_files} files")
        props = f", properties set: {', '.join(self.properties_set)}" if self.properties_set else ""
        return (f"{self.table}: {self.files_before} files / {_mb(self.bytes_before)} -> {self.files_after} files / "
                f"{_mb(self.bytes_after)}; optimize -{self.compacted_files_removed} +{self.compacted_files_added}; "
                f"{vac}{props}")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def table_paths(tables: Tables) -> dict[str, str]:
    """Every table of the lakehouse by name (whether or not it exists yet)."""
    names = ("bronze", "silver", "quarantine", "published", "publish_log", "qa_sample_items", "qa_review_items",
             "qa_metrics", "job_runs")
    return {Path(getattr(tables, n)).name: getattr(tables, n) for n in names}


def _detail(spark: SparkSession, path: str) -> tuple[int, int, dict[str, str]]:
    from delta.tables import DeltaTable

    d = DeltaTable.forPath(spark, path).detail().select("numFiles", "sizeInBytes", "properties").first()
    return int(d["numFiles"] or 0), int(d["sizeInBytes"] or 0), dict(d["properties"] or {})


def set_properties(spark: SparkSession, path: str, wanted: dict[str, str]) -> tuple[str, ...]:
    """ALTER TABLE ... SET TBLPROPERTIES for the properties that differ; returns their names."""
    _, _, current = _detail(spark, path)
    changed = {k: v for k, v in wanted.items() if current.get(k) != v}
    if changed:
        props = ", ".join(f"'{k}' = '{v}'" for k, v in sorted(changed.items()))
        spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ({props})")
    return tuple(sorted(changed))


def compact(spark: SparkSession, path: str) -> tuple[int, int]:
    """OPTIMIZE (bin-packing); returns (files removed, files added)."""
    from delta.tables import DeltaTable

    metrics = DeltaTable.forPath(spark, path).optimize().executeCompaction().first()["metrics"]
    return int(metrics["numFilesRemoved"]), int(metrics["numFilesAdded"])


def vacuum(spark: SparkSession, path: str, retention_hours: float) -> int:
    """VACUUM with `retention_hours`; returns the number of files deleted (from the table's history)."""
    from delta.tables import DeltaTable

    # VACUUM START / END commits in the table's history: the audit trail of deletions, and the count
    spark.conf.set("spark.databricks.delta.vacuum.logging.enabled", "true")
    table = DeltaTable.forPath(spark, path)
    table.vacuum(retention_hours)
    last = table.history(1).first()
    if last is not None and last["operation"] == "VACUUM END":
        return int((last["operationMetrics"] or {}).get("numDeletedFiles", 0))
    return 0


def stream_position(checkpoint: Path) -> int | None:
    """The last bronze version the nightly stream committed (from its checkpoint), or None."""
    offsets, commits = checkpoint / "offsets", checkpoint / "commits"
    done = sorted((int(p.name) for p in commits.glob("[0-9]*") if p.name.isdigit()), reverse=True)
    for batch in done:
        f = offsets / str(batch)
        if not f.is_file():
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            if '"reservoirVersion"' in line:
                return int(json.loads(line)["reservoirVersion"])
    return None


def stream_lag_hours(spark: SparkSession, bronze: str, checkpoint: Path, now: datetime) -> float | None:
    """Hours since the oldest bronze commit the stream has not read yet (None: it is up to date or absent)."""
    from delta.tables import DeltaTable

    reached = stream_position(checkpoint)
    if reached is None:
        return None
    # the offset names the version the stream will read from next: versions at or after it are unread
    unread = (DeltaTable.forPath(spark, bronze).history().filter(f"version >= {reached}")
              .filter("operation NOT IN ('OPTIMIZE', 'VACUUM START', 'VACUUM END', 'SET TBLPROPERTIES')")
              .orderBy("version").first())
    if unread is None:
        return None
    ts = unread["timestamp"].replace(tzinfo=timezone.utc) if unread["timestamp"].tzinfo is None else unread["timestamp"]
    return (now - ts).total_seconds() / 3600


def maintain(spark: SparkSession, tables: Tables, settings: LakehouseSettings, *, optimize: bool = True,
             vacuum_files: bool = True, now: datetime | None = None) -> list[TableUpkeep]:
    """Properties, compaction and VACUUM of every existing table; rows are never changed."""
    m = settings.maintenance
    now = now or datetime.now(timezone.utc)
    out: list[TableUpkeep] = []
    for name, path in table_paths(tables).items():
        if not exists(spark, path):
            continue
        files0, bytes0, _ = _detail(spark, path)
        props = set_properties(spark, path, settings.tables.properties)
        removed = added = 0
        if optimize and m.optimize:
            removed, added = compact(spark, path)
        deleted: int | None = None
        skipped: str | None = None
        if vacuum_files:
            lag = stream_lag_hours(spark, path, Path(tables.checkpoint), now) if name == "bronze_reports" else None
            if lag is not None and lag >= m.vacuum_retention_hours:
                skipped = (f"the nightly stream has not read commits of {lag:.0f} h ago; "
                           f"retention is {m.vacuum_retention_hours} h")
            else:
                deleted = vacuum(spark, path, m.vacuum_retention_hours)
        files1, bytes1, _ = _detail(spark, path)
        out.append(TableUpkeep(name, files0, bytes0, files1, bytes1, props, removed, added, deleted, skipped))
    return out


@app.command()
def main(
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    config: Path = typer.Option(None, "--config", help="lakehouse settings (default: conf/lakehouse.yaml)"),
    optimize: bool = typer.Option(True, "--optimize/--no-optimize", help="compact small files"),
    vacuum_files: bool = typer.Option(True, "--vacuum/--no-vacuum", help="delete files older than the retention"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
    if_weekday_of: str = typer.Option(None, "--if-weekday-of", help="YYYY-MM-DD: run only if this date falls on "
                                      "maintenance.weekday (the nightly DAG passes its logical date)"),
) -> None:
    from jobs.spark_session import session_or_exit

    try:
        settings = load_lakehouse_settings(config)
        day = date.fromisoformat(if_weekday_of) if if_weekday_of else None
    except (ConfigError, ValueError) as exc:
        typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
        raise typer.Exit(2) from None
    if day is not None and day.weekday() != settings.maintenance.weekday_number:
        # decided before Spark starts: the other six nights cost a Python start, not a Spark session
        typer.echo(f"maintenance: not today ({day:%A}; it runs on {settings.maintenance.weekday})")
        return
    t0 = time.perf_counter()
    spark = session_or_exit("deid-maintain-tables", master=master)
    t = Tables(tables.resolve())
    with job_run(spark, t, job="maintain_tables", mode="weekly") as log:
        done = maintain(spark, t, settings, optimize=optimize, vacuum_files=vacuum_files)
        log.input_count = len(done)
        log.output_count = sum(u.files_after for u in done)
        log.detail.update(files_before=str(sum(u.files_before for u in done)),
                          files_deleted=str(sum(u.vacuumed_files or 0 for u in done)))
        for u in done:
            typer.echo(u.line())
        typer.echo(f"maintained {len(done)} tables in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    app()
