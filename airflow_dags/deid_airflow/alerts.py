"""Failure alerts that cannot leak PHI: ids and the error's type only.

Airflow's own task logs hold the job's output (which the jobs keep free of
text); an alert goes further (a pager, a chat channel), so it carries only
what identifies the failed task, never an exception message.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable


def alert_line(context: dict[str, Any]) -> dict[str, Any]:
    ti = context.get("task_instance") or context.get("ti")
    exc = context.get("exception")
    return {
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dag_id": getattr(ti, "dag_id", None),
        "task_id": getattr(ti, "task_id", None),
        "run_id": getattr(ti, "run_id", None) or context.get("run_id"),
        "try_number": getattr(ti, "try_number", None),
        "logical_date": str(context.get("logical_date") or context.get("ds") or ""),
        "error_type": type(exc).__name__ if exc is not None else None,
    }


def file_alert(path: str) -> Callable[[dict[str, Any]], None]:
    """A failure callback appending one JSON line to `path` (created private)."""

    def callback(context: dict[str, Any]) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps(alert_line(context)) + "\n")

    return callback


def failure_callbacks(log_file: str | None, emails: list[str]) -> list[Any]:
    callbacks: list[Any] = []
    if log_file:
        callbacks.append(file_alert(log_file))
    if emails:
        from airflow.providers.smtp.notifications.smtp import SmtpNotifier

        callbacks.append(SmtpNotifier(
            to=emails, subject="[deid] {{ ti.dag_id }}.{{ ti.task_id }} failed ({{ run_id }})",
            html_content="Task {{ ti.task_id }} of {{ ti.dag_id }} failed for run {{ run_id }} "
                         "(try {{ ti.try_number }}). See the task log in Airflow.",
        ))
    return callbacks
