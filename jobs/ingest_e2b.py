"""Ingest E2B XML files into the bronze Delta table (one row per report version).

    python -m jobs.ingest_e2b --input DIR_OR_GLOB --tables build/lakehouse [--master local[*]]

Every file under the input is listed on the driver (`jobs.landing`: 0-byte
and hidden files and any name included), parsed on the executors
(`udfs.parse_e2b`), and its reports merged into bronze on (case id,
version): re-ingesting the same files changes nothing, a changed
retransmission of a report version replaces it. Each landed file ends with
a record: its reports in bronze, or one quarantine row with the reason
(`E_FILE_TYPE`, `E_READ`, `E_EMPTY`, `E_NOT_XML`, `E_PARSE`); the job
checks that every listed file came back with an outcome. Each report of a
readable file ends in bronze or has a quarantine row of its own:
`E_DUPLICATE` when another report with its identity but other content was
kept, `E_REDUNDANT` when an identical copy was kept from another file
(tonight's or an earlier night's). Bronze keeps the raw text (it is the
restricted landing zone); only silver is shared.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from pathlib import Path

import typer
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from deid_core.lakehouse import BRONZE, LANDED_FILES, PARSED
from jobs.landing import LandedFile, LandingError, list_landing
from jobs.tables import Tables, exists, merge, quarantine_rows
from udfs.parse_e2b import FILE, REPORT, parse_batches

app = typer.Typer(add_completion=False, help=__doc__)

#: a report version whose identity another, different report in this ingest also claims
E_DUPLICATE = "E_DUPLICATE"
_DUPLICATE_REASON = "another report with this case id and version and different content was kept"
#: an exact copy of a report that was kept from another file (in this ingest or an earlier one)
E_REDUNDANT = "E_REDUNDANT"
_REDUNDANT_REASON = "an identical report (same case id, version and content) is kept from another file"


class AccountingError(RuntimeError):
    """A listed file came back without an outcome (or with several): nothing is written."""


@dataclass(frozen=True)
class IngestStats:
    files: int
    reports: int
    #: quarantined files plus conflicting duplicates of a report version
    quarantined: int
    seconds: float


def balanced_files(spark: SparkSession, files: list[LandedFile]) -> DataFrame:
    """The files as (path, size) rows, in partitions of about equal bytes.

    Parsing time follows a file's size, and batch files range from a few
    kilobytes to gigabytes: a round-robin split by count can put the three
    largest files in one task while the other cores idle. Files are dealt
    largest first, each to the lightest of at most 4 x parallelism groups,
    and each group is one partition.
    """
    groups = max(1, min(len(files), spark.sparkContext.defaultParallelism * 4))
    heap = [(0, i) for i in range(groups)]
    bins: list[list[tuple[str, int | None]]] = [[] for _ in range(groups)]
    for f in sorted(files, key=lambda f: (-(f.size or 0), f.uri)):
        load, i = heapq.heappop(heap)
        bins[i].append((f.uri, f.size))
        heapq.heappush(heap, (load + max(1, f.size or 0), i))
    rdd = spark.sparkContext.parallelize(bins, groups).flatMap(lambda b: b)
    return spark.createDataFrame(rdd, LANDED_FILES.schema)


def ingest(spark: SparkSession, source: str, tables: Tables, listed: list[LandedFile] | None = None) -> IngestStats:
    """Ingest every file under `source` (or the files `listed` from it); raises LandingError when it cannot be listed."""
    t0 = time.perf_counter()
    files_listed = list_landing(source) if listed is None else listed
    n_files = len(files_listed)
    parsed = balanced_files(spark, files_listed).mapInPandas(parse_batches, PARSED.schema).persist()
    try:
        files = parsed.filter(F.col("row_kind") == FILE)
        outcomes = files.agg(F.count("*").alias("rows"), F.countDistinct("source_file").alias("files")).first()
        if not outcomes["rows"] == outcomes["files"] == n_files:
            raise AccountingError(f"{n_files} files listed, {outcomes['files']} came back with an outcome "
                                  f"({outcomes['rows']} outcome rows)")
        # reports of a file that failed half-way are dropped with it: the file is quarantined whole
        # (one small row per file: broadcast, so the reports are not shuffled for the join)
        clean = files.filter(F.col("error_code").isNull()).select("source_file", "file_sha256")
        all_reports = (parsed.filter(F.col("row_kind") == REPORT).drop("file_sha256")
                       .join(F.broadcast(clean), "source_file").select(*BRONZE.names))
        # the same report version more than once (in two files, or twice in one): keep
        # one, deterministically; every other copy gets a record of its own: a
        # different content under the same identity is a conflict (E_DUPLICATE),
        # the same content is redundant (E_REDUNDANT)
        # (ranked twice with the same order: on the ids alone for the records, on the
        # whole rows once, inside the MERGE, so that no copy of the texts is cached)
        w = Window.partitionBy(*BRONZE.key).orderBy(F.col("source_file").desc(), F.col("content_sha256").desc())
        ids = all_reports.select(*BRONZE.key, "source_file", "content_sha256", "ingest_time")
        ranked = ids.withColumn("_rank", F.row_number().over(w)).withColumn(
            "_kept_sha", F.first("content_sha256").over(w)).persist()
        reports = all_reports.withColumn("_rank", F.row_number().over(w)).filter("_rank = 1").drop("_rank")
        copies = ranked.filter("_rank > 1").select(
            "source_file", "case_id", "version", "ingest_time",
            F.when(F.col("content_sha256") == F.col("_kept_sha"), F.lit(E_REDUNDANT))
            .otherwise(F.lit(E_DUPLICATE)).alias("error_code"))
        if exists(spark, tables.bronze):
            # a retransmission, under another file name, of a report bronze already holds as it is
            stored = spark.read.format("delta").load(tables.bronze).select(
                *BRONZE.key, F.col("source_file").alias("_stored_file"), F.col("content_sha256").alias("_stored_sha"))
            copies = copies.unionByName(
                ranked.filter("_rank = 1").join(stored, list(BRONZE.key))
                .filter("_stored_sha = content_sha256 AND _stored_file <> source_file")
                .select("source_file", "case_id", "version", "ingest_time", F.lit(E_REDUNDANT).alias("error_code")))
        # the copies are judged against bronze as it was before this ingest
        copies = copies.persist()
        copies.count()
        merge(spark, reports, tables.bronze, BRONZE.key, changed=["content_sha256"], change_feed=True)
        conflicts = copies.select(
            F.lit("ingest").alias("stage"), "source_file", "case_id", "version", F.lit("").alias("field"),
            "error_code",
            F.when(F.col("error_code") == E_DUPLICATE, F.lit(_DUPLICATE_REASON))
            .otherwise(F.lit(_REDUNDANT_REASON)).alias("reason"),
            F.col("ingest_time").alias("recorded_at"),
        )
        bad = files.filter(F.col("error_code").isNotNull()).select(
            F.lit("ingest").alias("stage"), "source_file", F.lit("").alias("case_id"), F.lit("").alias("version"),
            F.lit("").alias("field"), "error_code", "reason", F.col("ingest_time").alias("recorded_at"),
        ).unionByName(conflicts)
        n_bad = bad.count()
        if n_bad:
            quarantine_rows(spark, bad, tables)
        n_reports = ranked.filter("_rank = 1").count()
        copies.unpersist()
        ranked.unpersist()
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
    from jobs.spark_session import session_or_exit

    if missing_ok and not any(c in input for c in "*?[") and "://" not in input and not Path(input).exists():
        typer.echo(f"ingest: nothing landed ({input} does not exist)")
        return
    try:
        listed = list_landing(input)
    except LandingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    spark = session_or_exit("deid-ingest-e2b", master=master)
    stats = ingest(spark, input, Tables(tables.resolve()), listed)
    typer.echo(f"ingest: {stats.files} files, {stats.reports} report versions, "
               f"{stats.quarantined} quarantined, {stats.seconds:.1f}s -> {tables}")


if __name__ == "__main__":
    app()
