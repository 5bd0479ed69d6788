"""De-identify a generic narrative table into a Delta table of the same shape, with lineage.

    python -m jobs.deidentify_table --source PATH [--source-format parquet|delta] --target PATH
        --key COL [--key COL ...] --text COL [--text COL ...] [--case COL]
        [--structured COL=LABEL ...] [--pass COL ...] [--tables build/lakehouse]
        [--policy P] [--method hybrid|deep|rules] [--key-file F] [--config C] [--model M]
        [--master local[*]] [--device cpu|gpu|auto]

Why: not every narrative arrives as an E2B report. Call-centre notes, case
comments or an older safety database export come as a plain table: a key,
free-text columns and a few structured identifying columns. This job runs
them through the same pipeline as the E2B path (`jobs.deidentify`'s
`plan_job`, `ship` and `deidentify_fields`, the one de-identification UDF)
and writes a table a downstream consumer can read in place of the source.

Every source column must be declared, so that nothing with PHI can pass
through by accident (fail closed): `--key` (one or more, the MERGE key,
kept as is), `--text` (free text, de-identified), `--structured COL=LABEL`
(one value of a category of `deid_core.categories.CATEGORIES`, replaced as
that category), `--case` (kept as is; dates shift and surrogates are keyed
by it, so a patient's rows agree; without it each row is its own case,
keyed by its key) and `--pass` (passed through unchanged: the operator
vouches that it holds no PHI). An undeclared column is refused (exit 2).
Text and structured columns must be strings.

The target has the source's columns in the source's order, text and
structured columns replaced by their de-identified values (NULL stays
NULL), then the lineage columns of `deid_core.lakehouse.NARRATIVE_LINEAGE`:
model, dictionary and policy versions, `deid_status` ('ok' | 'failed'),
`deid_error_code` and `deid_input_sha256`, the hash of everything that
decides the row's output (its case, its text, structured and passed
values, and the column declarations). It is written by MERGE on the key.
A row whose hash and versions equal the target's (status ok) is skipped
before the UDF, so a rerun over an unchanged source runs no network and
writes nothing; a changed row is processed and updated.

Where each source row ends (exactly one place; tested):

* in the target, status 'ok': de-identified;
* in the target, status 'failed', and in quarantine: a field of it could
  not be de-identified (`E_LOAD`, `E_CHUNK`, `E_DETECT`, `E_REPLACE` of
  `udfs.deidentify_fields`): every text and structured column of the row
  is fully masked (a failed field taints its row), and each failed field
  has a quarantine row (field = ``text:<column>`` or ``structured:<column>``);
  a failure never replaces a target row that succeeded on the same input
  under the same versions;
* in quarantine only (`E_KEY`), never written: a NULL in a key column, or a
  key that several source rows share (which one is right cannot be told;
  the target keeps what it had for that key). Quarantine's `case_id` is the
  key as a JSON array of strings, `version` the row's rank among the rows
  that share the key.

Quarantine rows (stage ``deidentify_table``, `source_file` the source
table's path) carry codes and key strings, never text. Rows deleted from
the source are not deleted from the target.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import typer
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from deid_core.categories import CATEGORIES
from deid_core.lakehouse import FIELD_ROWS, KIND_STRUCTURED, KIND_TEXT, NARRATIVE_LINEAGE, field_key
from jobs.deidentify import JobConfigError, JobContext, deidentify_fields, device_for, plan_job, ship
from jobs.ingest_e2b import TableSourceError, read_table, table_name
from jobs.run_log import job_run
from jobs.tables import Tables, exists, merge, quarantine_rows
from udfs.deidentify_fields import mask_columns

app = typer.Typer(add_completion=False, help=__doc__)

STAGE = "deidentify_table"
#: a NULL key column, or a key several source rows share: quarantined, never written
E_KEY = "E_KEY"
_NULL_KEY_REASON = "a key column is NULL"
_DUPLICATE_KEY_REASON = "several source rows share this key"
_FAILED_REASON = "the field could not be de-identified; the row is fully masked in the target"
#: the job's own working columns all start so (a source column that does is refused)
_WORK_PREFIX = "__deid_"
_KEY, _CASE, _SHA, _MAP, _N = "__deid_key", "__deid_case", "__deid_sha", "__deid_fields", "__deid_n"
_STATUS_OK, _STATUS_FAILED = "ok", "failed"


class TableSpecError(ValueError):
    """The declared columns do not fit the source table (exit 2, nothing read or written)."""


class AccountingError(RuntimeError):
    """A field sent to the UDF did not come back exactly once: nothing is written."""


@dataclass(frozen=True)
class NarrativeTable:
    """A source table and what each of its columns is."""

    path: str
    keys: tuple[str, ...]
    texts: tuple[str, ...]
    #: (column, category label)
    structured: tuple[tuple[str, str], ...] = ()
    case: str | None = None
    passed: tuple[str, ...] = ()
    #: "parquet" | "delta"; None: delta when the folder has a `_delta_log`
    format: str | None = None

    @property
    def declared(self) -> tuple[str, ...]:
        """The columns that are de-identified: texts, then structured ones."""
        return (*self.texts, *(c for c, _ in self.structured))

    def field(self, column: str) -> str:
        """The field key of a declared column: ``text:<column>`` or ``structured:<column>``."""
        return field_key(KIND_TEXT if column in self.texts else KIND_STRUCTURED, column)


@dataclass(frozen=True)
class TableStats:
    rows: int
    #: NULL or shared keys: quarantined, not written
    bad_keys: int
    #: unchanged since the last run under the same versions: not processed
    skipped: int
    processed: int
    #: processed rows with a failed field: fully masked in the target and quarantined
    failed: int
    seconds: float


def parse_structured(items: list[str]) -> tuple[tuple[str, str], ...]:
    """`COL=LABEL` declarations; TableSpecError for a malformed one or a label that is no category."""
    out: list[tuple[str, str]] = []
    for item in items:
        column, sep, label = item.rpartition("=")
        if not sep or not column or not label:
            raise TableSpecError(f"--structured {item!r}: use COLUMN=LABEL")
        if label not in CATEGORIES:
            raise TableSpecError(f"--structured {column!r}: unknown category {label!r} "
                                 f"(use one of: {', '.join(CATEGORIES)})")
        out.append((column, label))
    return tuple(out)


def check_columns(columns: list[tuple[str, str]], spec: NarrativeTable) -> None:
    """Every column of the source (name, Spark simple type) has exactly one role; TableSpecError otherwise.

    The case column may also be a key column; no other column may have two
    roles. Text and structured columns must be strings; the lineage columns'
    and the job's working columns' names are taken.
    """
    types = dict(columns)
    if not spec.keys:
        raise TableSpecError("give at least one --key column")
    if not spec.texts:
        raise TableSpecError("give at least one --text column")
    roles: dict[str, list[str]] = {}
    for role, names in (("key", spec.keys), ("text", spec.texts), ("structured", [c for c, _ in spec.structured]),
                        ("pass", spec.passed)):
        for name in names:
            roles.setdefault(name, []).append(role)
    if spec.case is not None and "key" not in roles.get(spec.case, []):
        roles.setdefault(spec.case, []).append("case")
    for name, given in roles.items():
        if len(given) > 1:
            raise TableSpecError(f"column {name!r} is declared more than once ({', '.join(given)})")
        if name not in types:
            raise TableSpecError(f"{given[0]} column {name!r} is not in the source table")
    for name in spec.declared:
        if types[name] != "string":
            raise TableSpecError(f"column {name!r} is {types[name]}: text and structured columns must be strings")
    clash = [name for name in types if name in NARRATIVE_LINEAGE.names or name.startswith(_WORK_PREFIX)]
    if clash:
        raise TableSpecError(f"source columns {clash} have names the job writes itself")
    undeclared = [name for name in types if name not in roles]
    if undeclared:
        raise TableSpecError(f"undeclared columns {undeclared}: declare each as --key, --text, --structured, "
                             "--case or --pass (an undeclared column could hold PHI)")


def _c(name: str) -> Column:
    return F.col(f"`{name}`")


def _key_string(keys: tuple[str, ...]) -> Column:
    """The key as a JSON array of strings (`[null,"7"]`): a stable, unambiguous name for a row."""
    return F.to_json(F.array(*[_c(k).cast("string") for k in keys]))


def _input_sha(spec: NarrativeTable, columns: list[str]) -> Column:
    """SHA-256 of what decides a row's output: the declarations, its case and every non-key column's value."""
    roles = json.dumps({"texts": spec.texts, "structured": spec.structured, "passed": spec.passed,
                        "case": spec.case}, sort_keys=True)
    values = [c for c in columns if c not in spec.keys]
    return F.sha2(F.concat_ws("\u001f", F.lit(roles), F.col(_CASE),
                              F.to_json(F.struct(*[_c(c) for c in values]))), 256)


def _fields(spec: NarrativeTable, rows: DataFrame) -> DataFrame:
    """One `FIELD_ROWS` row per non-NULL declared value; `case_id` the row's case, `version` its key string."""
    labels = dict(spec.structured)
    entries = [F.struct(F.lit(spec.field(c)).alias("field"),
                        F.lit(KIND_STRUCTURED if c in labels else KIND_TEXT).alias("kind"),
                        F.lit(labels.get(c)).cast("string").alias("label"), _c(c).alias("text"))
               for c in spec.declared]
    exploded = rows.select(_CASE, _KEY, F.explode(F.array(*entries)).alias("f")).filter(F.col("f.text").isNotNull())
    out = exploded.select(F.col(_CASE).alias("case_id"), F.col(_KEY).alias("version"), "f.field", "f.kind",
                          "f.label", "f.text")
    return out.withColumn("input_sha256", F.sha2(F.concat_ws(
        "\u001f", "kind", F.coalesce("label", F.lit("")), F.coalesce("text", F.lit(""))), 256)).select(
        *FIELD_ROWS.names)


