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
import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import typer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deid_core.config import ConfigError, DeidConfig, config_path, load_config, with_inference
from deid_core.deep.manifest import ModelError
from deid_core.detectors import Method
from deid_core.dictionaries.artifact import ArtifactError, DictionaryArtifact
from deid_core.lakehouse import BRONZE, FIELD_ROWS, KIND_STRUCTURED, KIND_TEXT, SILVER, SILVER_PIECES
from deid_core.lakehouse_settings import WorkConfig, load_lakehouse_settings
from deid_core.pipeline import DeidPipeline
from deid_core.replace.keys import MissingKeyError, SecretKey, load_key
from deid_core.replace.policy import Policy, load_policy
from jobs.balance import cut_long_texts, join_pieces, placed, task_count
from jobs.run_log import job_run
from jobs.tables import Tables, exists, field_key_column, latest_per_key, merge, quarantine_rows
from udfs.deidentify_fields import deidentify_batches
from udfs.runtime import CONF_ARCHIVE, MODEL_ARCHIVE, SHIPPED_POLICY, PipelineSpec

app = typer.Typer(add_completion=False, help=__doc__)

#: the run log's name of this job (the nightly DAG's run report looks for it)
JOB = "deidentify"

REPO = Path(__file__).resolve().parent.parent
#: silver columns whose change makes MERGE rewrite a row (processing time alone does not)
_CHANGED = ["input_sha256", "text_deid", "status", "error_code", "model_version", "dictionary_version",
            "policy_version"]
#: a failed row never replaces a row that succeeded on the same input with the same versions:
#: the good row stays and the failure goes to quarantine only
_KEEP_GOOD = ("s.status = 'failed' AND t.status = 'ok' AND t.input_sha256 = s.input_sha256 AND "
              "t.model_version <=> s.model_version AND t.dictionary_version <=> s.dictionary_version AND "
              "t.policy_version <=> s.policy_version")


class JobConfigError(RuntimeError):
    """The run cannot work as configured; found on the driver before any executor work or write.

    The message is one line (the job prints it and exits 2, which the
    nightly DAG does not retry).
    """


_MESSAGE_CHARS = 400


def _one_line(exc: BaseException) -> str:
    lines = [x.strip() for x in str(exc).splitlines() if x.strip() and not x.strip().startswith("For further")]
    text = " ".join(" ".join(lines).split()) or type(exc).__name__
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 3] + "..."


@contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """Discard what native code writes to fd 2 meanwhile.

    TensorFlow's C++ runtime writes absl INFO lines ("oneDNN custom
    operations are on") to fd 2 when it is first imported, whatever
    TF_CPP_MIN_LOG_LEVEL says; on the driver's check they would bury the
    one line a configuration error prints. Python exceptions are unaffected
    (they are raised, and reported by the caller).
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@dataclass(frozen=True)
class DriverPlan:
    """What the driver loaded and checked once: the executors must rebuild exactly this."""

    cfg: DeidConfig
    config_file: Path
    #: the bytes of `config_file` the driver validated; exactly these are shipped
    config_bytes: bytes = field(repr=False)
    method: Method
    policy: Policy
    policy_file: Path
    key: SecretKey | None = field(repr=False)
    model_dir: Path | None
    dictionary: bytes = field(repr=False)
    #: model, dictionary and policy versions of the pipeline the driver built
    versions: dict[str, str] = field(default_factory=dict)
    #: how the work is cut and spread (conf/lakehouse.yaml `work`)
    work: WorkConfig = field(default_factory=WorkConfig)


def executor_device(conf: Mapping[str, str], requested: str) -> tuple[str, str]:
    """Where the executors run the network ("cpu" or "gpu") and why, from the Spark configuration.

    GPUs are used only through Spark's resource scheduling: executors must be
    given GPUs (``spark.executor.resource.gpu.amount``, with a discovery
    script) and tasks a share of one (``spark.task.resource.gpu.amount``);
    in local mode the driver's GPUs (``spark.driver.resource.gpu.amount``).
    A GPU asked for without those falls back to CPU, and says so.
    """
    if requested not in ("auto", "cpu", "gpu"):
        raise JobConfigError(f"unknown device {requested!r} (use cpu, gpu or auto)")
    if requested == "cpu":
        return "cpu", "CPU asked for"
    local = conf.get("spark.master", "").startswith("local")
    amount_key = "spark.driver.resource.gpu.amount" if local else "spark.executor.resource.gpu.amount"
    try:
        executor_gpus = float(conf.get(amount_key, "0") or 0)
        task_gpus = float(conf.get("spark.task.resource.gpu.amount", "0") or 0)
    except ValueError:
        raise JobConfigError(f"{amount_key} and spark.task.resource.gpu.amount must be numbers") from None
    if executor_gpus > 0 and task_gpus > 0:
        return "gpu", f"{amount_key}={conf.get(amount_key)}, spark.task.resource.gpu.amount={conf.get('spark.task.resource.gpu.amount')}"
    why = f"no GPU resources in the Spark configuration ({amount_key} and spark.task.resource.gpu.amount)"
    if requested == "gpu":
        return "cpu", f"a GPU was asked for but {why}; running on CPU"
    return "cpu", why


def plan_job(*, config: Path | None, policy: str | None, method: str, key_file: Path | None,
             model_dir: Path | None) -> DriverPlan:
    """Load configuration, policy, key, dictionaries and model, and build the pipeline once, on the driver.

    A configuration that cannot work (unknown method or policy, invalid
    YAML, a missing model, dictionary or key) raises JobConfigError here,
    before Spark does any work, so that nothing is written: executors never
    get to turn it into rows of fully masked E_LOAD output.
    """
    try:
        chosen = Method(method)
    except ValueError:
        raise JobConfigError(f"unknown method {method!r} (use one of: {', '.join(m.value for m in Method)})") from None
    try:
        cfg_file = config_path(config).resolve()
        config_bytes = _read_config(cfg_file)
        cfg = load_config(cfg_file)
        if _read_config(cfg_file) != config_bytes:
            raise ConfigError(f"config file {cfg_file} changed while it was being loaded; run again")
        prof = load_policy(policy or cfg.replacement.default_policy, cfg.replacement.policies_dir)
        key = load_key(key_file) if prof.needs_key or key_file is not None else None
        try:
            dictionary = Path(cfg.dictionaries.artifact).read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the dictionary artifact {cfg.dictionaries.artifact} "
                              f"({type(exc).__name__}); run `make dictionaries`") from None
        artifact = DictionaryArtifact.from_bytes(dictionary)
        model = None
        if chosen is not Method.rules:
            model = (model_dir or model_in_use(cfg)).resolve()
            if not model.is_dir():
                raise ModelError(f"model directory not found: {model}")
        work = load_lakehouse_settings().work
    except (ConfigError, MissingKeyError, ModelError, ArtifactError) as exc:
        raise JobConfigError(_one_line(exc)) from None
    try:
        with _native_stderr_silenced():
            # the driver only checks that the pipeline loads: on CPU, never holding a GPU
            pipe = DeidPipeline.build(with_inference(cfg, device="cpu"), prof, key, method=chosen, artifact=artifact,
                                      model_dir=model)
    except Exception as exc:  # noqa: BLE001 - whatever stops the pipeline from loading stops the run
        raise JobConfigError(f"the {chosen.value} pipeline cannot be loaded: {_one_line(exc)}") from None
    return DriverPlan(cfg=cfg, config_file=cfg_file, config_bytes=config_bytes, method=chosen, policy=prof,
                      policy_file=_policy_file(policy, prof.name, cfg.replacement.policies_dir), key=key,
                      model_dir=model, dictionary=dictionary, versions=pipe.versions(), work=work)


@dataclass(frozen=True)
class JobContext:
    """What the driver prepared once: the spec and the broadcasts."""

    spec: PipelineSpec
    dictionary_bc: object
    key_bc: object | None
    #: how the work is cut and spread (conf/lakehouse.yaml `work`)
    work: WorkConfig = field(default_factory=WorkConfig)


def ship(spark: SparkSession, plan: DriverPlan, *, to_executors: bool = True, device: str = "cpu") -> JobContext:
    """Ship configuration and model as archives, broadcast dictionary and key.

    The configuration archive is the folder of the configuration file the
    driver resolved (`--config`, else `$DEID_CONFIG`, else conf/deid.yaml),
    so that its relative paths (word lists, policies) resolve the same way
    on the executors, with that file's validated bytes written over it and
    the chosen policy file at a fixed place. The spec names the file and
    carries its hash: a worker that finds other bytes refuses to build a
    pipeline (its rows fail closed with E_LOAD). Archives are built in the
    run's private folder (`jobs.workspace`), removed when the run ends.
    """
    from jobs.spark_session import run_workspace

    sc = spark.sparkContext
    versions = tuple(sorted(plan.versions.items()))
    conf_dir = plan.config_file.parent
    config_sha256 = hashlib.sha256(plan.config_bytes).hexdigest()
    if to_executors:
        work = Path(run_workspace().folder("ship"))
        conf_copy = work / "conf"
        if conf_copy.exists():
            shutil.rmtree(conf_copy)
        shutil.copytree(conf_dir, conf_copy)
        (conf_copy / plan.config_file.name).write_bytes(plan.config_bytes)
        shipped_policy = conf_copy / SHIPPED_POLICY
        shipped_policy.parent.mkdir(exist_ok=True)
        shutil.copyfile(plan.policy_file, shipped_policy)
        names = {}
        folders = [(CONF_ARCHIVE, conf_copy)] + ([(MODEL_ARCHIVE, plan.model_dir)] if plan.model_dir else [])
        for base, folder in folders:
            name = f"{base}_{_folder_digest(folder)}"
            names[base] = name
            if name not in _shipped_archives(sc):
                archive = shutil.make_archive(str(work / name), "zip", root_dir=folder)
                sc.addArchive(f"{archive}#{name}")
        spec = PipelineSpec(method=plan.method.value, policy=SHIPPED_POLICY, config_name=plan.config_file.name,
                            config_sha256=config_sha256, conf_archive=names[CONF_ARCHIVE],
                            model_archive=names.get(MODEL_ARCHIVE, MODEL_ARCHIVE), versions=versions,
                            device=device, backend=plan.cfg.deep.inference.backend)
    else:
        spec = PipelineSpec(method=plan.method.value, policy=str(plan.policy_file), config_name=plan.config_file.name,
                            config_sha256=config_sha256, conf_dir=str(conf_dir),
                            model_dir=str(plan.model_dir) if plan.model_dir else None, versions=versions,
                            device=device, backend=plan.cfg.deep.inference.backend)
    dictionary_bc = sc.broadcast(plan.dictionary)
    key_bc = sc.broadcast(plan.key.material) if plan.key is not None else None
    return JobContext(spec, dictionary_bc, key_bc, plan.work)


def prepare(spark: SparkSession, *, config: Path | None, policy: str | None, method: str,
            key_file: Path | None, model_dir: Path | None, ship_archives: bool = True,
            device: str | None = None) -> JobContext:
    """`plan_job`, the executors' device, then `ship`: raises JobConfigError before any executor work."""
    plan = plan_job(config=config, policy=policy, method=method, key_file=key_file, model_dir=model_dir)
    where, _ = device_for(spark, plan, device)
    return ship(spark, plan, to_executors=ship_archives, device=where)


