"""Model refresh: build training set -> train -> evaluate on frozen sets -> promote (or keep the current model).

Each step is `python -m jobs.model_refresh <step> --run-id <date>` in the
project's interpreter and is idempotent for its run id (a finished step
with unchanged inputs is a no-op), so a failed run is simply retried.
Promotion happens only if, on every frozen evaluation set, the candidate's
recall at its operating point is not lower than the current model's and its
precision falls by no more than the configured margin
(conf/model_refresh.yaml). The comparison is recorded in the registry's
history whatever the decision, and the previous model stays in the
registry for `python -m jobs.model_refresh rollback`.

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
from deid_airflow.tasks import default_args, project_command

S = load_settings()
R = S.model_refresh
ARGS = ["--run-id", "{{ ds }}", "--config", S.path(R.refresh_config)]

with DAG(
    dag_id=R.dag_id,
    description="Retrain the deep de-identifier and promote it only if it is not worse",
    schedule=R.schedule,
    start_date=datetime.combine(R.start_date, datetime.min.time(), tzinfo=timezone.utc),
    catchup=R.catchup,
    max_active_runs=1,
    default_args=default_args(S, R),
    tags=["deid", "model"],
    doc_md=__doc__,
) as dag:
    steps = [project_command(S, step.replace("-", "_"), "jobs.model_refresh", [step, *ARGS])
             for step in ("build-training-set", "train", "evaluate", "promote")]
    for upstream, downstream in zip(steps, steps[1:]):
        upstream >> downstream