def _unchanged(spark: SparkSession, spec: NarrativeTable, target: str, versions: dict[str, str]) -> DataFrame | None:
    """(key string, input hash) of the target's rows that succeeded under these versions, or None."""
    if not exists(spark, target):
        return None
    t = spark.read.format("delta").load(target)
    same = ((F.col("deid_status") == _STATUS_OK)
            & F.col("deid_model_version").eqNullSafe(F.lit(versions.get("model")))
            & F.col("deid_dictionary_version").eqNullSafe(F.lit(versions.get("dictionary")))
            & F.col("deid_policy_version").eqNullSafe(F.lit(versions.get("policy"))))
    return t.filter(same).select(_key_string(spec.keys).alias(_KEY), F.col("deid_input_sha256").alias(_SHA))


def _keep_good() -> str:
    """MERGE's `keep_target_when`: a failure never replaces a row that succeeded on the same input and versions."""
    same = " AND ".join(f"t.`{c}` <=> s.`{c}`" for c in ("deid_model_version", "deid_dictionary_version",
                                                         "deid_policy_version", "deid_input_sha256"))
    return f"s.deid_status = '{_STATUS_FAILED}' AND t.deid_status = '{_STATUS_OK}' AND {same}"


def _rows_out(spec: NarrativeTable, columns: list[str], todo: DataFrame, out: DataFrame,
              versions: dict[str, str]) -> DataFrame:
    """The target rows of the processed source rows, with lineage and `__deid_lost` (a field did not come back once).

    A row with a failed field is fully masked in every declared column; its
    error code is that of its first failed column, in the source's order.
    """
    per_row = out.groupBy(F.col("version").alias(_KEY)).agg(
        F.map_from_entries(F.collect_list(F.struct("field", F.struct("text_deid", "status", "error_code"))))
        .alias(_MAP),
        F.count(F.lit(1)).alias(_N),
        F.first("model_version", ignorenulls=True).alias("__deid_model"),
        F.first("dictionary_version", ignorenulls=True).alias("__deid_dictionary"),
        F.first("policy_version", ignorenulls=True).alias("__deid_policy"))
    rows = todo.join(per_row, _KEY, "left")

    def part(column: str, name: str) -> Column:
        return F.col(_MAP).getItem(spec.field(column)).getField(name)

    declared = [c for c in columns if c in spec.declared]
    expected = sum((F.when(_c(c).isNotNull(), 1).otherwise(0) for c in declared), F.lit(0))
    failed = F.lit(False)
    for c in declared:
        failed = failed | F.coalesce(part(c, "status") == _STATUS_FAILED, F.lit(False))
    code = F.coalesce(*[F.when(part(c, "status") == _STATUS_FAILED, part(c, "error_code")) for c in declared],
                      F.lit(None).cast("string"))
    labels = dict(spec.structured)
    lineage = [
        F.coalesce("__deid_model", F.lit(versions.get("model"))).alias("deid_model_version"),
        F.coalesce("__deid_dictionary", F.lit(versions.get("dictionary"))).alias("deid_dictionary_version"),
        F.coalesce("__deid_policy", F.lit(versions.get("policy"))).alias("deid_policy_version"),
        F.when(F.col("__deid_failed"), F.lit(_STATUS_FAILED)).otherwise(F.lit(_STATUS_OK)).alias("deid_status"),
        F.when(F.col("__deid_failed"), code).alias("deid_error_code"),
        F.col(_SHA).alias("deid_input_sha256"),
    ]
    rows = (rows.withColumn("__deid_failed", failed)
            .withColumn("__deid_lost", F.coalesce(F.col(_N), F.lit(0)) != expected))
    good = rows.filter(~F.col("__deid_failed")).select(
        *[(part(c, "text_deid") if c in spec.declared else _c(c)).alias(c) for c in columns],
        *lineage, "__deid_lost")
    # a failed row: every declared column masked from its source value by the UDFs' own fail-closed
    # form (`udfs.deidentify_fields.fully_masked`), only these rows passing through Python; the
    # branches read `out` and `todo`, which the caller persisted, so the network never runs twice
    # (only the key and the declared string columns go through Python: a passed column of any type
    # never makes the round trip through pandas; a row is never lost, a missing value stays NULL)
    failed_rows = rows.filter(F.col("__deid_failed"))
    kinds = {c: (KIND_STRUCTURED, labels[c]) if c in labels else (KIND_TEXT, None) for c in declared}
    narrow = failed_rows.select(_KEY, *[_c(c) for c in declared])
    masked = narrow.mapInPandas(mask_columns(kinds), narrow.schema)
    bad = failed_rows.drop(*declared).join(masked, _KEY, "left").select(
        *[_c(c) for c in columns], *lineage, "__deid_lost")
    return good.unionByName(bad)