def device_for(spark: SparkSession, plan: DriverPlan, requested: str | None) -> tuple[str, str]:
    """`executor_device` for this session's configuration; `requested` None: the config's setting."""
    if plan.method is Method.rules:
        return "cpu", "rules only: no network"
    return executor_device(dict(spark.sparkContext.getConf().getAll()), requested or plan.cfg.deep.inference.device)


def model_in_use(cfg: DeidConfig) -> Path:
    """The model the registry promoted last (conf/model_refresh.yaml), else the configured default.

    A rollback in the registry therefore takes effect at the next run
    without any change to the job or its configuration.
    """
    from deid_core.model_refresh.config import load_refresh_config
    from deid_core.model_refresh.registry import current_model_dir

    return current_model_dir(load_refresh_config().registry_dir, cfg.deep.model_dir)


def _read_config(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path} ({type(exc).__name__})") from None


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
    """One row per free-text or structured field of each report version (`FIELD_ROWS`)."""
    text = bronze.select("case_id", "version", F.explode("text_fields").alias("f")).select(
        "case_id", "version", field_key_column(KIND_TEXT, "f.path").alias("field"), F.lit(KIND_TEXT).alias("kind"),
        F.lit(None).cast("string").alias("label"), F.col("f.text").alias("text"),
    )
    structured = bronze.select("case_id", "version", F.explode("structured_fields").alias("f")).select(
        "case_id", "version", field_key_column(KIND_STRUCTURED, "f.path").alias("field"),
        F.lit(KIND_STRUCTURED).alias("kind"), F.col("f.label").alias("label"), F.col("f.value").alias("text"),
    )
    both = text.unionByName(structured)
    return both.withColumn(
        "input_sha256",
        F.sha2(F.concat_ws("\u001f", "kind", F.coalesce("label", F.lit("")), F.coalesce("text", F.lit(""))), 256),
    ).select(*FIELD_ROWS.names)


def deidentify_fields(fields: DataFrame, ctx: JobContext, partitions: int | None = None) -> DataFrame:
    """`FIELD_ROWS` in, one `SILVER` row per field out, the work spread by text length (`jobs.balance`).

    Long texts are cut in pieces and joined back after the UDF; the task
    count follows the characters (`work.partition_chars`), never fewer than
    `partitions` (default: two per core).
    """
    spark = fields.sparkSession
    work = ctx.work
    pieces = cut_long_texts(fields, work.piece_chars)
    tasks = max(partitions or 1, task_count(spark, pieces, work.partition_chars))
    fn = deidentify_batches(ctx.spec, ctx.dictionary_bc, ctx.key_bc)
    out = placed(spark, pieces, tasks).mapInPandas(fn, SILVER_PIECES.schema)
    return join_pieces(out, tasks)


