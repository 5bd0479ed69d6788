"""Ingest E2B XML files into the bronze Delta table (one row per report version).

    python -m jobs.ingest_e2b --input DIR_OR_GLOB --tables build/lakehouse [--master local[*]]

Files are listed by Spark (`binaryFile`, recursive, `*.xml`), parsed on the
executors (`udfs.parse_e2b`), and merged into bronze on (case id, version):
re-ingesting the same files changes nothing, a changed retransmission of a
report version replaces it. A file that cannot be read or parsed becomes one
quarantine row with its reason; nothing is dropped silently. Bronze keeps
the raw text (it is the restricted landing zone); only silver is shared.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import typer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.tables import BRONZE_KEY, Tables, latest_per_key, merge, quarantine_rows
from udfs.parse_e2b import OUTPUT_SCHEMA, parse_batches

app = typer.Typer(add_completion=False, help=__doc__)

#: a report version whose identity another, different report in this ingest also claims
E_DUPLICATE = "E_DUPLICATE"

_BRONZE_COLUMNS = ("case_id", "version", "format", "report_id", "received_date", "sender", "file_sha256",
                   "content_sha256", "source_file", "ingest_time", "text_fields", "structured_fields", "country")


@dataclass(frozen=True)
class IngestStats:
    files: int
    reports: int
    #: unreadable or unparsable files, plus conflicting duplicates of a report version
    quarantined: int
    seconds: float


def list_files(spark: SparkSession, source: str) -> DataFrame:
    """Paths only: Spark does not read a binaryFile's content unless it is selected."""
    return (
        spark.read.format("binaryFile")
        .option("pathGlobFilter", "*.xml")
        .option("recursiveFileLookup", "true")
        .load(source)
        .select("path")
    )


def ingest(spark: SparkSession, source: str, tables: Tables) -> IngestStats:
    t0 = time.perf_counter()
    paths = list_files(spark, source)
    n_files = paths.count()
    parts = max(1, min(n_files, spark.sparkContext.defaultParallelism * 2))
    parsed = paths.repartition(parts).mapInPandas(parse_batches, OUTPUT_SCHEMA).persist()
    try:
        all_reports = parsed.filter(F.col("error_code").isNull()).select(*_BRONZE_COLUMNS)
        # the same report version in two files: keep one, deterministically; a
        # different content under the same identity is quarantined, not dropped
        reports = latest_per_key(all_reports, BRONZE_KEY, ["source_file", "content_sha256"])
        merge(spark, reports, tables.bronze, BRONZE_KEY, changed=["content_sha256"], change_feed=True)
        kept = reports.select(*BRONZE_KEY, F.col("content_sha256").alias("_kept"))
        conflicts = all_reports.join(kept, list(BRONZE_KEY)).filter("content_sha256 <> _kept").select(
            F.lit("ingest").alias("stage"), "source_file", "case_id", "version", F.lit("").alias("field"),
            F.lit(E_DUPLICATE).alias("error_code"),
            F.lit("another report with this case id and version and different content was kept").alias("reason"),
            F.col("ingest_time").alias("recorded_at"),
        )
        bad = parsed.filter(F.col("error_code").isNotNull()).select(
            F.lit("ingest").alias("stage"), "source_file", F.lit("").alias("case_id"), F.lit("").alias("version"),
            F.lit("").alias("field"), "error_code", "reason", F.col("ingest_time").alias("recorded_at"),
        ).unionByName(conflicts)
        n_bad = bad.count()
        if n_bad:
            quarantine_rows(spark, bad, tables)
        n_reports = reports.count()
    finally:
        parsed.unpersist()
    return IngestStats(n_files, n_reports, n_bad, time.perf_counter() - t0)


@app.command()
def main(
    input: str = typer.Option(..., "--input", help="folder (searched recursively) or glob of E2B XML files"),
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
    missing_ok: bool = typer.Option(False, "--missing-ok",
                                    help="a missing input folder means nothing landed (a quiet night), not an error"),
) -> None:
    from jobs.spark_session import delta_session

    if missing_ok and not any(c in input for c in "*?[") and "://" not in input and not Path(input).exists():
        typer.echo(f"ingest: nothing landed ({input} does not exist)")
        return
    spark = delta_session("deid-ingest-e2b", master=master)
    stats = ingest(spark, input, Tables(tables.resolve()))
    typer.echo(f"ingest: {stats.files} files, {stats.reports} report versions, "
               f"{stats.quarantined} quarantined, {stats.seconds:.1f}s -> {tables}")


if __name__ == "__main__":
    app()