def deidentify_table(spark: SparkSession, spec: NarrativeTable, target: str, tables: Tables, ctx: JobContext,
                     partitions: int | None = None) -> TableStats:
    """De-identify the source table into `target` (MERGE on the key); failures and bad keys into quarantine.

    Raises TableSourceError or TableSpecError, before anything is written,
    when the source cannot be read or its columns do not fit `spec`.
    """
    t0 = time.perf_counter()
    source_name = table_name(spec.path)
    target_name = table_name(target)
    if target_name == source_name:
        raise TableSpecError("the target must not be the source table")
    src = read_table(spark, spec.path, spec.format)
    check_columns([(f.name, f.dataType.simpleString()) for f in src.schema.fields], spec)
    if Path(target_name).exists() and not exists(spark, target_name):
        raise TableSpecError(f"target {target_name} exists and is not a Delta table")
    columns = src.columns
    versions = dict(ctx.spec.versions)
    partitions = partitions or max(1, spark.sparkContext.defaultParallelism * 2)

    keyed = src.withColumn(_KEY, _key_string(spec.keys)).withColumn(
        _CASE, _c(spec.case).cast("string") if spec.case else F.col(_KEY))
    keyed = keyed.withColumn(_SHA, _input_sha(spec, columns))
    by_key = Window.partitionBy(_KEY)
    null_key = F.lit(False)
    for k in spec.keys:
        null_key = null_key | _c(k).isNull()
    keyed = keyed.withColumn("__deid_null_key", null_key).withColumn(
        "__deid_sharing", F.count(F.lit(1)).over(by_key)).withColumn(
        "__deid_rank", F.row_number().over(by_key.orderBy(_SHA)))
    bad_key = F.col("__deid_null_key") | (F.col("__deid_sharing") > 1)
    keyed = keyed.persist()
    out = written_all = None
    n_processed = n_failed = 0
    try:
        counts = keyed.agg(F.count(F.lit(1)).alias("rows"),
                           F.sum(F.when(bad_key, 1).otherwise(0)).alias("bad")).first()
        n_rows, n_bad = int(counts["rows"]), int(counts["bad"] or 0)
        bad = keyed.filter(bad_key).select(
            F.lit(STAGE).alias("stage"), F.lit(source_name).alias("source_file"), F.col(_KEY).alias("case_id"),
            F.col("__deid_rank").cast("string").alias("version"), F.lit("").alias("field"),
            F.lit(E_KEY).alias("error_code"),
            F.when(F.col("__deid_null_key"), F.lit(_NULL_KEY_REASON)).otherwise(F.lit(_DUPLICATE_KEY_REASON))
            .alias("reason"), F.current_timestamp().alias("recorded_at"))
        good = keyed.filter(~bad_key)
        unchanged = _unchanged(spark, spec, target_name, versions)
        todo = good if unchanged is None else good.join(unchanged, [_KEY, _SHA], "left_anti")
        # nothing changed: the UDF (and the pipeline it loads) is not started at all
        failures = None
        if not todo.isEmpty():
            out = deidentify_fields(_fields(spec, todo), ctx, partitions).persist()
            written_all = _rows_out(spec, columns, todo, out, versions).persist()
            tally = written_all.agg(F.count(F.lit(1)).alias("rows"),
                                    F.sum(F.col("__deid_lost").cast("int")).alias("lost"),
                                    F.sum((F.col("deid_status") == _STATUS_FAILED).cast("int")).alias("failed")).first()
            if tally["lost"]:
                raise AccountingError(f"{tally['lost']} rows did not get each of their fields back exactly once")
            n_processed, n_failed = int(tally["rows"]), int(tally["failed"] or 0)
            merge(spark, written_all.drop("__deid_lost"), target_name, spec.keys,
                  changed=[*[c for c in columns if c not in spec.keys], *NARRATIVE_LINEAGE.names],
                  keep_target_when=_keep_good())
            failures = out.filter(F.col("status") == _STATUS_FAILED).select(
                F.lit(STAGE).alias("stage"), F.lit(source_name).alias("source_file"),
                F.col("version").alias("case_id"), F.lit("").alias("version"), "field", "error_code",
                F.lit(_FAILED_REASON).alias("reason"), F.current_timestamp().alias("recorded_at"))
        if n_bad or n_failed:
            quarantine_rows(spark, bad if failures is None or not n_failed else bad.unionByName(failures), tables)
    finally:
        for df in (written_all, out, keyed):
            if df is not None:
                df.unpersist()
    return TableStats(rows=n_rows, bad_keys=n_bad, skipped=n_rows - n_bad - n_processed, processed=n_processed,
                      failed=n_failed, seconds=time.perf_counter() - t0)