def not_yet_done(spark: SparkSession, fields: DataFrame, tables: Tables, versions: tuple[tuple[str, str], ...]) -> DataFrame:
    """The fields silver does not hold de-identified from this very input by these versions.

    A field whose input hash, model, dictionary and policy versions (the key
    fingerprint is part of the policy version) match an `ok` silver row would
    come out the same: it is not sent through the network again. Failed rows
    are always retried.
    """
    if not exists(spark, tables.silver):
        return fields
    v = dict(versions)
    done = (spark.read.format("delta").load(tables.silver)
            .filter((F.col("status") == "ok") & F.col("model_version").eqNullSafe(F.lit(v.get("model")))
                    & F.col("dictionary_version").eqNullSafe(F.lit(v.get("dictionary")))
                    & F.col("policy_version").eqNullSafe(F.lit(v.get("policy"))))
            .select(*SILVER.key, "input_sha256"))
    return fields.join(done, [*SILVER.key, "input_sha256"], "left_anti")


def write_results(spark: SparkSession, out: DataFrame, tables: Tables) -> tuple[int, int]:
    """MERGE into silver, failed rows also into quarantine; returns (rows, failed).

    `out` has one row per key: bronze has one row per (case id, version) and
    field paths are unique within a report (streams dedupe reports first).
    """
    out = out.persist()
    try:
        merge(spark, out, tables.silver, SILVER.key, changed=_CHANGED, keep_target_when=_KEEP_GOOD)
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


def run_batch(spark: SparkSession, tables: Tables, ctx: JobContext, reprocess: bool = False) -> tuple[int, int]:
    """The whole of bronze; fields silver already holds done the same way are skipped unless `reprocess`."""
    fields = fields_of(spark.read.format("delta").load(tables.bronze))
    if not reprocess:
        fields = not_yet_done(spark, fields, tables, ctx.spec.versions)
    return write_results(spark, deidentify_fields(fields, ctx), tables)


def run_stream(spark: SparkSession, tables: Tables, ctx: JobContext, max_files_per_trigger: int | None) -> tuple[int, int]:
    """Everything bronze gained since the last run (change feed: inserts and updated rows); (fields, failed)."""
    reader = spark.readStream.format("delta").option("readChangeFeed", "true").option("startingVersion", 0)
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", max_files_per_trigger)
    changes = reader.load(tables.bronze).filter(F.col("_change_type").isin("insert", "update_postimage"))

    totals = [0, 0]

    def each(batch: DataFrame, batch_id: int) -> None:
        reports = latest_per_key(batch.drop("_change_type"), BRONZE.key, ["_commit_version"])
        reports = reports.drop("_commit_version", "_commit_timestamp")
        rows, failed = write_results(spark, deidentify_fields(fields_of(reports), ctx), tables)
        totals[0] += rows
        totals[1] += failed

    query = (
        changes.writeStream.foreachBatch(each)
        .option("checkpointLocation", tables.checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return totals[0], totals[1]


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
    reprocess: bool = typer.Option(False, "--reprocess", help="batch: de-identify every field again, even those "
                                   "silver holds done from the same input by the same versions"),
    device: str = typer.Option(None, "--device", help="cpu | gpu | auto: where executors run the network "
                               "(default: deep.inference.device); gpu needs Spark GPU resources (docs/spark-jobs.md)"),
) -> None:
    from jobs.spark_session import session_or_exit

    t0 = time.perf_counter()
    try:
        if mode not in ("batch", "stream"):
            raise JobConfigError(f"unknown mode {mode!r} (use batch or stream)")
        if device not in (None, "auto", "cpu", "gpu"):
            raise JobConfigError(f"unknown device {device!r} (use cpu, gpu or auto)")
        plan = plan_job(config=config, policy=policy, method=method, key_file=key_file, model_dir=model)
    except JobConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    spark = session_or_exit("deid-deidentify", master=master)
    try:
        where, why = device_for(spark, plan, device)
    except JobConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"network device:        {where} ({why})")
    ctx = ship(spark, plan, device=where)
    t = Tables(tables.resolve())
    with job_run(spark, t, job=JOB, mode=mode) as log:
        log.versions.update(plan.versions)
        log.detail.update(method=plan.method.value, device=where)
        if mode == "batch":
            with log.stage("deidentify"):
                rows, failed = run_batch(spark, t, ctx, reprocess=reprocess)
            log.input_count, log.output_count, log.failed_count = rows, rows, failed
            typer.echo(f"deidentify (batch): {rows} fields processed, {failed} failed (fully masked, quarantined)")
        else:
            with log.stage("deidentify"):
                rows, failed = run_stream(spark, t, ctx, max_files_per_trigger)
            log.input_count, log.output_count, log.failed_count = rows, rows, failed
            typer.echo(f"deidentify (stream): caught up with bronze ({rows} fields processed, {failed} failed)")
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
