"""De-identify bronze reports into the silver Delta table, field by field.

    python -m jobs.deidentify --tables build/lakehouse [--mode batch|stream] [--policy P]
                              [--method hybrid] [--key-file F] [--master local[*]]

`batch` processes the whole bronze table; `stream` is the incremental
nightly run: Structured Streaming over bronze's change feed with the
`availableNow` trigger and a checkpoint, so each run takes what arrived
since the last one and stops. Both write silver with MERGE on (case id,
version, field): a re-run or a restart after a crash yields the same table,
with no duplicates and nothing lost. Rows whose processing failed are fully
masked in silver and also written to quarantine with their error code.

The model and the configuration reach the executors as archives, the
dictionary artifact and the key as broadcasts (see `udfs.runtime`).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import typer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deid_core.config import DeidConfig, load_config
from deid_core.replace.keys import MissingKeyError, load_key
from deid_core.replace.policy import load_policy
from jobs.tables import SILVER_KEY, Tables, exists, latest_per_key, merge, quarantine_rows
from udfs.deidentify_fields import OUTPUT_SCHEMA, deidentify_batches
from udfs.runtime import CONF_ARCHIVE, MODEL_ARCHIVE, PipelineSpec

app = typer.Typer(add_completion=False, help=__doc__)

REPO = Path(__file__).resolve().parent.parent
#: silver columns whose change makes MERGE rewrite a row (processing time alone does not)
_CHANGED = ["input_sha256", "text_deid", "status", "error_code", "model_version", "dictionary_version",
            "policy_version"]


@dataclass(frozen=True)
class JobContext:
    """What the driver prepared once: the spec and the broadcasts."""

    spec: PipelineSpec
    dictionary_bc: object
    key_bc: object | None


def prepare(spark: SparkSession, *, config: Path | None, policy: str | None, method: str,
            key_file: Path | None, model_dir: Path | None, ship: bool = True) -> JobContext:
    """Load config, policy and key on the driver; ship model and config; broadcast the rest.

    Raises MissingKeyError before any executor work when the policy needs a key.
    """
    cfg = load_config(config)
    prof = load_policy(policy or cfg.replacement.default_policy, cfg.replacement.policies_dir)
    key = load_key(key_file) if prof.needs_key or key_file is not None else None
    conf_dir = (config or REPO / "conf" / "deid.yaml").resolve().parent
    model = (model_dir or model_in_use(cfg)).resolve()
    sc = spark.sparkContext
    if ship:
        work = Path(tempfile.mkdtemp(prefix="deid-ship-"))
        conf_copy = work / "conf"
        shutil.copytree(conf_dir, conf_copy)
        # a profile given as a path travels inside the shipped configuration
        shutil.copyfile(_policy_file(policy, prof.name, cfg.replacement.policies_dir),
                        conf_copy / cfg.replacement.policies_dir.relative_to(conf_dir) / f"{prof.name}.yaml")
        names = {}
        for base, folder in ((CONF_ARCHIVE, conf_copy), (MODEL_ARCHIVE, model)):
            digest = _folder_digest(folder)
            name = f"{base}_{digest}"
            names[base] = name
            if name not in _shipped_archives(sc):
                archive = shutil.make_archive(str(work / name), "zip", root_dir=folder)
                sc.addArchive(f"{archive}#{name}")
        spec = PipelineSpec(method=method, policy=prof.name, conf_archive=names[CONF_ARCHIVE],
                            model_archive=names[MODEL_ARCHIVE])
    else:
        spec = PipelineSpec(method=method, policy=policy or prof.name, conf_dir=str(conf_dir), model_dir=str(model))
    dictionary_bc = sc.broadcast(Path(cfg.dictionaries.artifact).read_bytes())
    key_bc = sc.broadcast(key.material) if key is not None else None
    return JobContext(spec, dictionary_bc, key_bc)


def model_in_use(cfg: DeidConfig) -> Path:
    """The model the registry promoted last (conf/model_refresh.yaml), else the configured default.

    A rollback in the registry therefore takes effect at the next run
    without any change to the job or its configuration.
    """
    from deid_core.deep.refresh_config import load_refresh_config
    from deid_core.deep.registry import current_model_dir

    return current_model_dir(load_refresh_config().registry_dir, cfg.deep.model_dir)


def _folder_digest(folder: Path) -> str:
    """A short hash of a folder's files (names and contents)."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(folder)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _shipped_archives(sc: object) -> set[str]:
    """Archive names this SparkContext already ships (adding one twice is refused or ignored)."""
    listed = getattr(sc, "listArchives", [])
    return {str(a).rsplit("#", 1)[-1].rsplit("/", 1)[-1].removesuffix(".zip") for a in listed}


def _policy_file(policy: str | None, name: str, policies_dir: Path) -> Path:
    given = Path(policy) if policy else None
    return given if given is not None and given.suffix in (".yaml", ".yml") else policies_dir / f"{name}.yaml"


def fields_of(bronze: DataFrame) -> DataFrame:
    """One row per free-text or structured field of each report version."""
    text = bronze.select("case_id", "version", F.explode("text_fields").alias("f")).select(
        "case_id", "version", F.concat(F.lit("text:"), "f.path").alias("field"), F.lit("text").alias("kind"),
        F.lit(None).cast("string").alias("label"), F.col("f.text").alias("text"),
    )
    structured = bronze.select("case_id", "version", F.explode("structured_fields").alias("f")).select(
        "case_id", "version", F.concat(F.lit("structured:"), "f.path").alias("field"),
        F.lit("structured").alias("kind"), F.col("f.label").alias("label"), F.col("f.value").alias("text"),
    )
    both = text.unionByName(structured)
    return both.withColumn(
        "input_sha256",
        F.sha2(F.concat_ws("\u001f", "kind", F.coalesce("label", F.lit("")), F.coalesce("text", F.lit(""))), 256),
    )


