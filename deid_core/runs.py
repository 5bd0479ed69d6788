"""One job run as the run log records it, and the one line that says how it went.

Why a run log: a night's outcome was spread over five task logs, each in
its own words, and nothing kept them once Airflow rotated its logs. Every
job run now leaves one row in the ``job_runs`` Delta table (the layout is
:data:`deid_core.lakehouse.JOB_RUNS`) and prints the same facts as one line
(:func:`summary_line`): the nightly DAG's report, the QA page and a person
with a SQL prompt all read the same thing.

Why here and Spark-free: the row, its checks and its one-line form are
plain data. The Spark side (``jobs.run_log``: timing a job, appending the
row) and the QA page (``deid_core.qa.html_report``) both use them, and the
formatter and the report's verdict (:func:`report`) are tested without a
Spark session.

A run log row holds counts, durations, versions and short identifiers,
never text of a report: :class:`JobRun` refuses names that are not short
identifiers and values that span lines or run long, so a message (which
may quote a report) cannot slip in. A failed run records the type of the
exception or the exit code, never its message.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from deid_core.lakehouse import JOB_RUNS

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUSES = (STATUS_OK, STATUS_FAILED)

#: the orchestrator's run id, shared by every job of one DAG run (the nightly DAG sets it to Airflow's run id)
RUN_ID_ENV = "DEID_RUN_ID"
#: the orchestrator's try number of the task (Airflow's ``ti.try_number``)
TRY_NUMBER_ENV = "DEID_TRY_NUMBER"

#: a job, a mode, a stage, an error code, a map key: a short identifier
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+\-]{0,63}")
#: a run id: Airflow's (``scheduled__2026-11-26T02:00:00+00:00``), a date, a generated id; no spaces
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+\-@/]{0,249}")
#: longest value of `versions` and `detail`: a version string or a path-free fact, never a sentence of text
MAX_VALUE_CHARS = 120


class RunLogError(ValueError):
    """A run log value that is not a count, a duration or a short identifier."""


def _check_name(what: str, value: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise RunLogError(f"{what} must be a short identifier (letters, digits, _ . : + -), got {value!r:.80}")
    return value


def _check_value(what: str, value: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_VALUE_CHARS or not value.isprintable():
        raise RunLogError(f"{what} must be one printable line of at most {MAX_VALUE_CHARS} characters")
    return value


def _check_count(what: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RunLogError(f"{what} must be a count (an int >= 0) or None, got {value!r:.40}")
    return value


def _utc(moment: datetime) -> datetime:
    """Aware UTC; a naive datetime is local time (how PySpark hands back a timestamp)."""
    return moment.astimezone(timezone.utc)


@dataclass(frozen=True)
class JobRun:
    """One row of ``job_runs``: one invocation of one job, as it ended.

    `input_count`, `output_count` and `failed_count` mean what the job
    says they mean (files, report versions, fields, sampled reports), the
    same for every run of that job; None where a job has no such count.
    `quarantined_by_code` counts what went to quarantine by error code;
    `durations` are named stages in seconds; `versions` are model,
    dictionary, policy and code versions; `detail` holds a few small facts
    (``exit_code``, ``error``, ``sample_id``).
    """

    run_id: str
    job: str
    invocation_id: str
    mode: str
    status: str
    started_at: datetime
    finished_at: datetime
    seconds: float
    attempt: int | None = None
    input_count: int | None = None
    output_count: int | None = None
    failed_count: int | None = None
    quarantined_by_code: Mapping[str, int] = field(default_factory=dict)
    durations: Mapping[str, float] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    detail: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.run_id, str) or not _RUN_ID.fullmatch(self.run_id):
            raise RunLogError(f"run id must be a short identifier without spaces, got {self.run_id!r:.80}")
        _check_name("job", self.job)
        _check_name("invocation id", self.invocation_id)
        _check_name("mode", self.mode)
        if self.status not in STATUSES:
            raise RunLogError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r:.40}")
        for what in ("attempt", "input_count", "output_count", "failed_count"):
            _check_count(what, getattr(self, what))
        for code, n in self.quarantined_by_code.items():
            _check_name("quarantine code", code)
            _check_count(f"quarantined {code}", n)
        for stage, s in self.durations.items():
            _check_name("stage", stage)
            if not isinstance(s, (int, float)) or isinstance(s, bool) or s < 0:
                raise RunLogError(f"duration of {stage} must be seconds >= 0")
        for what, values in (("version", self.versions), ("detail", self.detail)):
            for k, v in values.items():
                _check_name(f"{what} name", k)
                _check_value(f"{what} {k}", v)
        # normalised copies: sorted maps print and compare the same everywhere
        object.__setattr__(self, "started_at", _utc(self.started_at))
        object.__setattr__(self, "finished_at", _utc(self.finished_at))
        object.__setattr__(self, "seconds", float(self.seconds))
        object.__setattr__(self, "quarantined_by_code", dict(sorted(self.quarantined_by_code.items())))
        object.__setattr__(self, "durations", {k: float(v) for k, v in self.durations.items()})
        object.__setattr__(self, "versions", dict(sorted(self.versions.items())))
        object.__setattr__(self, "detail", dict(sorted(self.detail.items())))

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    @property
    def quarantined(self) -> int:
        return sum(self.quarantined_by_code.values())

    def failed_share(self) -> float | None:
        """Failed / input, where the job counts both and had input; else None."""
        if self.failed_count is None or not self.input_count:
            return None
        return self.failed_count / self.input_count

    def row(self) -> tuple[Any, ...]:
        """The values in :data:`~deid_core.lakehouse.JOB_RUNS` column order (for ``createDataFrame``)."""
        return tuple(getattr(self, name) if name in _FIELDS else None for name in JOB_RUNS.names)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> JobRun:
        """A row read back from ``job_runs`` (a Spark Row's ``asDict()`` or a plain mapping)."""
        values = {name: row.get(name) for name in JOB_RUNS.names if name in _FIELDS}
        for name in ("quarantined_by_code", "durations", "versions", "detail"):
            values[name] = dict(values.get(name) or {})
        return cls(**values)


_FIELDS = frozenset(JobRun.__dataclass_fields__)


def new_run_id(now: datetime | None = None) -> str:
    """A run id for a run no orchestrator named: ``local-20261126T093000Z-1a2b3c4d``."""
    moment = _utc(now or datetime.now(timezone.utc))
    return f"local-{moment:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def new_invocation_id() -> str:
    """Unique per process: tells two attempts (or two manual runs) of one run apart."""
    return uuid.uuid4().hex


def resolve_run_id(option: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The run id a job records: ``$DEID_RUN_ID``, else the job's ``--run-id``, else a new one.

    The orchestrator's id comes first: the nightly DAG gives every task the
    same ``DEID_RUN_ID`` (Airflow's run id), while ``qa_sample`` and
    ``publish`` also get ``--run-id {{ ds }}``, the date their sample and
    gold rows are named by. One night's rows must share one id, or the
    DAG's report could not find them; the job's own ``--run-id`` is kept
    in the row's detail as ``batch_run_id``.
    """
    env = os.environ if environ is None else environ
    for candidate in (env.get(RUN_ID_ENV, ""), option or ""):
        candidate = candidate.strip()
        if candidate:
            return candidate
    return new_run_id()


def attempt_from_env(environ: Mapping[str, str] | None = None) -> int | None:
    """Airflow's try number of the task (``$DEID_TRY_NUMBER``), None outside Airflow or when unreadable."""
    raw = (os.environ if environ is None else environ).get(TRY_NUMBER_ENV, "").strip()
    return int(raw) if raw.isdigit() else None


def _seconds(s: float) -> str:
    return f"{s:.1f}s" if s < 600 else f"{s / 60:.1f}min"


def summary_line(run: JobRun) -> str:
    """The run in one line, the same in a job's output, the DAG's report and the QA page::

        run scheduled__2026-11-26T02:00:00+00:00 ingest_e2b batch ok in 12.3s: in 6, out 120,
        quarantined E_PARSE 1; stages parse 8.1s, merge 3.0s; versions code 0.1.0

    (one line; wrapped here). Counts a job did not set are left out; a
    failed run says how (``failed (exit 3)``, ``failed (KeyError)``) and
    a retry says which try it was.
    """
    how = run.status
    if not run.ok:
        reason = f"exit {run.detail['exit_code']}" if "exit_code" in run.detail else run.detail.get("error")
        how += f" ({reason})" if reason else ""
    attempt = f" try {run.attempt}" if run.attempt and run.attempt > 1 else ""
    head = f"run {run.run_id} {run.job} {run.mode}{attempt} {how} in {_seconds(run.seconds)}"
    counts = [f"{label} {n}" for label, n in
              (("in", run.input_count), ("out", run.output_count), ("failed", run.failed_count)) if n is not None]
    if run.quarantined_by_code:
        counts.append("quarantined " + ", ".join(f"{c} {n}" for c, n in run.quarantined_by_code.items()))
    parts = [", ".join(counts) or "no counts"]
    if run.durations:
        parts.append("stages " + ", ".join(f"{k} {_seconds(v)}" for k, v in run.durations.items()))
    if run.versions:
        parts.append("versions " + ", ".join(f"{k} {v}" for k, v in run.versions.items()))
    facts = {k: v for k, v in run.detail.items() if k not in ("exit_code", "error")}
    if facts:
        parts.append(", ".join(f"{k} {v}" for k, v in facts.items()))
    return f"{head}: " + "; ".join(parts)


def latest_per_job(runs: Iterable[JobRun]) -> list[JobRun]:
    """The last invocation of each job (a retry supersedes the attempt before it), in start order."""
    latest: dict[str, JobRun] = {}
    for run in runs:
        seen = latest.get(run.job)
        if seen is None or (run.started_at, run.attempt or 0) > (seen.started_at, seen.attempt or 0):
            latest[run.job] = run
    return sorted(latest.values(), key=lambda r: r.started_at)


@dataclass(frozen=True)
class RunReport:
    """What the report of one orchestrated run says: its lines, and what should fail it."""

    lines: tuple[str, ...]
    problems: tuple[str, ...]


def report(run_id: str, runs: Sequence[JobRun], *, expected_jobs: Sequence[str] = (),
           max_failed_share: float | None = None) -> RunReport:
    """The run's jobs, each by its last invocation (earlier attempts listed under it), and its verdict.

    A problem is a job whose failed rows exceed `max_failed_share` of its
    input: every task may have succeeded, and still one report field in
    twenty came out fully masked. A job whose last invocation failed is
    shown but is not a problem of the report's own: its task failed and
    alerted already. An expected job without a row is shown (a quiet
    night's ingest starts no Spark and records nothing; a job killed
    outright could not write its row) and is not a problem either.
    """
    mine = [r for r in runs if r.run_id == run_id]
    latest = latest_per_job(mine)
    lines: list[str] = [f"run log of {run_id}: {len(latest)} jobs, {len(mine)} invocations"]
    problems: list[str] = []
    for last in latest:
        lines.append(summary_line(last))
        earlier = sorted((r for r in mine if r.job == last.job and r is not last), key=lambda r: r.started_at)
        lines.extend(f"  earlier attempt: {summary_line(r)}" for r in earlier)
        share = last.failed_share()
        if max_failed_share is not None and share is not None and share > max_failed_share:
            problems.append(f"{last.job}: {last.failed_count} of {last.input_count} failed "
                            f"({share:.2%}, above the limit of {max_failed_share:.2%})")
    recorded = {r.job for r in latest}
    lines.extend(f"{job}: no run recorded" for job in expected_jobs if job not in recorded)
    failed = [r.job for r in latest if not r.ok]
    if failed:
        lines.append(f"failed (their tasks failed and alerted): {', '.join(failed)}")
    lines.extend(f"PROBLEM {p}" for p in problems)
    return RunReport(tuple(lines), tuple(problems))
