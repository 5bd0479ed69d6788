"""The run log on local Spark and Delta: one row per job run, failures recorded, the QA jobs wired, the report.

A job run appends exactly one row of `deid_core.lakehouse.JOB_RUNS`; a
block that raises or exits non-zero records `failed` and goes on raising;
a run log that cannot be written costs a warning, never the job's outcome;
the QA jobs record themselves under the orchestrator's run id, and the QA
page shows the rows of the ingest and de-identification of its run.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from deid_core.lakehouse import JOB_RUNS
from deid_core.runs import RUN_ID_ENV, TRY_NUMBER_ENV, JobRun
from tests.spark.conftest import assert_layout, write_synthetic_e2b

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
NIGHT = "scheduled__2026-11-26T02:00:00+00:00"
DATE = "2026-11-26"


@pytest.fixture(autouse=True)
def _no_orchestrator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests set the orchestrator's variables themselves."""
    monkeypatch.delenv(RUN_ID_ENV, raising=False)
    monkeypatch.delenv(TRY_NUMBER_ENV, raising=False)


def _rows(spark, tables) -> list:  # type: ignore[no-untyped-def]
    return spark.read.format("delta").load(tables.job_runs).collect()


def test_a_job_run_appends_one_row_of_the_layout(spark, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:  # type: ignore[no-untyped-def]
    from jobs.run_log import job_run
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    with job_run(spark, tables, job="ingest_e2b", run_id="2026-11-26") as log:
        with log.stage("parse"):
            pass
        log.input_count, log.output_count = 6, 120
        log.quarantined("E_PARSE", 2)
        log.quarantined_from(spark.createDataFrame([("E_EMPTY",), ("E_PARSE",)], "error_code string"))
    df = spark.read.format("delta").load(tables.job_runs)
    assert_layout(spark, df, JOB_RUNS)
    (row,) = df.collect()
    run = JobRun.from_row(row.asDict())
    assert (run.run_id, run.job, run.mode, run.status) == ("2026-11-26", "ingest_e2b", "batch", "ok")
    assert (run.input_count, run.output_count, run.failed_count) == (6, 120, None)
    assert run.quarantined_by_code == {"E_EMPTY": 1, "E_PARSE": 3}
    assert set(run.durations) == {"parse"} and run.versions["code"] and run.attempt is None
    assert abs((run.started_at - datetime.now(timezone.utc)).total_seconds()) < 600
    assert run.finished_at >= run.started_at and run.seconds >= 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("run 2026-11-26 ingest_e2b batch ok in ") and "quarantined E_EMPTY 1, E_PARSE 3" in out[-1]
    # table properties of the lakehouse (jobs.tables.create_if_missing), like every other table
    assert spark.sql(f"DESCRIBE DETAIL delta.`{tables.job_runs}`").first()["format"] == "delta"


def test_a_failing_block_records_failed_and_goes_on_raising(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs.run_log import job_run
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    with pytest.raises(KeyError):
        with job_run(spark, tables, job="deidentify", mode="stream", run_id="r1"):
            raise KeyError("Jane Roe, 12 Elm St")  # a message may quote a report: never recorded
    with pytest.raises(typer.Exit):
        with job_run(spark, tables, job="publish", run_id="r1") as log:
            log.input_count = 8
            raise typer.Exit(3)
    with pytest.raises(typer.Exit):
        with job_run(spark, tables, job="ingest_e2b", run_id="r1"):
            raise typer.Exit()  # a clean early exit is a good run
    runs = {r.job: JobRun.from_row(r.asDict()) for r in _rows(spark, tables)}
    assert runs["deidentify"].status == "failed" and runs["deidentify"].detail == {"error": "KeyError"}
    assert runs["publish"].status == "failed" and runs["publish"].detail == {"exit_code": "3"}
    assert runs["publish"].input_count == 8
    assert runs["ingest_e2b"].status == "ok"
    assert not any("Jane" in str(r) for r in _rows(spark, tables))


def test_a_run_log_that_cannot_be_written_leaves_the_outcome_alone(spark, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  capsys: pytest.CaptureFixture) -> None:
    from jobs.run_log import job_run
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    (tmp_path / "lake").mkdir()
    Path(tables.job_runs).write_text("not a table")  # the log's place is taken by a file
    with job_run(spark, tables, job="qa_ingest_review") as log:
        log.input_count = 1
    with pytest.raises(ZeroDivisionError):  # the job's own error, not the log's
        with job_run(spark, tables, job="qa_ingest_review"):
            1 / 0  # noqa: B018
    err = capsys.readouterr().err
    assert err.count("warning: run log row not written") == 2 and "the job's own result stands" in err
    # a value that is not a count is refused when the row is made: a warning, the job goes on
    with job_run(spark, Tables(tmp_path / "other"), job="qa_ingest_review") as log:
        log.detail["note"] = "a sentence\nwith a line break"
    assert "run log row not written" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()


def test_retries_are_attempts_of_one_run(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from jobs.run_log import job_run, read_runs
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    monkeypatch.setenv(RUN_ID_ENV, NIGHT)
    for attempt in ("1", "2"):
        monkeypatch.setenv(TRY_NUMBER_ENV, attempt)
        with pytest.raises(RuntimeError) if attempt == "1" else _nothing():
            with job_run(spark, tables, job="qa_sample", run_id=DATE):
                if attempt == "1":
                    raise RuntimeError("executor lost")
    runs = read_runs(spark, tables, NIGHT)
    assert [(r.attempt, r.status) for r in runs] == [(1, "failed"), (2, "ok")]
    assert len({r.invocation_id for r in runs}) == 2 and {r.detail.get("batch_run_id") for r in runs} == {DATE}
    assert read_runs(spark, tables, "another-run") == []


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture(scope="module")
def night(spark, tmp_path_factory: pytest.TempPathFactory, key_file: Path):  # type: ignore[no-untyped-def]
    """Ingest and de-identify (rules) 8 synthetic reports as one night would, each recorded as the lead wires it."""
    import os

    from jobs.deidentify import prepare, run_batch
    from jobs.ingest_e2b import ingest
    from jobs.run_log import job_run
    from jobs.tables import Tables

    root = tmp_path_factory.mktemp("night")
    write_synthetic_e2b(root / "in", 8, seed=41, files=2)
    tables = Tables(root / "lake")
    os.environ[RUN_ID_ENV] = NIGHT
    try:
        with job_run(spark, tables, job="ingest_e2b") as log:
            stats = ingest(spark, str(root / "in"), tables)
            log.input_count, log.output_count = stats.files, stats.reports
            log.add_duration("ingest", stats.seconds)
        with job_run(spark, tables, job="deidentify") as log:
            ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file,
                          model_dir=None)
            with log.stage("deidentify"):
                rows, failed = run_batch(spark, tables, ctx)
            log.input_count, log.output_count, log.failed_count = rows, rows - failed, failed
    finally:
        del os.environ[RUN_ID_ENV]
    qa = yaml.safe_load((REPO / "conf" / "qa.yaml").read_text())
    qa.update({"qa_dir": str(root / "qa")})
    qa["sample"]["reports"] = 3
    (root / "qa.yaml").write_text(yaml.safe_dump(qa))
    return root, tables


def test_the_qa_jobs_record_their_runs_and_the_page_shows_the_nights(spark, night) -> None:  # type: ignore[no-untyped-def]
    from jobs import publish, qa_ingest_review, qa_sample, run_report
    from jobs.run_log import read_runs

    root, tables = night
    env = {RUN_ID_ENV: NIGHT, TRY_NUMBER_ENV: "1"}
    common = ["--tables", str(tables.root), "--qa-config", str(root / "qa.yaml"), "--master", "local[2]"]
    runner = CliRunner()
    res = runner.invoke(qa_sample.app, [*common, "--run-id", DATE], env=env)
    assert res.exit_code == 0, res.output
    assert re.search(rf"^run {re.escape(NIGHT)} qa_sample batch ok in [\d.]+s: in 8, out 3;", res.output, re.M)
    res = runner.invoke(qa_ingest_review.app, common, env=env)
    assert res.exit_code == 0 and f"run {NIGHT} qa_ingest_review batch ok" in res.output, res.output
    res = runner.invoke(publish.app, [*common, "--run-id", DATE], env=env)
    assert res.exit_code == 3 and f"run {NIGHT} publish batch failed (exit 3)" in res.output, res.output

    runs = {r.job: r for r in read_runs(spark, tables, NIGHT)}
    assert set(runs) == {"ingest_e2b", "deidentify", "qa_sample", "qa_ingest_review", "publish"}
    assert runs["qa_sample"].detail["batch_run_id"] == DATE and runs["qa_sample"].detail["sample_id"]
    assert runs["qa_sample"].versions["policy"].startswith("hipaa_safe_harbor")
    assert runs["publish"].detail == {"batch_run_id": DATE, "exit_code": "3", "gate": "refused"}
    assert runs["publish"].input_count == 8 and runs["publish"].output_count == 0
    assert all(r.attempt == 1 for j, r in runs.items() if j not in ("ingest_e2b", "deidentify"))

    # the page of the sample: the run log card with the night's ingest and de-identification
    (page,) = (root / "qa" / "samples").glob("*/report.html")
    card = page.read_text().split('<section class="card runlog">')[1].split("</section>")[0]
    assert NIGHT in card and "ingest_e2b" in card and "deidentify" in card and "qa_sample" not in card

    # the run report: every job by its last attempt, the refusal named; a share breach fails it (exit 4)
    report_args = ["--tables", str(tables.root), "--master", "local[2]", "--max-failed-share", "0.01",
                   "--expect", "ingest_e2b", "--expect", "deidentify", "--expect", "qa_sample"]
    res = runner.invoke(run_report.app, report_args, env=env)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == f"run log of {NIGHT}: 5 jobs, 5 invocations"
    assert "failed (their tasks failed and alerted): publish" in res.output and "no run recorded" not in res.output
    _append(spark, tables, JobRun(
        run_id=NIGHT, job="deidentify", invocation_id="retry", mode="stream", status="ok", attempt=2,
        started_at=datetime.now(timezone.utc) + timedelta(seconds=1), finished_at=datetime.now(timezone.utc),
        seconds=1.0, input_count=100, output_count=95, failed_count=5))
    res = runner.invoke(run_report.app, report_args, env=env)
    assert res.exit_code == 4 and "PROBLEM deidentify: 5 of 100 failed (5.00%" in res.output, res.output
    assert "  earlier attempt: run" in res.output
    # no text of a report anywhere in the run log
    narratives = [t.text for r in spark.read.format("delta").load(tables.bronze).collect() for t in r.text_fields]
    words = {w for t in narratives for w in t.split() if len(w) > 8 and w.isalpha()}
    logged = " ".join(str(r.asDict()) for r in _rows(spark, tables))
    assert words and not any(w in logged for w in words)


def _append(spark, tables, run: JobRun) -> None:  # type: ignore[no-untyped-def]
    from jobs.run_log import append_run

    append_run(spark, tables, run)
