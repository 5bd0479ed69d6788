"""Task factories: every job runs in the project's interpreter, never in Airflow's.

Spark jobs go through `SparkSubmitOperator` with the connection of
`spark_conn_id` (its host is the master: local[*], spark://..., yarn), the
Delta JARs and the project's Python for driver and executors. Other steps
(model training and evaluation) run as shell commands of the project's
interpreter.

Each spark-submit gets a private local folder for the run and local disk
encryption (the project's `jobs/workspace.py`, loaded by path because the
project's packages are not installed in Airflow's virtualenv): shuffle
files and broadcasts of a local-mode driver never lie in clear in a shared
temporary folder, and what a killed task left is swept by the next one.

Every job gets the DAG run's id (`DEID_RUN_ID`) and the task's try number
(`DEID_TRY_NUMBER`), so that the rows it records in the run log
(`job_runs`, `jobs/run_log.py`) of one night share one run id and a retry
is a second attempt of that run, not another run.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import task
from airflow.sdk.exceptions import AirflowFailException

from deid_airflow.alerts import failure_callbacks
from deid_airflow.settings import AirflowSettings, DagCommon


def default_args(s: AirflowSettings, dag: DagCommon) -> dict[str, Any]:
    return {
        "owner": "deid",
        "retries": dag.retries,
        "retry_delay": timedelta(minutes=dag.retry_delay_minutes),
        "execution_timeout": timedelta(minutes=dag.execution_timeout_minutes),
        "on_failure_callback": failure_callbacks(
            s.path(dag.alerts.log_file) if dag.alerts.log_file else None, dag.alerts.email),
    }


def job_env(s: AirflowSettings) -> dict[str, str]:
    python = s.path(s.python)
    env = {
        "PYSPARK_PYTHON": python,
        "PYSPARK_DRIVER_PYTHON": python,
        "PATH": s.path(s.spark_bin_dir) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "DEID_JARS_DIR": s.path(s.jars_dir),
        "DEID_CONFIG": s.path(s.deid_config),
        "DEID_QA_CONFIG": s.path(s.qa_config),
        "TF_CPP_MIN_LOG_LEVEL": "2",
        # the run log's run id and attempt (deid_core/runs.py: RUN_ID_ENV, TRY_NUMBER_ENV), rendered per task
        "DEID_RUN_ID": "{{ run_id }}",
        "DEID_TRY_NUMBER": "{{ ti.try_number }}",
    }
    if s.key_variable:
        # rendered at run time from Airflow's secrets backend; Airflow masks it in logs
        env["DEID_SECRET_KEY"] = "{{ var.value.%s }}" % s.key_variable
    return env


def delta_jars(s: AirflowSettings) -> str:
    jars = sorted(Path(s.path(s.jars_dir)).glob("delta-*.jar"))
    if not jars:
        raise FileNotFoundError(f"no Delta JARs in {s.path(s.jars_dir)}: run `make jars` in the project")
    return ",".join(str(j) for j in jars)


#: job exit codes that no retry can change: 2 a configuration error (e.g. no
#: key for a keyed policy), 3 the QA gate refused to publish, 4 the run
#: report found a job with too many failed rows (jobs/run_report.py)
NOT_RETRIED_EXIT_CODES = frozenset({2, 3, 4})


def load_workspace_module(project_dir: Path) -> ModuleType:
    """The project's `jobs/workspace.py` (standard library only), loaded from its file."""
    path = project_dir / "jobs" / "workspace.py"
    spec = importlib.util.spec_from_file_location("deid_project_workspace", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class DeidSparkSubmitOperator(SparkSubmitOperator):
    """SparkSubmitOperator with a private, encrypted local folder per run, and no pointless retries.

    The driver JVM that spark-submit starts (and, in local mode, its
    executors) keeps its local files in the run's private folder with local
    disk encryption on; the folder is removed when the task ends, and a
    task killed outright has its folder swept by the next one.

    A refused publish is a decision, not a transient error: retrying it
    would only delay the alert (by the retry delay, for every retry).
    """

    def __init__(self, *, project_dir: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.project_dir = str(project_dir)

    def execute(self, context: Any) -> None:
        workspace = load_workspace_module(Path(self.project_dir))
        ws = workspace.RunWorkspace(f"airflow-{self.task_id}")
        try:
            conf = dict(self.conf or {})
            conf.update(workspace.private_spark_conf(ws))
            java_opts = conf.get("spark.driver.extraJavaOptions", "")
            conf["spark.driver.extraJavaOptions"] = f"{java_opts} {workspace.java_tmpdir_option(ws)}".strip()
            self.conf = conf
            self._run_submit(context)
        finally:
            ws.close()

    def _run_submit(self, context: Any) -> None:
        try:
            super().execute(context)
        except Exception:
            process = getattr(self._hook, "_submit_sp", None)
            code = getattr(process, "returncode", None)
            if code in NOT_RETRIED_EXIT_CODES:
                raise AirflowFailException(f"the job exited with code {code}: not retried") from None
            raise


def spark_job(s: AirflowSettings, task_id: str, job: str, args: list[str], **operator_args: Any) -> Any:
    """`jobs/<job>.py` through spark-submit; `operator_args` go to the operator (e.g. `trigger_rule`)."""
    python = s.path(s.python)
    return DeidSparkSubmitOperator(
        task_id=task_id,
        application=str(s.project_dir / "jobs" / f"{job}.py"),
        application_args=args,
        conn_id=s.spark_conn_id,
        jars=delta_jars(s),
        conf={**s.spark_conf, "spark.pyspark.python": python, "spark.pyspark.driver.python": python},
        env_vars=job_env(s),
        name=f"deid-{task_id}",
        verbose=False,
        project_dir=s.project_dir,
        **operator_args,
    )


def fail_if_any_failed(task_id: str = "watcher") -> Any:
    """A last task that fails the DAG run when any other task failed (Airflow's "watcher" pattern).

    Airflow judges a DAG run by its leaf tasks. The run report runs when
    its upstream is done whatever the outcome (`all_done`), so it would be
    the leaf that turns a night whose publish failed into a successful
    run; this task runs only when some task failed (`one_failed`), and
    then fails. It sends no alert of its own: the failed task has already.
    """

    @task(task_id=task_id, trigger_rule="one_failed", retries=0, on_failure_callback=None)
    def watcher() -> None:
        raise AirflowFailException("a task of this DAG run failed: see its log and the run_report task")

    return watcher()


def project_command(s: AirflowSettings, task_id: str, module: str, args: list[str]) -> Any:
    cmd = " ".join(shlex.quote(a) for a in [s.path(s.python), "-m", module, *args])
    return BashOperator(task_id=task_id, bash_command=cmd, cwd=str(s.project_dir), env=job_env(s), append_env=True)
