"""Ingest E2B XML files into the bronze Delta table (one row per report version).

    python -m jobs.ingest_e2b --input DIR_OR_GLOB --tables build/lakehouse [--master local[*]]
    python -m jobs.ingest_e2b --table PATH [--table-format parquet|delta] [--xml-column xml]
                              [--id-column C] [--received-column C] --tables build/lakehouse

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

E2B documents may also arrive as a table (`--table`, `ingest_table`): a
Parquet or Delta table with one XML document per row, in a string or
binary column. Each row is an input like a file, named
``table:<abs path>#<id>`` by its id column, else by the first 16 hex digits
of its XML's SHA-256 (``#sha256:...``; a NULL document ``#null``), with
``~2``, ``~3``... for the second and later rows that share a name, so
that every row has an outcome record of its own and a rerun finds the same
names. The rows are parsed by the same parser (`udfs.parse_e2b.parse_documents`)
with the same codes (`E_EMPTY` for a NULL, empty or blank document,
`E_NOT_XML`, `E_PARSE`, `E_EMPTY` for E2B without a report), and from the
parsed rows on, files and table rows share one code path
(`_ingest_parsed`): the same dedupe, `E_DUPLICATE`/`E_REDUNDANT`, MERGE,
quarantine and accounting check. The table is counted, never collected, on
the driver; a Delta table is read at one version throughout the run.
"""

from __future__ import annotations

import heapq
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlparse

import typer
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deid_core.lakehouse import BRONZE, LANDED_FILES, PARSED, TABLE_DOCUMENTS
from jobs.landing import LandedFile, LandingError, list_landing
from jobs.run_log import JobRunLog, job_run
from jobs.tables import Tables, exists, merge, quarantine_rows
from udfs.parse_e2b import FILE, REPORT, parse_batches, parse_documents

app = typer.Typer(add_completion=False, help=__doc__)

#: the run log's name of this job (the nightly DAG's run report looks for it)
JOB = "ingest_e2b"

#: a report version whose identity another, different report in this ingest also claims
E_DUPLICATE = "E_DUPLICATE"
_DUPLICATE_REASON = "another report with this case id and version and different content was kept"
#: an exact copy of a report that was kept from another file (in this ingest or an earlier one)
E_REDUNDANT = "E_REDUNDANT"
_REDUNDANT_REASON = "an identical report (same case id, version and content) is kept from another file"


#: bytes of XML per parse task when a table is ingested (at least 2 x parallelism tasks)
TABLE_PARTITION_BYTES = 64 * 1024 * 1024
TABLE_FORMATS = ("parquet", "delta")


class AccountingError(RuntimeError):
    """A listed file (or table row) came back without an outcome (or with several): nothing is written."""


class TableSourceError(ValueError):
    """The document table cannot be read as configured (missing, a column missing or of another type): nothing read."""


@dataclass(frozen=True)
class TableSource:
    """A Parquet or Delta table of E2B documents, one per row (`ingest_table`)."""

    path: str
    #: "parquet" or "delta"; None: delta when the folder has a `_delta_log`, else parquet
    format: str | None = None
    #: the XML document: a string or binary column
    xml_column: str = "xml"
    #: names each row in its quarantine record (else the XML's hash does)
    id_column: str | None = None
    #: a received date for reports that carry none: date, timestamp, E2B digits or ISO date strings
    received_column: str | None = None


@dataclass(frozen=True)
class IngestStats:
    #: inputs: files listed, or rows of the document table
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
    parsed = balanced_files(spark, files_listed).mapInPandas(parse_batches, PARSED.schema)
    return _ingest_parsed(spark, parsed, len(files_listed), "files listed", tables, t0)


def table_format(path: str, given: str | None = None) -> str:
    """A table's format: `given`, else delta when the folder has a transaction log, else parquet."""
    if given is not None:
        if given not in TABLE_FORMATS:
            raise TableSourceError(f"unknown table format {given!r} (use parquet or delta)")
        return given
    if _is_local(path):
        return "delta" if (Path(_local(path)) / "_delta_log").is_dir() else "parquet"
    return "parquet"


def _is_local(path: str) -> bool:
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or len(scheme) == 1


def _local(path: str) -> str:
    return urlparse(path).path if urlparse(path).scheme == "file" else path


def table_name(path: str) -> str:
    """A table as the rows it yields name it: an absolute local path, or the URI as given."""
    return os.path.abspath(_local(path)) if _is_local(path) else path


