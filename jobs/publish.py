"""Publish the batch awaiting publication to gold, if the QA gate allows it.

    python -m jobs.publish --tables build/lakehouse --run-id 2026-11-26 [--qa-config conf/qa.yaml]

The batch is every silver report whose de-identified form gold does not
hold yet (`jobs.pending`). For each model version the batch was made with,
the latest completely reviewed QA sample must show a residual-PHI upper
confidence bound within `gate.max_residual_phi_upper` (`deid_core.qa.gate`);
otherwise nothing is published, the refusal is recorded in `publish_log`,
and the job exits with code 3 (the Airflow task fails, alerting whoever is
on call). Gold is written by MERGE on (case id, version), so a retry or a
re-run for the same date publishes nothing twice. Each run records one row
in the run log (`jobs.run_log`): reports awaiting publication in, reports
published out; a refusal is a failed row with exit code 3.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

import typer
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deid_core.lakehouse import GOLD, PUBLISH_LOG
from deid_core.qa.config import QaConfig, load_qa_config
from deid_core.qa.gate import GateDecision, decide
from jobs.pending import pending_reports
from jobs.run_log import JobRunLog, job_run
from jobs.tables import Tables, exists, merge

app = typer.Typer(add_completion=False, help=__doc__)

EXIT_REFUSED = 3
#: the run log's name of this job
JOB = "publish"


def gate(spark: SparkSession, tables: Tables, cfg: QaConfig, model_versions: set[str]) -> GateDecision:
    metrics = ([r.asDict() for r in spark.read.format("delta").load(tables.qa_metrics).collect()]
               if exists(spark, tables.qa_metrics) else [])
    return decide(model_versions, metrics, max_residual_phi_upper=cfg.gate.max_residual_phi_upper,
                  max_over_masking_upper=cfg.gate.max_over_masking_upper)


def run(spark: SparkSession, tables: Tables, cfg: QaConfig, run_id: str,
        log: JobRunLog | None = None) -> tuple[GateDecision, int]:
    """Gate and publish; returns the decision and the number of reports published.

    `log`, when given, gets the batch size (in), the reports published
    (out), the model versions and the gate's verdict for the run log.
    """
    batch = pending_reports(spark, tables).persist()
    try:
        n = batch.count()
        versions = {v for r in batch.select(F.explode("model_versions").alias("v")).distinct().collect()
                    for v in [r["v"]] if v is not None}
        if n and any(True for r in batch.filter(F.size("model_versions") == 0).limit(1).collect()):
            versions.add("<unknown>")
        decision = gate(spark, tables, cfg, versions) if n else GateDecision(True)
        if log is not None:
            log.input_count, log.output_count = n, n if decision.allowed else 0
            log.detail["gate"] = "pass" if decision.allowed else "refused"
            if versions:
                log.versions["model"] = "+".join(sorted(versions))[:120]
        if n and decision.allowed:
            now = datetime.now(timezone.utc)
            gold = batch.withColumn("published_run_id", F.lit(run_id)).withColumn(
                "published_at", F.lit(now).cast("timestamp")).select(*GOLD.names)
            merge(spark, gold, tables.published, GOLD.key, changed=["content_sha256"])
        _log(spark, tables, run_id, decision, n, versions)
        return decision, (n if decision.allowed else 0)
    finally:
        batch.unpersist()


def _log(spark: SparkSession, tables: Tables, run_id: str, decision: GateDecision, n: int, versions: set[str]) -> None:
    verdicts = json.dumps([v.__dict__ for v in decision.verdicts])
    row = (run_id, datetime.now(timezone.utc).isoformat(timespec="seconds"), decision.allowed, n,
           ",".join(sorted(versions)), verdicts)
    spark.createDataFrame([row], PUBLISH_LOG.schema).write.format("delta").mode("append").save(tables.publish_log)


@app.command()
def main(
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    run_id: str = typer.Option(..., "--run-id", help="the scheduled date or run being published"),
    qa_config: Path = typer.Option(None, "--qa-config", help="QA config (default: conf/qa.yaml)"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
) -> None:
    from jobs.spark_session import session_or_exit

    cfg = load_qa_config(qa_config)
    t0 = time.perf_counter()
    spark = session_or_exit("deid-publish", master=master)
    t = Tables(tables.resolve())
    with job_run(spark, t, job=JOB, run_id=run_id) as log:
        decision, published = run(spark, t, cfg, run_id, log)
        for v in decision.verdicts:
            typer.echo(f"gate: {'PASS' if v.allowed else 'REFUSE'} {v.model_version}: {v.reason}")
        if not decision.allowed:
            typer.echo(f"publish refused for run {run_id}: nothing published ({time.perf_counter() - t0:.1f}s)",
                       err=True)
            raise typer.Exit(EXIT_REFUSED)
        typer.echo(f"publish: {published} reports published for run {run_id} ({time.perf_counter() - t0:.1f}s)")


if __name__ == "__main__":
    app()
