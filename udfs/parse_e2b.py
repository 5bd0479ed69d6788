"""The pandas UDF of the ingest job: E2B file paths in, report rows (or quarantine rows) out.

A file is parsed whole before any of its reports is emitted: a file that
turns out malformed half-way goes to quarantine as one row with the reason,
rather than half-ingested. Reasons name the problem, never the content
(`E2BParseError` messages carry no text; other errors are named by type).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pandas as pd

from deid_core.e2b.parse import E2BParseError, iter_reports

_OUTPUT: tuple[tuple[str, str], ...] = (
    ("case_id", "string"), ("version", "string"), ("format", "string"), ("report_id", "string"),
    ("received_date", "string"), ("sender", "string"), ("file_sha256", "string"), ("content_sha256", "string"),
    ("source_file", "string"), ("ingest_time", "timestamp"),
    ("text_fields", "array<struct<path:string,text:string>>"),
    ("structured_fields", "array<struct<path:string,label:string,value:string>>"),
    ("error_code", "string"), ("reason", "string"), ("country", "string"),
)
_COLUMNS = [n for n, _ in _OUTPUT]
OUTPUT_SCHEMA = ", ".join(f"{n} {t}" for n, t in _OUTPUT)

E_READ = "E_READ"    # the file could not be read
E_PARSE = "E_PARSE"  # not E2B, not well-formed, or a report without identity
E_EMPTY = "E_EMPTY"  # well-formed E2B without any report


def local_path(uri: str) -> Path:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


def _content_hash(report: Any) -> str:
    payload = {
        "t": [[f.path, f.text] for f in report.text_fields],
        "s": [[f.path, f.label, f.value] for f in report.structured_fields],
        "m": [report.case_id, report.version, report.format, report.report_id, report.received_date, report.sender],
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


def _quarantine(uri: str, code: str, reason: str, now: datetime, sha: str | None = None) -> dict[str, Any]:
    return {"source_file": uri, "file_sha256": sha, "ingest_time": now, "error_code": code, "reason": reason,
            "text_fields": [], "structured_fields": []}


def parse_file(uri: str, now: datetime) -> list[dict[str, Any]]:
    try:
        data = local_path(uri).read_bytes()
    except OSError as exc:
        return [_quarantine(uri, E_READ, f"cannot read file ({type(exc).__name__})", now)]
    sha = hashlib.sha256(data).hexdigest()
    try:
        reports = list(iter_reports(data))
    except E2BParseError as exc:
        return [_quarantine(uri, E_PARSE, str(exc), now, sha)]
    except Exception as exc:  # noqa: BLE001 - anything else is a parse failure too, named by type
        return [_quarantine(uri, E_PARSE, f"unexpected {type(exc).__name__}", now, sha)]
    if not reports:
        return [_quarantine(uri, E_EMPTY, "no report in file", now, sha)]
    return [
        {
            "case_id": r.case_id, "version": r.version, "format": r.format, "report_id": r.report_id,
            "received_date": r.received_date, "sender": r.sender, "file_sha256": sha,
            "content_sha256": _content_hash(r), "source_file": uri, "ingest_time": now,
            "text_fields": [{"path": f.path, "text": f.text} for f in r.text_fields],
            "structured_fields": [{"path": f.path, "label": f.label, "value": f.value} for f in r.structured_fields],
            "error_code": None, "reason": None, "country": r.country,
        }
        for r in reports
    ]


def parse_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """For `mapInPandas(parse_batches, OUTPUT_SCHEMA)` over a frame with a `path` column."""
    for batch in batches:
        now = datetime.now(timezone.utc)
        rows: list[dict[str, Any]] = []
        for uri in batch["path"]:
            rows += parse_file(uri, now)
        yield pd.DataFrame(rows, columns=_COLUMNS)