def read_table(spark: SparkSession, path: str, given: str | None = None) -> DataFrame:
    """A Parquet or Delta table as one consistent snapshot (a Delta table at its current version).

    Raises TableSourceError when it is missing or cannot be read (named by
    type: a reader's message may quote data). Used by `jobs.deidentify_table` too.
    """
    fmt = table_format(path, given)
    name = table_name(path)
    if _is_local(path) and not os.path.exists(name):
        raise TableSourceError(f"table not found: {name}")
    try:
        if fmt == "delta":
            from delta.tables import DeltaTable

            if not DeltaTable.isDeltaTable(spark, name):
                raise TableSourceError(f"not a Delta table: {name}")
            version = DeltaTable.forPath(spark, name).history(1).select("version").first()[0]
            return spark.read.format("delta").option("versionAsOf", int(version)).load(name)
        return spark.read.parquet(name)
    except TableSourceError:
        raise
    except Exception as exc:  # noqa: BLE001 - named by type: a reader's message may quote data
        raise TableSourceError(f"cannot read {fmt} table {name} ({type(exc).__name__})") from None


def _column(df: DataFrame, name: str, role: str) -> T.DataType:
    fields = {f.name: f.dataType for f in df.schema.fields}
    if name not in fields:
        raise TableSourceError(f"{role} column {name!r} not in the table (columns: {', '.join(fields)})")
    return fields[name]


def _received(df: DataFrame, name: str) -> Column:
    """The received column as a string the parse UDF normalises (dates and timestamps as yyyyMMdd)."""
    kind = _column(df, name, "received")
    col = F.col(f"`{name}`")
    if isinstance(kind, (T.DateType, T.TimestampType, T.TimestampNTZType)):
        return F.date_format(col, "yyyyMMdd")
    if isinstance(kind, (T.StringType, T.ShortType, T.IntegerType, T.LongType)):
        return col.cast("string")
    raise TableSourceError(f"received column {name!r} is {kind.simpleString()}: use a date, timestamp, "
                           "string or integer column")


def table_documents(spark: SparkSession, source: TableSource) -> tuple[DataFrame, int]:
    """The table's rows as `TABLE_DOCUMENTS`, in partitions of similar XML bytes, and how many rows there are.

    Each row is named ``table:<path>#<id>`` (or ``#sha256:<16 hex>``,
    ``#null``), and ``~<n>`` for the n-th row of a name, n > 1, in the order
    of their hashes and received dates: the same rows get the same names on
    every run. The row count and total bytes come from one aggregation in
    Spark; the partition count follows the bytes (`TABLE_PARTITION_BYTES`
    per task, at least 2 x parallelism, at most one per row), and rows are spread by their name's
    hash, so that one task does not get all the large documents of a table
    written in size order.
    """
    df = read_table(spark, source.path, source.format)
    xml_type = _column(df, source.xml_column, "XML")
    if not isinstance(xml_type, (T.StringType, T.BinaryType)):
        raise TableSourceError(f"XML column {source.xml_column!r} is {xml_type.simpleString()}: "
                               "use a string or binary column")
    from_text = isinstance(xml_type, T.StringType)
    doc = F.col(f"`{source.xml_column}`").cast("binary")
    received = _received(df, source.received_column) if source.received_column else F.lit(None).cast("string")
    sha = F.sha2(F.col("document"), 256)
    if source.id_column:
        _column(df, source.id_column, "id")
        ident = F.col(f"`{source.id_column}`").cast("string")
    else:
        ident = F.lit(None).cast("string")
    docs = df.select(doc.alias("document"), received.alias("received_date"), ident.alias("_id"))
    docs = docs.withColumn("document_sha256", sha).withColumn("_base", F.coalesce(
        "_id", F.concat(F.lit("sha256:"), F.substring("document_sha256", 1, 16)), F.lit("null")))
    sizes = df.agg(F.count(F.lit(1)).alias("rows"),
                   F.coalesce(F.sum(F.length(doc)), F.lit(0)).alias("bytes")).first()
    rows, total = int(sizes["rows"]), int(sizes["bytes"])
    parallel = max(1, spark.sparkContext.defaultParallelism * 2)
    partitions = max(1, min(max(rows, 1), max(parallel, math.ceil(total / TABLE_PARTITION_BYTES))))
    # the window runs on the repartitioned rows: its clustering is the repartition's, no second shuffle
    w = Window.partitionBy("_base").orderBy(F.col("document_sha256").asc_nulls_first(),
                                            F.col("received_date").asc_nulls_first())
    prefix = f"table:{table_name(source.path)}#"
    named = docs.repartition(partitions, "_base").withColumn("_n", F.row_number().over(w))
    out = named.select(
        F.concat(F.lit(prefix), F.col("_base"),
                 F.when(F.col("_n") > 1, F.concat(F.lit("~"), F.col("_n").cast("string"))).otherwise(F.lit("")))
        .alias("source_file"),
        "document", "document_sha256", F.lit(from_text).alias("from_text"), "received_date",
    )
    return out.select(*TABLE_DOCUMENTS.names), rows


