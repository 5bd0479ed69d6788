"""`airflow dags test deid_nightly` end to end on synthetic sample reports with local Spark.

The first run ingests, de-identifies, draws the QA sample and is stopped by
the gate at publish (nothing is reviewed yet); the run report still runs
and the watcher fails the DAG run; a reviewer then marks the sample; the
second run for the same date re-runs every task idempotently and
publishes. Slow (two DAG runs of six spark-submits each).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.airflow.conftest import REPO, airflow_env, run_airflow, write_settings
from tests.spark.conftest import TEST_KEY, write_synthetic_e2b

pytestmark = pytest.mark.spark

DATE = "2026-11-26"
#: one `dags test` of six spark-submits; a shared CI machine can take twice its usual time
DAG_RUN_TIMEOUT_S = 1800
TASKS = ["ingest", "deidentify", "qa_sample", "qa_ingest_review", "publish", "maintain_tables", "run_report"]


def _json_output(args: list[str], env: dict[str, str]) -> list[dict]:
    """The JSON table an Airflow CLI command prints (its log lines go to the same stream)."""
    proc = run_airflow([*args, "-o", "json"], env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads([x for x in proc.stdout.splitlines() if x.startswith(("[{", "[]"))][-1])


def task_states(env: dict[str, str]) -> dict[str, str]:
    (run,) = _json_output(["dags", "list-runs", "deid_nightly"], env)
    states = _json_output(["tasks", "states-for-dag-run", "deid_nightly", run["run_id"]], env)
    return {t["task_id"]: t["state"] for t in states}


def test_nightly_dag_gates_then_publishes_after_review(af_python: Path, tmp_path: Path) -> None:
    write_synthetic_e2b(tmp_path / "landing" / DATE, 8, seed=23, files=2)
    key = tmp_path / "key"
    key.write_text(TEST_KEY)
    qa = yaml.safe_load((REPO / "conf" / "qa.yaml").read_text())
    qa.update({"qa_dir": str(tmp_path / "qa")})
    qa["sample"]["reports"] = 4
    qa["gate"]["max_residual_phi_upper"] = 0.05
    (tmp_path / "qa.yaml").write_text(yaml.safe_dump(qa))
    settings = write_settings(
        tmp_path, tables=str(tmp_path / "lake"), qa_config=str(tmp_path / "qa.yaml"), key_file=str(key),
        spark_conf={"spark.driver.memory": "2g"},
        # a retry would come after 3 s: the refused publish must not be retried at all
        nightly={"landing": str(tmp_path / "landing" / "{ds}"), "retries": 1, "retry_delay_minutes": 0.05,
                 "alerts": {"email": [], "log_file": str(tmp_path / "alerts.jsonl")}},
    )
    env = airflow_env(tmp_path, settings)
    local = tmp_path / "local"  # the private folder of the runs (spark-submit's and the jobs' own)
    env["DEID_LOCAL_DIR"] = str(local)

    first = run_airflow(["dags", "test", "deid_nightly", DATE], env, timeout=DAG_RUN_TIMEOUT_S)
    states = task_states(env)
    assert states == {**{t: "success" for t in TASKS}, "publish": "failed", "watcher": "failed"}, first.stdout[-4000:]
    assert "gate: REFUSE" in first.stdout + first.stderr
    # the run report ran after the refusal and named it; every job recorded under the DAG run's id
    (run,) = _json_output(["dags", "list-runs", "deid_nightly"], env)
    first_out = first.stdout + first.stderr
    assert f"run log of {run['run_id']}:" in first_out
    assert f"run {run['run_id']} publish batch failed (exit 3)" in first_out
    assert "failed (their tasks failed and alerted): publish" in first_out
    alerts = [json.loads(x) for x in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert [(a["dag_id"], a["task_id"], a["try_number"]) for a in alerts] == [("deid_nightly", "publish", 1)]
    assert not (tmp_path / "lake" / "published_reports").exists()

    # the reviewer: every item of the sample reviewed, nothing missed
    (sample,) = (tmp_path / "qa" / "samples").iterdir()
    lines = [json.loads(x) for x in (sample / "review.jsonl").read_text().splitlines()]
    assert lines and all(r["model_version"].startswith("model-") for r in lines)  # the hybrid's deep model ran
    for r in lines:
        r["reviewed"], r["reviewer"] = True, "QA1"
    (tmp_path / "qa" / "inbox" / "reviewed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))

    second = run_airflow(["dags", "test", "deid_nightly", DATE], env, timeout=DAG_RUN_TIMEOUT_S)
    assert task_states(env) == {**{t: "success" for t in TASKS}, "watcher": "skipped"}, second.stdout[-4000:]
    out = second.stdout + second.stderr
    assert "already drawn" in out and "gate: PASS" in out
    # `dags test` again for the date is a new DAG run: its own run id, its own rows in the run report
    (rerun,) = _json_output(["dags", "list-runs", "deid_nightly"], env)
    assert rerun["run_id"] != run["run_id"] and f"run log of {rerun['run_id']}:" in out
    for job in ("qa_sample", "qa_ingest_review", "publish"):
        assert re.search(rf"\brun {re.escape(rerun['run_id'])} {job} batch (try \d+ )?ok in ", out), job
    assert list((tmp_path / "qa" / "samples").iterdir()) == [sample]
    assert (tmp_path / "lake" / "published_reports" / "_delta_log").is_dir()
    # every run kept its local files in the private folder and removed them on exit
    assert local.is_dir() and (local.stat().st_mode & 0o777) == 0o700
    assert [p.name for p in local.iterdir()] == []
    # the logs carry no narrative text: only counts, ids and paths
    narrative_words = {w for r in lines for w in r["original"].split() if len(w) > 12 and w.isalpha()}
    assert narrative_words and not any(w in out for w in narrative_words)
