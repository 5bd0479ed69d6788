"""The DAG files import cleanly in Airflow's virtualenv and wire the jobs as the runbook says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from tests.airflow.conftest import REPO, airflow_env, write_settings

_INSPECT = r'''
import json, os
try:
    from airflow.dag_processing.dagbag import DagBag
except ImportError:
    from airflow.models.dagbag import DagBag
bag = DagBag(dag_folder=os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
out = {"errors": {os.path.basename(k): v.strip().splitlines()[-1] for k, v in bag.import_errors.items()}, "dags": {}}
for dag_id, dag in bag.dags.items():
    tasks = {}
    for t in dag.tasks:
        tasks[t.task_id] = {
            "type": type(t).__name__, "down": sorted(t.downstream_task_ids), "retries": t.retries,
            "conn": getattr(t, "_conn_id", None), "application": getattr(t, "application", None),
            "args": getattr(t, "application_args", None) or getattr(t, "bash_command", None),
            "env": getattr(t, "env_vars", None) or getattr(t, "env", None),
            "trigger_rule": str(getattr(t.trigger_rule, "value", t.trigger_rule)),
            "callbacks": len(t.on_failure_callback or []) if isinstance(t.on_failure_callback, list)
                         else int(t.on_failure_callback is not None),
        }
    out["dags"][dag_id] = {"tasks": tasks, "max_active_runs": dag.max_active_runs}
print("JSON:" + json.dumps(out))
'''


def inspect(af_python: Path, tmp: Path, config: Path | None = None) -> dict:
    proc = subprocess.run([str(af_python), "-c", _INSPECT], env=airflow_env(tmp, config), capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("JSON:"))
    return json.loads(line[5:])


def test_dagbag_has_no_import_errors_and_the_expected_pipelines(af_python: Path, tmp_path: Path) -> None:
    bag = inspect(af_python, tmp_path)
    assert bag["errors"] == {}
    assert set(bag["dags"]) == {"deid_nightly", "deid_model_refresh"}
    nightly = bag["dags"]["deid_nightly"]["tasks"]
    chain = ["ingest", "deidentify", "qa_sample", "qa_ingest_review", "publish", "maintain_tables", "run_report"]
    assert set(nightly) == {*chain, "watcher"}
    for up, down in zip(chain, chain[1:]):
        assert nightly[up]["down"] == sorted([down, "watcher"])
    assert nightly["run_report"]["down"] == ["watcher"] and nightly["watcher"]["down"] == []
    settings = yaml.safe_load((REPO / "conf" / "airflow.yaml").read_text())
    for task_id in chain:
        task = nightly[task_id]
        assert task["type"] == "DeidSparkSubmitOperator"  # a SparkSubmitOperator that knows exit codes 2, 3, 4
        assert task["conn"] == settings["spark_conn_id"]
        assert task["retries"] == settings["nightly"]["retries"]
        assert task["callbacks"] >= 1  # the alert file is on by default
        # every job records its run log rows under the DAG run's id, with the try number
        assert task["env"]["DEID_RUN_ID"] == "{{ run_id }}" and task["env"]["DEID_TRY_NUMBER"] == "{{ ti.try_number }}"
    # the run report runs whatever happened before it; the watcher then fails the DAG run if a task failed
    assert nightly["run_report"]["trigger_rule"] == "all_done"
    # weekly upkeep after publication, whatever the gate decided; the job checks the weekday itself
    assert nightly["maintain_tables"]["trigger_rule"] == "all_done"
    maintain = nightly["maintain_tables"]["args"]
    assert maintain[maintain.index("--if-weekday-of") + 1] == "{{ ds }}"
    report = nightly["run_report"]["args"]
    assert report[report.index("--run-id") + 1] == "{{ run_id }}"
    assert report[report.index("--max-failed-share") + 1] == str(settings["nightly"]["max_failed_share"])
    assert [report[i + 1] for i, a in enumerate(report) if a == "--expect"] == [
        "ingest_e2b", "deidentify", "qa_sample", "qa_ingest_review", "publish"]
    assert nightly["watcher"]["trigger_rule"] == "one_failed"
    assert nightly["watcher"]["retries"] == 0 and nightly["watcher"]["callbacks"] == 0  # the failed task alerted
    assert nightly["deidentify"]["args"][nightly["deidentify"]["args"].index("--mode") + 1] == "stream"
    assert "{{ ds }}" in nightly["publish"]["args"] and "{{ ds }}" in nightly["ingest"]["args"][1]
    assert bag["dags"]["deid_nightly"]["max_active_runs"] == 1
    refresh = bag["dags"]["deid_model_refresh"]["tasks"]
    steps = ["build_training_set", "train", "evaluate", "promote"]
    assert set(refresh) == set(steps)
    for up, down in zip(steps, steps[1:]):
        assert refresh[up]["down"] == [down]
    assert all("jobs.model_refresh" in t["args"] for t in refresh.values())


def test_settings_are_validated_at_parse_time(af_python: Path, tmp_path: Path) -> None:
    """A typo in conf/airflow.yaml is an import error, not a silently defaulted job."""
    bad = write_settings(tmp_path, nightly={"retries": -1, "retrys": 3})
    bag = inspect(af_python, tmp_path, bad)
    assert set(bag["errors"]) == {"deid_nightly.py", "deid_model_refresh.py"}
    assert bag["dags"] == {}
    retry = write_settings(tmp_path, nightly={"retries": 5, "alerts": {"email": ["safety@example.org"],
                                                                       "log_file": None}})
    bag = inspect(af_python, tmp_path, retry)
    assert bag["errors"] == {}
    jobs = {k: t for k, t in bag["dags"]["deid_nightly"]["tasks"].items() if k != "watcher"}
    assert {t["retries"] for t in jobs.values()} == {5}
    # e-mail only (no alert file): one notifier
    assert {t["callbacks"] for t in jobs.values()} == {1}
    for share in (-0.1, 1.5):
        bad = write_settings(tmp_path, nightly={"max_failed_share": share})
        assert set(inspect(af_python, tmp_path, bad)["errors"]) == {"deid_nightly.py", "deid_model_refresh.py"}