def ingest_table(spark: SparkSession, source: TableSource, tables: Tables) -> IngestStats:
    """Ingest every row of a table of E2B documents; raises TableSourceError when it cannot be read as configured."""
    t0 = time.perf_counter()
    docs, rows = table_documents(spark, source)
    parsed = docs.mapInPandas(parse_documents, PARSED.schema)
    return _ingest_parsed(spark, parsed, rows, "table rows", tables, t0)


def _ingest_parsed(spark: SparkSession, parsed: DataFrame, n_inputs: int, inputs: str, tables: Tables,
                   t0: float) -> IngestStats:
    """From the parse UDF's rows on, files and table rows alike: check, dedupe, MERGE into bronze, quarantine.

    `parsed` holds report rows and one outcome row (`row_kind` "file") per
    input; `n_inputs` is how many inputs there were (`inputs` names them in
    the accounting error).
    """
    parsed = parsed.persist()
    try:
        files = parsed.filter(F.col("row_kind") == FILE)
        outcomes = files.agg(F.count("*").alias("rows"), F.countDistinct("source_file").alias("files")).first()
        if not outcomes["rows"] == outcomes["files"] == n_inputs:
            raise AccountingError(f"{n_inputs} {inputs}, {outcomes['files']} came back with an outcome "
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
    return IngestStats(n_inputs, n_reports, n_bad, time.perf_counter() - t0)


@app.command()
def main(
    input: str = typer.Option(None, "--input", help="folder (searched recursively) or glob of E2B XML files"),
    table: str = typer.Option(None, "--table", help="a Parquet or Delta table of E2B documents, one per row "
                              "(instead of --input)"),
    table_format_: str = typer.Option(None, "--table-format",
                                      help="parquet | delta (default: delta if the table has a _delta_log)"),
    xml_column: str = typer.Option("xml", "--xml-column", help="--table: the XML column (string or binary)"),
    id_column: str = typer.Option(None, "--id-column", help="--table: a column naming each row in quarantine"),
    received_column: str = typer.Option(None, "--received-column",
                                        help="--table: the received date of reports that carry none"),
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
    missing_ok: bool = typer.Option(False, "--missing-ok",
                                    help="a missing input folder means nothing landed (a quiet night), not an error"),
) -> None:
    if (input is None) == (table is None):
        _usage_error("give exactly one of --input and --table")
    if table is not None:
        source = TableSource(table, table_format_, xml_column, id_column, received_column)
        if missing_ok and "://" not in table and not Path(table).exists():
            typer.echo(f"ingest: nothing landed ({table} does not exist)")
            return
        try:
            table_format(source.path, source.format)
        except TableSourceError as exc:
            _usage_error(str(exc))
        _run(master, tables, "table", "table rows", lambda spark, t: ingest_table(spark, source, t))
        return
    if any(o is not None for o in (table_format_, id_column, received_column)) or xml_column != "xml":
        _usage_error("--table-format, --xml-column, --id-column and --received-column need --table")
    if missing_ok and not any(c in input for c in "*?[") and "://" not in input and not Path(input).exists():
        typer.echo(f"ingest: nothing landed ({input} does not exist)")
        return
    try:
        listed = list_landing(input)
    except LandingError as exc:
        _usage_error(str(exc))
    _run(master, tables, "batch", "files", lambda spark, t: ingest(spark, input, t, listed))


def _usage_error(message: str) -> NoReturn:
    """A refused invocation: one line on stderr, exit status 2, nothing written."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _run(master: str, tables: Path, mode: str, inputs: str,
         step: Callable[[SparkSession, Tables], IngestStats]) -> None:
    """One logged ingest run of either source: Spark session, run-log row, one-line summary."""
    from jobs.spark_session import session_or_exit

    spark = session_or_exit("deid-ingest-e2b", master=master)
    t = Tables(tables.resolve())
    with job_run(spark, t, job=JOB, mode=mode) as log:
        try:
            stats = step(spark, t)
        except TableSourceError as exc:  # a table that turns out unreadable once Spark opens it
            _usage_error(str(exc))
        _log_stats(log, stats)
        typer.echo(f"ingest: {stats.files} {inputs}, {stats.reports} report versions, "
                   f"{stats.quarantined} quarantined, {stats.seconds:.1f}s -> {tables}")


def _log_stats(log: JobRunLog, stats: IngestStats) -> None:
    """The run log's counts: inputs (files or table rows) in, report versions out, quarantine rows."""
    log.input_count, log.output_count = stats.files, stats.reports
    log.add_duration("ingest", stats.seconds)
    log.detail["quarantined_rows"] = str(stats.quarantined)


if __name__ == "__main__":
    app()
