"""Nightly de-identification: ingest -> de-identify -> QA sample -> review ingest -> publish (gated) -> run report.

Every task is idempotent, so a retry or a re-run for a date is safe:
ingest MERGEs report versions (a file read twice changes nothing); the
de-identification is a Structured Streaming run over bronze's change feed
with a checkpoint (it takes only what it has not processed yet); the QA
sample of a batch is named by the run and the batch and is never redrawn;
the review ingest recomputes the QA rates from all review files; publish
MERGEs into gold only what gold does not hold yet, and only when the
latest completely reviewed QA sample of every model version in the batch
has a residual-PHI upper confidence bound within the configured limit.
A refused publish fails the task (and alerts); the batch waits in silver
until a review clears it.

Every job records one row per attempt in the run log (`job_runs`) under
this DAG run's id. The run report runs last whatever happened before it:
it prints the night's rows and fails when a job's failed rows exceed
`nightly.max_failed_share`. Because it runs after failures too, the
watcher task makes the DAG run fail when any task failed.

Settings: conf/airflow.yaml (or $DEID_AIRFLOW_CONFIG).
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from airflow.sdk import DAG

# the helper package next to this file (Airflow puts the DAGs folder on
# sys.path itself, but not every loader does)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from deid_airflow.settings import load_settings  # noqa: E402
from deid_airflow.tasks import default_args, fail_if_any_failed, spark_job

S = load_settings()
N = S.nightly
TABLES = S.path(S.tables)
QA = ["--qa-config", S.path(S.qa_config)]
#: the jobs whose rows the run report expects in the run log (their names there)
RECORDING_JOBS = ["ingest_e2b", "deidentify", "qa_sample", "qa_ingest_review", "publish"]

deid_args = ["--tables", TABLES, "--mode", "stream", "--method", N.method, "--config", S.path(S.deid_config)]
if N.policy:
    deid_args += ["--policy", N.policy]
if S.key_file:
    deid_args += ["--key-file", S.path(S.key_file)]

with DAG(
    dag_id=N.dag_id,
    description="E2B reports: ingest, de-identify, QA sample, publish through the QA gate",
    schedule=N.schedule,
    start_date=datetime.combine(N.start_date, datetime.min.time(), tzinfo=timezone.utc),
    catchup=N.catchup,
    max_active_runs=1,  # the jobs assume one writer per table
    default_args=default_args(S, N),
    tags=["deid", "pharmacovigilance"],
    doc_md=__doc__,
) as dag:
    ingest = spark_job(S, "ingest", "ingest_e2b",
                       ["--input", S.path(N.landing.replace("{ds}", "{{ ds }}")), "--tables", TABLES, "--missing-ok"])
    deidentify = spark_job(S, "deidentify", "deidentify", deid_args)
    qa_sample = spark_job(S, "qa_sample", "qa_sample", ["--tables", TABLES, "--run-id", "{{ ds }}", *QA])
    qa_reviews = spark_job(S, "qa_ingest_review", "qa_ingest_review", ["--tables", TABLES, *QA])
    publish = spark_job(S, "publish", "publish", ["--tables", TABLES, "--run-id", "{{ ds }}", *QA])
    report = spark_job(S, "run_report", "run_report",
                       ["--tables", TABLES, "--run-id", "{{ run_id }}", "--max-failed-share", str(N.max_failed_share),
                        *[a for job in RECORDING_JOBS for a in ("--expect", job)]],
                       trigger_rule="all_done")

    # weekly upkeep (compaction, VACUUM; conf/lakehouse.yaml maintenance.weekday): the job itself
    # decides from the logical date, before starting Spark, so the weekday has one definition
    maintain = spark_job(S, "maintain_tables", "maintain_tables",
                         ["--tables", TABLES, "--if-weekday-of", "{{ ds }}"], trigger_rule="all_done")

    ingest >> deidentify >> qa_sample >> qa_reviews >> publish >> maintain >> report
    [ingest, deidentify, qa_sample, qa_reviews, publish, maintain, report] >> fail_if_any_failed()