@app.command()
def main(
    source: str = typer.Option(..., "--source", help="the narrative table (Parquet or Delta)"),
    source_format: str = typer.Option(None, "--source-format",
                                      help="parquet | delta (default: delta if the table has a _delta_log)"),
    target: Path = typer.Option(..., "--target", help="the de-identified Delta table (created if missing)"),
    key: list[str] = typer.Option(..., "--key", help="key column (repeat for a composite key)"),
    text: list[str] = typer.Option(..., "--text", help="free-text column to de-identify (repeatable)"),
    case: str = typer.Option(None, "--case", help="case column: date shifts and surrogates agree within a case"),
    structured: list[str] = typer.Option([], "--structured", help="COLUMN=LABEL: a structured value of a "
                                         f"category ({', '.join(CATEGORIES)}) (repeatable)"),
    passed: list[str] = typer.Option([], "--pass", help="column passed through unchanged: it holds no PHI"),
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the quarantine table"),
    policy: str = typer.Option(None, "--policy", help="policy profile (default: from the config)"),
    method: str = typer.Option("hybrid", "--method", help="hybrid | deep | rules"),
    key_file: Path = typer.Option(None, "--key-file", help="secret key file (default: $DEID_SECRET_KEY)"),
    config: Path = typer.Option(None, "--config", help="YAML config (default: conf/deid.yaml)"),
    model: Path = typer.Option(None, "--model", help="model directory (default: from the config)"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
    device: str = typer.Option(None, "--device", help="cpu | gpu | auto: where executors run the network"),
) -> None:
    from jobs.spark_session import session_or_exit

    t0 = time.perf_counter()
    try:
        spec = NarrativeTable(source, tuple(key), tuple(text), parse_structured(structured), case, tuple(passed),
                              source_format)
        if device not in (None, "auto", "cpu", "gpu"):
            raise JobConfigError(f"unknown device {device!r} (use cpu, gpu or auto)")
    except (TableSpecError, JobConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    spark = session_or_exit("deid-deidentify-table", master=master)
    try:
        # the source's columns first (cheap), then the pipeline: both before anything is shipped or run
        src = read_table(spark, spec.path, spec.format)
        check_columns([(f.name, f.dataType.simpleString()) for f in src.schema.fields], spec)
        plan = plan_job(config=config, policy=policy, method=method, key_file=key_file, model_dir=model)
        where, why = device_for(spark, plan, device)
    except (TableSourceError, TableSpecError, JobConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"network device:        {where} ({why})")
    ctx = ship(spark, plan, device=where)
    t = Tables(tables.resolve())
    with job_run(spark, t, job="deidentify_table", mode="table") as log:
        log.versions.update(plan.versions)
        log.detail.update(method=plan.method.value, device=where)
        try:
            with log.stage("deidentify"):
                stats = deidentify_table(spark, spec, str(target), t, ctx)
        except (TableSourceError, TableSpecError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        log.input_count, log.output_count, log.failed_count = stats.rows, stats.processed, stats.failed
        if stats.bad_keys:
            log.quarantined("E_KEY", stats.bad_keys)
        log.detail["skipped_unchanged"] = str(stats.skipped)
        typer.echo(f"deidentify_table: {stats.rows} source rows")
        typer.echo(f"  de-identified:       {stats.processed} ({stats.failed} failed: fully masked, quarantined)")
        typer.echo(f"  unchanged, skipped:  {stats.skipped}")
        typer.echo(f"  bad keys:            {stats.bad_keys} (quarantined, not written)")
        typer.echo(f"  target:              {target.resolve()}")
        typer.echo(f"  quarantine:          {t.quarantine}")
        typer.echo(f"  wall time:           {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    app()
