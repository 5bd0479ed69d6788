"""A SparkSession with Delta Lake, configured the one way every job uses.

The Delta JARs come from the Maven cache that `make jars` fills (never from
a download at run time); their folder is `$DEID_JARS_DIR` or `.cache/jars`.
Workers must run the project's interpreter, so PYSPARK_PYTHON defaults to it.

Safe on a shared machine: what Spark writes to local disk (shuffle blocks,
spilled and cached partitions, PySpark broadcasts such as the secret key)
is encrypted (`spark.io.encryption.enabled`, a key that lives only in the
JVMs' memory) and lies in the run's private folder (`jobs.workspace`),
removed when the run ends and swept at the next start when the run was
killed. Under spark-submit the JVM is already running, so its settings come
from the command line (the Airflow operator passes both); the job then
checks that encryption is on and refuses to start otherwise.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import warnings
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.workspace import IO_ENCRYPTION, RunWorkspace, WorkspaceError, java_tmpdir_option, private_spark_conf

REPO = Path(__file__).resolve().parent.parent
JARS_ENV = "DEID_JARS_DIR"
_JAR_NAME = re.compile(r"^(.*)-\d+\.\d+\.\d+\.jar$")
#: the JVM's log level once a session runs (see `delta_session`)
SPARK_LOG_LEVEL = "WARN"


class SparkSetupError(RuntimeError):
    """Spark cannot start as configured (e.g. the Delta JARs are missing)."""


_workspace: RunWorkspace | None = None


def run_workspace(app_name: str = "deid") -> RunWorkspace:
    """This process's private folder (one per process; created, after a sweep, on first use)."""
    global _workspace
    if _workspace is None or _workspace.closed:
        try:
            _workspace = RunWorkspace(app_name)
        except (OSError, WorkspaceError) as exc:
            raise SparkSetupError(f"cannot prepare a private local folder: {exc}") from None
        _workspace.on_close(_stop_active_session)
        _exit_cleanly_on_sigterm()
    return _workspace


def _stop_active_session() -> None:
    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM (Airflow's timeout, a scheduler's kill) exits through atexit, which removes the folder."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def delta_jars(jars_dir: Path | None = None) -> list[Path]:
    folder = Path(jars_dir or os.environ.get(JARS_ENV) or REPO / ".cache" / "jars")
    jars = sorted(folder.glob("delta-*.jar"))
    names = {m.group(1) for j in jars if (m := _JAR_NAME.match(j.name))}
    if not {"delta-spark_2.13", "delta-storage"} <= names:
        raise SparkSetupError(f"Delta Lake JARs not found in {folder}; run `make jars`")
    return jars


def session_or_exit(app_name: str, master: str = "local[*]", **kwargs: object) -> SparkSession:
    """`delta_session` for a job's entry point: a setup error is one line on stderr and exit code 2."""
    import typer

    try:
        return delta_session(app_name, master=master, **kwargs)  # type: ignore[arg-type]
    except SparkSetupError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def under_spark_submit() -> bool:
    """spark-submit starts the JVM first and hands the Python driver its gateway."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def delta_session(app_name: str, master: str = "local[*]", jars_dir: Path | None = None,
                  extra_conf: dict[str, str] | None = None) -> SparkSession:
    """Start (or reuse) a session with the Delta SQL extension and catalog.

    Under spark-submit, its --master and --jars win over `master` and the
    local JAR cache (the job then runs wherever it was submitted).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # The driver may have loaded JAX (the planning step checks that the pipeline loads), and
    # JAX warns at every fork of a multithreaded process. Starting the JVM is fork + exec:
    # no Python code runs in the child, so the deadlock that warning is about cannot happen.
    warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
    ws = run_workspace(app_name)
    builder = SparkSession.builder.appName(app_name)
    if not under_spark_submit():
        # JVM settings only matter before the JVM starts (spark-submit has started it)
        builder = builder.master(master).config("spark.jars", ",".join(str(j) for j in delta_jars(jars_dir)))
        for key, value in private_spark_conf(ws).items():
            builder = builder.config(key, value)
        builder = builder.config("spark.driver.extraJavaOptions",
                                 f"-Dderby.system.home={REPO / 'build'} {java_tmpdir_option(ws)}")
    builder = (
        builder
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.warehouse.dir", str(REPO / "build" / "spark-warehouse"))
    )
    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if session.sparkContext.getConf().get(IO_ENCRYPTION, "false").lower() != "true":
        session.stop()
        raise SparkSetupError(f"local disk encryption is off: pass --conf {IO_ENCRYPTION}=true to spark-submit "
                              "(spilled shuffle blocks and broadcasts would hold text and the key in clear)")
    # At INFO, Delta logs each snapshot whole, with every data file's column statistics: the
    # minimum and maximum of text columns (de-identified text, surrogates, ids) would reach the
    # job's log. Spark's own INFO lines carry no data but are noise; jobs log WARN and above.
    session.sparkContext.setLogLevel(SPARK_LOG_LEVEL)
    return session
