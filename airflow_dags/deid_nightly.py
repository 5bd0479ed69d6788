"""Nightly de-identification: ingest -> de-identify -> QA sample -> review ingest -> publish (gated).

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
from deid_airflow.tasks import default_args, spark_job

S = load_settings()
N = S.nightly
TABLES = S.path(S.tables)
QA = ["--qa-config", S.path(S.qa_config)]

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

    ingest >> deidentify >> qa_sample >> qa_reviews >> publish
