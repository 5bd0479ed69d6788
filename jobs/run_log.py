"""The run log, Spark side: a job times itself, counts what it did, and appends one row to ``job_runs``.

Why: each job printed its own summary in its own words, and once Airflow
rotated the task logs nothing said what a night had done. A job wraps its
work in :func:`job_run`; when the block ends, however it ends, one row of
:data:`deid_core.lakehouse.JOB_RUNS` is appended to ``job_runs`` and the
same facts are printed as one line (``deid_core.runs.summary_line``)::

    with job_run(spark, tables, job="publish", run_id=run_id) as log:
        with log.stage("gate"):
            decision, published = run(...)
        log.input_count, log.output_count = batch_size, published
        log.versions["model"] = ...

Counts may be set at any point inside the block (after the fact is fine);
unset counts stay NULL. What ends the block decides the status:

* the block finishes, or exits with code 0 (``typer.Exit()``): ``ok``;
* it raises, or exits with another code (``typer.Exit(3)``): ``failed``,
  with the exit code or the exception's type (never its message, which
  may quote a report) in ``detail``; the exception goes on unchanged.

Writing the row is best effort by design: a job that did its work and
then could not append a row of counts (a full disk, a broken log table)
has still done its work. The failure is one warning line on stderr and
the job's exit code is unchanged, so a good run is never turned into a
failed one, nor a failed one into something else.

The row is written with the job's own Spark session (``spark``: a session,
a function that returns the current one, or None for the active session).
A job that stops before it starts Spark (a configuration error, exit 2;
a quiet night's ingest) prints its line but records no row: starting Spark
only to say that nothing ran would cost more than the run.

The run id is ``$DEID_RUN_ID`` (the nightly DAG sets it to Airflow's run
id for every task), else the job's ``--run-id``, else a generated one
(``deid_core.runs.resolve_run_id``); each process gets its own invocation
id, and ``$DEID_TRY_NUMBER`` says which Airflow try it was, so a retry is
a second row of the same run, never a second run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import metadata

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deid_core.lakehouse import JOB_RUNS
from deid_core.runs import (
    STATUS_FAILED,
    STATUS_OK,
    JobRun,
    RunLogError,
    attempt_from_env,
    new_invocation_id,
    resolve_run_id,
    summary_line,
)
from jobs.tables import Tables, create_if_missing, exists

SessionSource = SparkSession | Callable[[], SparkSession | None] | None


def code_version() -> str:
    """This project's installed version (the ``code`` entry of every row's versions)."""
    try:
        return metadata.version("pv-deid")
    except metadata.PackageNotFoundError:
        return "unknown"


class JobRunLog:
    """What a job tells the run log while it runs; `job_run` turns it into one row when the block ends."""

    def __init__(self, *, job: str, mode: str, run_id: str, batch_run_id: str | None = None) -> None:
        self.job = job
        self.mode = mode
        self.run_id = run_id
        self.invocation_id = new_invocation_id()
        self.attempt = attempt_from_env()
        self.started_at = datetime.now(timezone.utc)
        self._t0 = time.perf_counter()
        self.input_count: int | None = None
        self.output_count: int | None = None
        self.failed_count: int | None = None
        self.quarantined_by_code: dict[str, int] = {}
        self.durations: dict[str, float] = {}
        self.versions: dict[str, str] = {"code": code_version()}
        self.detail: dict[str, str] = {}
        if batch_run_id and batch_run_id != run_id:
            self.detail["batch_run_id"] = batch_run_id
        #: the session to write with, when the job starts Spark inside the block
        self.spark: SparkSession | None = None

    def quarantined(self, code: str, n: int = 1) -> None:
        """`n` more rows quarantined with error `code` (adds up over calls)."""
        self.quarantined_by_code[code] = self.quarantined_by_code.get(code, 0) + int(n)

    def quarantined_from(self, df: DataFrame, column: str = "error_code") -> None:
        """Add the rows of `df` by their error code (one small aggregate; `df` is not otherwise touched)."""
        for code, n in count_by(df, column).items():
            self.quarantined(code, n)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a named stage of the job (a stage entered twice adds up)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add_duration(name, time.perf_counter() - t0)

    def add_duration(self, name: str, seconds: float) -> None:
        """A stage's time measured by the job itself (e.g. ``IngestStats.seconds``)."""
        self.durations[name] = self.durations.get(name, 0.0) + max(0.0, float(seconds))

    def finish(self, status: str, detail: dict[str, str] | None = None) -> JobRun:
        """The row as it stands now (`status` and extra `detail` from how the block ended)."""
        return JobRun(
            run_id=self.run_id, job=self.job, invocation_id=self.invocation_id, mode=self.mode, status=status,
            started_at=self.started_at, finished_at=datetime.now(timezone.utc),
            seconds=time.perf_counter() - self._t0, attempt=self.attempt, input_count=self.input_count,
            output_count=self.output_count, failed_count=self.failed_count,
            quarantined_by_code=self.quarantined_by_code, durations=self.durations,
            versions={k: str(v) for k, v in self.versions.items()},
            detail={**{k: str(v) for k, v in self.detail.items()}, **(detail or {})},
        )


