"""Print what every job of one orchestrated run recorded in ``job_runs``, and fail on too many failed rows.

    python -m jobs.run_report --tables build/lakehouse --run-id RUN [--max-failed-share 0.01]
                              [--expect ingest_e2b --expect deidentify ...]

Why: the nightly DAG's last task. Every task of a night prints its own
line, in its own log; this prints them together, each job by its last
attempt with the earlier ones under it, and names the expected jobs that
recorded nothing. It exits 4 when a job's failed rows exceed
``--max-failed-share`` of its input (``conf/airflow.yaml``:
``nightly.max_failed_share``): every task may have succeeded and still a
share of the night's fields came out fully masked. A job that failed is
shown, not judged again: its own task failed and alerted.

It only reads: it records no row of its own in the run log it reports on.
"""

from __future__ import annotations

from pathlib import Path

import typer

from deid_core.runs import RUN_ID_ENV, report
from jobs.tables import Tables

app = typer.Typer(add_completion=False, help=__doc__)

#: a job of the run failed more rows than the configured share (not retried: the rows will not change)
EXIT_TOO_MANY_FAILED = 4


@app.command()
def main(
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    run_id: str = typer.Option(..., "--run-id", envvar=RUN_ID_ENV, help=f"the run to report (default: ${RUN_ID_ENV})"),
    max_failed_share: float = typer.Option(None, "--max-failed-share", min=0.0, max=1.0,
                                           help="fail (exit 4) when a job failed more than this share of its input"),
    expect: list[str] = typer.Option([], "--expect", help="a job the run should have recorded (repeatable)"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
) -> None:
    from jobs.run_log import read_runs
    from jobs.spark_session import session_or_exit

    spark = session_or_exit("deid-run-report", master=master)
    result = report(run_id, read_runs(spark, Tables(tables.resolve()), run_id), expected_jobs=expect,
                    max_failed_share=max_failed_share)
    for line in result.lines:
        typer.echo(line)
    if result.problems:
        raise typer.Exit(EXIT_TOO_MANY_FAILED)


if __name__ == "__main__":
    app()
