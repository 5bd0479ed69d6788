"""The run log's row and its one line (`deid_core.runs`), without Spark."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from deid_core.lakehouse import JOB_RUNS
from deid_core.runs import (
    RUN_ID_ENV,
    TRY_NUMBER_ENV,
    JobRun,
    RunLogError,
    attempt_from_env,
    latest_per_job,
    new_run_id,
    report,
    resolve_run_id,
    summary_line,
)

T0 = datetime(2026, 11, 26, 2, 0, tzinfo=timezone.utc)
RUN = "scheduled__2026-11-26T02:00:00+00:00"


def make_run(job: str = "ingest_e2b", *, status: str = "ok", minutes: int = 0, **kw: object) -> JobRun:
    values: dict[str, object] = {
        "run_id": RUN, "job": job, "invocation_id": f"{job}-{minutes}", "mode": "batch", "status": status,
        "started_at": T0 + timedelta(minutes=minutes), "finished_at": T0 + timedelta(minutes=minutes, seconds=12),
        "seconds": 12.34,
    }
    values.update(kw)
    return JobRun(**values)  # type: ignore[arg-type]


def test_summary_line_of_an_ingest() -> None:
    run = make_run(input_count=6, output_count=120, failed_count=0,
                   quarantined_by_code={"E_PARSE": 2, "E_EMPTY": 1}, durations={"parse": 8.14, "merge": 3.0},
                   versions={"code": "0.1.0"})
    assert summary_line(run) == (
        f"run {RUN} ingest_e2b batch ok in 12.3s: in 6, out 120, failed 0, quarantined E_EMPTY 1, E_PARSE 2; "
        "stages parse 8.1s, merge 3.0s; versions code 0.1.0")


def test_summary_line_leaves_out_what_a_job_did_not_count() -> None:
    assert summary_line(make_run("qa_ingest_review")) == f"run {RUN} qa_ingest_review batch ok in 12.3s: no counts"
    line = summary_line(make_run("qa_sample", output_count=4, detail={"sample_id": "qa-1"}))
    assert line.endswith(": out 4; sample_id qa-1")


def test_a_failed_run_says_how_and_a_retry_says_which_try() -> None:
    refused = make_run("publish", status="failed", attempt=2, input_count=8, output_count=0,
                       detail={"exit_code": "3", "gate": "refused"})
    assert summary_line(refused) == (
        f"run {RUN} publish batch try 2 failed (exit 3) in 12.3s: in 8, out 0; gate refused")
    crashed = make_run("deidentify", status="failed", attempt=1, detail={"error": "Py4JJavaError"})
    assert summary_line(crashed).startswith(f"run {RUN} deidentify batch failed (Py4JJavaError) in 12.3s")


def test_long_runs_are_shown_in_minutes_and_the_line_is_one_line() -> None:
    line = summary_line(make_run(seconds=3725.0, durations={"deidentify": 3600.0}))
    assert " in 62.1min:" in line and "deidentify 60.0min" in line
    assert "\n" not in line


@pytest.mark.parametrize(("field", "value"), [
    ("job", "ingest e2b"), ("job", ""), ("mode", "batch\nnarrative"), ("run_id", "a run"), ("status", "maybe"),
    ("input_count", -1), ("input_count", 1.5), ("input_count", True),
    ("quarantined_by_code", {"Jane Roe was admitted": 1}), ("quarantined_by_code", {"E_PARSE": -2}),
    ("durations", {"merge": -1.0}), ("versions", {"model": "x" * 121}),
    ("detail", {"note": "line one\nline two"}), ("detail", {"a note": "x"}),
])
def test_a_row_holds_counts_and_short_identifiers_only(field: str, value: object) -> None:
    with pytest.raises(RunLogError):
        make_run(**{field: value})


def test_the_row_follows_the_layout_and_reads_back() -> None:
    run = make_run(attempt=1, input_count=3, quarantined_by_code={"E_READ": 1}, durations={"merge": 1.0},
                   versions={"model": "m-1"}, detail={"exit_code": "0"})
    row = run.row()
    assert len(row) == len(JOB_RUNS.names)
    by_name = dict(zip(JOB_RUNS.names, row))
    assert by_name["run_id"] == RUN and by_name["quarantined_by_code"] == {"E_READ": 1}
    assert by_name["output_count"] is None
    # as PySpark hands it back: naive local timestamps
    back = JobRun.from_row({**by_name, "started_at": run.started_at.astimezone().replace(tzinfo=None),
                            "finished_at": run.finished_at.astimezone().replace(tzinfo=None)})
    assert back == run
    assert set(JOB_RUNS.key) <= set(JOB_RUNS.names)


def test_the_run_id_is_the_orchestrators_then_the_jobs_then_a_new_one() -> None:
    assert resolve_run_id("2026-11-26", {RUN_ID_ENV: RUN}) == RUN
    assert resolve_run_id("2026-11-26", {RUN_ID_ENV: "  "}) == "2026-11-26"
    generated = resolve_run_id(None, {})
    assert generated.startswith("local-") and generated != resolve_run_id(None, {})
    assert new_run_id(T0).startswith("local-20261126T020000Z-")
    assert attempt_from_env({TRY_NUMBER_ENV: "2"}) == 2
    assert attempt_from_env({TRY_NUMBER_ENV: "{{ ti.try_number }}"}) is None and attempt_from_env({}) is None


def test_a_retry_supersedes_the_attempt_before_it() -> None:
    first = make_run("publish", status="failed", attempt=1, minutes=10, detail={"exit_code": "3"})
    second = make_run("publish", attempt=2, minutes=20)
    ingest = make_run("ingest_e2b", attempt=1, minutes=0)
    assert latest_per_job([second, ingest, first]) == [ingest, second]


def test_the_report_lists_the_night_and_fails_only_on_too_many_failed_rows() -> None:
    runs = [
        make_run("ingest_e2b", input_count=6, output_count=120),
        make_run("deidentify", minutes=5, input_count=1000, output_count=980, failed_count=20),
        make_run("publish", status="failed", minutes=9, attempt=1, detail={"exit_code": "3"}),
        make_run("publish", minutes=30, attempt=2, input_count=100, output_count=100),
        make_run("ingest_e2b", run_id="scheduled__2026-11-25T02:00:00+00:00"),  # another night: not shown
    ]
    expected = ["ingest_e2b", "deidentify", "qa_sample", "publish"]
    strict = report(RUN, runs, expected_jobs=expected, max_failed_share=0.01)
    assert strict.lines[0] == f"run log of {RUN}: 3 jobs, 4 invocations"
    assert strict.lines[1].startswith(f"run {RUN} ingest_e2b batch ok")
    assert any(line.startswith("  earlier attempt: ") and "failed (exit 3)" in line for line in strict.lines)
    assert "qa_sample: no run recorded" in strict.lines
    assert strict.problems == ("deidentify: 20 of 1000 failed (2.00%, above the limit of 1.00%)",)
    assert report(RUN, runs, expected_jobs=expected, max_failed_share=0.05).problems == ()
    assert report(RUN, runs).problems == ()


def test_a_failed_last_attempt_is_named_but_left_to_its_own_task() -> None:
    runs = [make_run("publish", status="failed", attempt=3, detail={"exit_code": "3"})]
    result = report(RUN, runs, max_failed_share=0.0)
    assert result.problems == ()
    assert result.lines[-1] == "failed (their tasks failed and alerted): publish"