def count_by(df: DataFrame, column: str = "error_code") -> dict[str, int]:
    """Rows of `df` per value of `column` (NULL counted as ``none``)."""
    rows = df.groupBy(F.coalesce(F.col(column), F.lit("none")).alias("k")).count().collect()
    return {r["k"]: int(r["count"]) for r in rows}


def _ending(exc: BaseException) -> tuple[str, dict[str, str]]:
    """Status and detail of a block that raised `exc`: exit codes as such, other exceptions by type only."""
    code: object = None
    if isinstance(exc, SystemExit):
        code = exc.code
    elif hasattr(exc, "exit_code"):  # click/typer's Exit
        code = getattr(exc, "exit_code")
    else:
        return STATUS_FAILED, {"error": type(exc).__name__}
    if code in (None, 0):
        return STATUS_OK, {}
    return STATUS_FAILED, {"exit_code": str(code) if isinstance(code, int) else "1"}


def ensure_table(spark: SparkSession, tables: Tables) -> None:
    """``job_runs`` with the lakehouse's table properties (``jobs.tables.create_if_missing``), if missing."""
    create_if_missing(spark, tables.job_runs, spark.createDataFrame([], JOB_RUNS.schema).schema)


def append_run(spark: SparkSession, tables: Tables, run: JobRun) -> None:
    """Append `run`: a blind append, which never conflicts with another job appending at the same time."""
    ensure_table(spark, tables)
    spark.createDataFrame([run.row()], JOB_RUNS.schema).write.format("delta").mode("append").save(tables.job_runs)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def record(source: SessionSource, tables: Tables, run: JobRun, echo: Callable[[str], None] | None = None) -> bool:
    """Print the run's line and append its row; False (with one warning on stderr) when the row was not written."""
    (echo or (lambda line: print(line, flush=True)))(summary_line(run))
    try:
        spark = source if isinstance(source, SparkSession) else None
        spark = spark or (source() if callable(source) else SparkSession.getActiveSession())
    except Exception as exc:  # noqa: BLE001 - no session: the line above is all there is
        _warn(f"run log row not written: no Spark session ({type(exc).__name__})")
        return False
    if spark is None:
        _warn("run log row not written: the job ended before it started Spark")
        return False
    try:
        append_run(spark, tables, run)
    except Exception as exc:  # noqa: BLE001 - best effort by design (see the module docstring)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        _warn(f"run log row not written to {tables.job_runs} ({type(exc).__name__}: {first}); "
              "the job's own result stands")
        return False
    return True


@contextmanager
def job_run(spark: SessionSource, tables: Tables, *, job: str, mode: str = "batch", run_id: str | None = None,
            echo: Callable[[str], None] | None = None) -> Iterator[JobRunLog]:
    """Log the enclosed block as one run of `job`: one row in ``job_runs`` and one printed line at its end.

    `run_id` is the job's own ``--run-id`` where it has one (``$DEID_RUN_ID``
    wins; see the module docstring). The block's exception, or exit, goes
    on unchanged after the row is written.
    """
    log = JobRunLog(job=job, mode=mode, run_id=resolve_run_id(run_id), batch_run_id=run_id)
    status, detail = STATUS_OK, {}
    try:
        yield log
    except BaseException as exc:
        status, detail = _ending(exc)
        raise
    finally:
        try:
            run = log.finish(status, detail)
        except RunLogError as exc:
            # a value the job set is not a count or a short identifier: say so, keep the job's outcome
            _warn(f"run log row not written: {exc}")
        else:
            record(log.spark or spark, tables, run, echo)


def read_runs(spark: SparkSession, tables: Tables, run_id: str | None = None) -> list[JobRun]:
    """Every row of ``job_runs`` (of `run_id` only, when given), in start order; [] before the first run."""
    if not exists(spark, tables.job_runs):
        return []
    df = spark.read.format("delta").load(tables.job_runs)
    if run_id is not None:
        df = df.filter(F.col("run_id") == run_id)
    return sorted((JobRun.from_row(r.asDict()) for r in df.select(*JOB_RUNS.names).collect()),
                  key=lambda r: r.started_at)


def latest_runs(spark: SparkSession, tables: Tables, exclude_jobs: tuple[str, ...] = ()) -> list[JobRun]:
    """The latest row of each job (but `exclude_jobs`), in start order."""
    if not exists(spark, tables.job_runs):
        return []
    from pyspark.sql import Window

    df = spark.read.format("delta").load(tables.job_runs)
    if exclude_jobs:
        df = df.filter(~F.col("job").isin(*exclude_jobs))
    w = Window.partitionBy("job").orderBy(F.col("started_at").desc(), F.col("attempt").desc_nulls_last())
    rows = df.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").select(*JOB_RUNS.names).collect()
    return sorted((JobRun.from_row(r.asDict()) for r in rows), key=lambda r: r.started_at)


def batch_runs(spark: SparkSession, tables: Tables, run_id: str, exclude_jobs: tuple[str, ...] = ()) -> tuple[
        list[JobRun], bool]:
    """The rows of run `run_id` (but `exclude_jobs`), or, when it has none, the latest run of each job.

    The second value says which: True for the run's own rows. Outside
    Airflow (``make run``) each job draws its own run id, so the QA page of
    a local run falls back to the latest runs.
    """
    own = [r for r in read_runs(spark, tables, run_id) if r.job not in exclude_jobs]
    if own:
        return own, True
    return latest_runs(spark, tables, exclude_jobs), False