def deidentify_fields(fields: DataFrame, ctx: JobContext, partitions: int) -> DataFrame:
    fn = deidentify_batches(ctx.spec, ctx.dictionary_bc, ctx.key_bc)
    return fields.repartition(partitions).mapInPandas(fn, OUTPUT_SCHEMA)


def write_results(spark: SparkSession, out: DataFrame, tables: Tables) -> tuple[int, int]:
    """MERGE into silver, failed rows also into quarantine; returns (rows, failed).

    `out` has one row per key: bronze has one row per (case id, version) and
    field paths are unique within a report (streams dedupe reports first).
    """
    out = out.persist()
    try:
        merge(spark, out, tables.silver, SILVER_KEY, changed=_CHANGED)
        failed = out.filter("status = 'failed'")
        n_failed = failed.count()
        if n_failed:
            quarantine_rows(spark, failed.select(
                F.lit("deidentify").alias("stage"), F.lit("").alias("source_file"), "case_id", "version", "field",
                "error_code", F.lit(None).cast("string").alias("reason"),
                F.current_timestamp().alias("recorded_at"),
            ), tables)
        return out.count(), n_failed
    finally:
        out.unpersist()


def run_batch(spark: SparkSession, tables: Tables, ctx: JobContext) -> tuple[int, int]:
    bronze = spark.read.format("delta").load(tables.bronze)
    partitions = max(1, spark.sparkContext.defaultParallelism * 2)
    return write_results(spark, deidentify_fields(fields_of(bronze), ctx, partitions), tables)


def run_stream(spark: SparkSession, tables: Tables, ctx: JobContext, max_files_per_trigger: int | None) -> None:
    """Everything bronze gained since the last run (change feed: inserts and updated rows)."""
    partitions = max(1, spark.sparkContext.defaultParallelism * 2)
    reader = spark.readStream.format("delta").option("readChangeFeed", "true").option("startingVersion", 0)
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", max_files_per_trigger)
    changes = reader.load(tables.bronze).filter(F.col("_change_type").isin("insert", "update_postimage"))

    def each(batch: DataFrame, batch_id: int) -> None:
        reports = latest_per_key(batch.drop("_change_type"), ("case_id", "version"), ["_commit_version"])
        reports = reports.drop("_commit_version", "_commit_timestamp")
        write_results(spark, deidentify_fields(fields_of(reports), ctx, partitions), tables)

    query = (
        changes.writeStream.foreachBatch(each)
        .option("checkpointLocation", tables.checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def summary(spark: SparkSession, tables: Tables) -> dict[str, object]:
    """Counts for the run report (no text)."""
    out: dict[str, object] = {}
    if exists(spark, tables.bronze):
        out["reports"] = spark.read.format("delta").load(tables.bronze).count()
    if exists(spark, tables.silver):
        silver = spark.read.format("delta").load(tables.silver)
        out["fields"] = silver.count()
        out["failed_fields"] = silver.filter("status = 'failed'").count()
        spans = silver.select(F.explode("spans").alias("s")).groupBy("s.label").count().collect()
        out["spans_by_label"] = {r["label"]: r["count"] for r in sorted(spans, key=lambda r: r["label"])}
    if exists(spark, tables.quarantine):
        q = spark.read.format("delta").load(tables.quarantine).groupBy("stage").count().collect()
        out["quarantined"] = {r["stage"]: r["count"] for r in q}
    return out


@app.command()
def main(
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    mode: str = typer.Option("batch", "--mode", help="batch (whole bronze table) or stream (incremental)"),
    policy: str = typer.Option(None, "--policy", help="policy profile (default: from the config)"),
    method: str = typer.Option("hybrid", "--method", help="hybrid | deep | rules"),
    key_file: Path = typer.Option(None, "--key-file", help="secret key file (default: $DEID_SECRET_KEY)"),
    config: Path = typer.Option(None, "--config", help="YAML config (default: conf/deid.yaml)"),
    model: Path = typer.Option(None, "--model", help="model directory (default: from the config)"),
    max_files_per_trigger: int = typer.Option(None, "--max-files-per-trigger", help="stream: bronze files per micro-batch"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
) -> None:
    from jobs.spark_session import delta_session

    if mode not in ("batch", "stream"):
        raise typer.BadParameter("--mode must be batch or stream")
    t0 = time.perf_counter()
    spark = delta_session("deid-deidentify", master=master)
    try:
        ctx = prepare(spark, config=config, policy=policy, method=method, key_file=key_file, model_dir=model)
    except MissingKeyError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    t = Tables(tables.resolve())
    if mode == "batch":
        rows, failed = run_batch(spark, t, ctx)
        typer.echo(f"deidentify (batch): {rows} fields processed, {failed} failed (fully masked, quarantined)")
    else:
        run_stream(spark, t, ctx, max_files_per_trigger)
        typer.echo("deidentify (stream): caught up with bronze")
    s = summary(spark, t)
    typer.echo(f"reports in bronze:     {s.get('reports', 0)}")
    typer.echo(f"fields in silver:      {s.get('fields', 0)} ({s.get('failed_fields', 0)} failed, fully masked)")
    quarantined = s.get("quarantined") or {}
    typer.echo("quarantined rows:      " + (", ".join(f"{k} {v}" for k, v in sorted(quarantined.items())) or "none"))
    spans = s.get("spans_by_label") or {}
    typer.echo("replaced by category:  " + (", ".join(f"{k} {v}" for k, v in spans.items()) or "none"))
    typer.echo(f"tables:                {t.root} (bronze_reports, silver_fields, quarantine)")
    typer.echo(f"wall time:             {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    app()
