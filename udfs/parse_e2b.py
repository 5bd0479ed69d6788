"""The pandas UDFs of the ingest job: landed files (or table rows) in, report rows and one outcome row each out.

Every listed file yields exactly one *file row*: its outcome (error code
and reason, or none) and its SHA-256. A readable E2B file also yields its
*report rows* first, streamed: reports leave as soon as they are parsed, in
output batches of bounded size, so memory is bounded by the largest report
and one output batch, not by the file (a batch file may hold tens of
thousands of reports). A file that turns out malformed half-way still ends
as one quarantine row, never half-ingested: its file row carries the error,
and the job keeps only the report rows of files whose file row is clean.

Outcomes, in the order they are checked:

* `E_FILE_TYPE` the name does not end in `.xml` (any case: `report.XML` is
  ingested, as E2B gateways on some systems write upper-case names);
* `E_READ`      the entry cannot be read (a broken link, a FIFO, a file
  removed since it was listed, an I/O error);
* `E_EMPTY`     0 bytes, only white space, or well-formed E2B without a report;
* `E_NOT_XML`   not XML at all: binary data or plain text;
* `E_PARSE`     XML that is not well-formed, not E2B, or a report without identity.

E2B documents held in a table, one per row (`parse_documents`, input
`deid_core.lakehouse.TABLE_DOCUMENTS`), go through the same parser and get
the same outcome row per document, with the same codes but for the two that
only files have (`E_FILE_TYPE`, `E_READ`): a NULL or 0-byte cell is
`E_EMPTY`. A document from a string column arrives as its UTF-8 bytes, so
an encoding its XML declaration names (`ISO-8859-1`, `UTF-16`) no longer
holds and is rewritten to UTF-8 before parsing. A received date from the
table (`normalise_received`) fills in a report that has none of its own.

Reasons name the problem, never the content (`E2BParseError` messages carry
no text; other errors are named by type).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote, unquote, urlparse

import pandas as pd

from deid_core.e2b.errors import BLANK, NOT_XML, E2BParseError
from deid_core.e2b.parse import iter_reports
from deid_core.lakehouse import PARSED

#: the rows this UDF emits (`deid_core.lakehouse.PARSED`): report rows carry bronze's columns
_COLUMNS = list(PARSED.names)

#: `row_kind` values
REPORT = "report"
FILE = "file"

E_FILE_TYPE = "E_FILE_TYPE"  # not an .xml file
E_READ = "E_READ"            # the file could not be read
E_EMPTY = "E_EMPTY"          # 0 bytes, only white space, or E2B without any report
E_NOT_XML = "E_NOT_XML"      # binary data or plain text
E_PARSE = "E_PARSE"          # not well-formed, not E2B, or a report without identity

#: an output batch is yielded once it holds this many report rows or this many characters of text
BATCH_REPORTS = 256
BATCH_CHARS = 16 * 1024 * 1024
_READ_CHUNK = 1 << 20
#: characters a URI path may carry unencoded (RFC 3986 pchar and "/")
_URI_SAFE = "/:@!$&'()*+,;=-._~"


def file_uri(path: str | os.PathLike[str]) -> str:
    """`file:/abs/path` with the path percent-encoded, as Spark names files."""
    return "file:" + quote(os.path.abspath(path), safe=_URI_SAFE)


def local_path(uri: str) -> Path:
    """The local path of a `file:` URI (or of a plain path)."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


class _Hashing:
    """A binary stream that hashes what is read through it (the file's SHA-256 without holding the file)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._sha = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._sha.update(data)
        return data

    def finish(self) -> str:
        """Read what the parser left (trailing white space, say) and return the hex digest."""
        while self.read(_READ_CHUNK):
            pass
        return self._sha.hexdigest()


def _content_hash(report: Any) -> str:
    payload = {
        "t": [[f.path, f.text] for f in report.text_fields],
        "s": [[f.path, f.label, f.value] for f in report.structured_fields],
        "m": [report.case_id, report.version, report.format, report.report_id, report.received_date, report.sender],
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


def _file_row(uri: str, now: datetime, code: str | None = None, reason: str | None = None,
              sha: str | None = None) -> dict[str, Any]:
    return {"row_kind": FILE, "source_file": uri, "file_sha256": sha, "ingest_time": now, "error_code": code,
            "reason": reason, "text_fields": [], "structured_fields": []}


def _report_row(uri: str, now: datetime, r: Any) -> dict[str, Any]:
    return {
        "row_kind": REPORT, "case_id": r.case_id, "version": r.version, "format": r.format,
        "report_id": r.report_id, "received_date": r.received_date, "sender": r.sender, "file_sha256": None,
        "content_sha256": _content_hash(r), "source_file": uri, "ingest_time": now,
        "text_fields": [{"path": f.path, "text": f.text} for f in r.text_fields],
        "structured_fields": [{"path": f.path, "label": f.label, "value": f.value} for f in r.structured_fields],
        "error_code": None, "reason": None, "country": r.country,
    }


_PARSE_CODES = {BLANK: E_EMPTY, NOT_XML: E_NOT_XML}


class NotARegularFile(OSError):
    """A FIFO, socket or device where a file was listed."""


def _open_regular(path: Path) -> BinaryIO:
    """Open a regular file for reading; anything else (a FIFO swapped in since the listing) is refused.

    Opened non-blocking so that a FIFO cannot hang the task before the check.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile("not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def parse_file(uri: str, size: int | None, now: datetime) -> Iterator[dict[str, Any]]:
    """The report rows of one landed file, then its file row (always exactly one)."""
    if not local_path(uri).name.lower().endswith(".xml"):
        yield _file_row(uri, now, E_FILE_TYPE, "not an .xml file")
        return
    if size is None:
        yield _file_row(uri, now, E_READ, "not a readable regular file (broken link, FIFO or removed)")
        return
    if size == 0:
        yield _file_row(uri, now, E_EMPTY, "empty file (0 bytes)")
        return
    try:
        raw = _open_regular(local_path(uri))
    except OSError as exc:
        yield _file_row(uri, now, E_READ, f"cannot read file ({type(exc).__name__})")
        return
    stream = _Hashing(raw)
    try:
        yield from _reports_then_outcome(uri, stream, stream.finish, now)
    finally:
        raw.close()


def _reports_then_outcome(uri: str, source: BinaryIO | _Hashing, digest: Callable[[], str], now: datetime,
                          received: str | None = None) -> Iterator[dict[str, Any]]:
    """The report rows of one document, then its outcome row: the one parse loop of files and table rows.

    `digest` gives the document's SHA-256 once it has been read through;
    `received` fills in the received date of a report that has none.
    """
    n = 0
    failure: tuple[str, str] | None = None
    try:
        for report in iter_reports(source):  # type: ignore[arg-type]
            n += 1
            if received and not report.received_date:
                report = dataclasses.replace(report, received_date=received)
            yield _report_row(uri, now, report)
        sha = digest()
    except E2BParseError as exc:
        failure = (_PARSE_CODES.get(exc.kind, E_PARSE), str(exc))
    except OSError as exc:
        failure = (E_READ, f"cannot read file ({type(exc).__name__})")
    except Exception as exc:  # noqa: BLE001 - anything else is a parse failure too, named by type
        failure = (E_PARSE, f"unexpected {type(exc).__name__}")
    if failure is not None:
        yield _file_row(uri, now, *failure)
    elif n == 0:
        yield _file_row(uri, now, E_EMPTY, "no report in file", sha)
    else:
        yield _file_row(uri, now, sha=sha)


#: the encoding pseudo-attribute of an XML declaration at the start of a document (after a BOM, blanks)
_DECLARED_ENCODING = re.compile(
    rb"\A(\xef\xbb\xbf)?([ \t\r\n]*<\?xml\b[^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*)([\"'])[^\"'>]*\3")
#: E2B date digits as the parsers give them: CCYYMMDD, then optionally hours, minutes, seconds, fraction, zone
_E2B_DATE = re.compile(r"\d{8}(\d{2}(\d{2}(\d{2}(\.\d{1,4})?)?)?)?([+-]\d{2}(\d{2})?)?", re.ASCII)
#: an ISO 8601 date, optionally followed by a time (only the date is taken)
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ].*)?", re.ASCII | re.DOTALL)


def declared_utf8(data: bytes) -> bytes:
    """`data` (the UTF-8 of a decoded string) with the encoding its XML declaration names set to UTF-8."""
    return _DECLARED_ENCODING.sub(lambda m: (m.group(1) or b"") + m.group(2) + m.group(3) + b"UTF-8" + m.group(3),
                                  data, count=1)


def normalise_received(value: str | None) -> str | None:
    """A received date from a table column in the parsers' E2B form, or None when it is not a date.

    E2B digits (``20140112``, ``20140112093000+0100``) are kept as they are;
    an ISO date or date-time (``2014-01-12``, ``2014-01-12T09:30:00Z``)
    becomes its date's digits (``20140112``), as R2's ``receiptdate`` and
    R3's ``availabilityTime`` read at day precision. The job turns date and
    timestamp columns into ``yyyyMMdd`` before they get here.
    """
    if value is None:
        return None
    text = str(value).strip()
    if _E2B_DATE.fullmatch(text):
        return text
    iso = _ISO_DATE.fullmatch(text)
    if iso:
        return "".join(iso.groups())
    return None


def parse_document(uri: str, data: bytes | None, sha: str | None, from_text: bool, received: str | None,
                   now: datetime) -> Iterator[dict[str, Any]]:
    """The report rows of one E2B document held in a table cell, then its outcome row (always exactly one)."""
    if data is None:
        yield _file_row(uri, now, E_EMPTY, "no document (NULL)")
        return
    if len(data) == 0:
        yield _file_row(uri, now, E_EMPTY, "empty document (0 bytes)", sha)
        return
    source = io.BytesIO(declared_utf8(data) if from_text else data)
    digest = sha or hashlib.sha256(data).hexdigest()
    yield from _reports_then_outcome(uri, source, lambda: digest, now, normalise_received(received))


def _text_size(row: dict[str, Any]) -> int:
    return sum(len(f["text"] or "") for f in row["text_fields"]) + sum(len(f["value"] or "")
                                                                       for f in row["structured_fields"])


def _in_frames(rows: Iterator[dict[str, Any]]) -> Iterator[pd.DataFrame]:
    """`rows` as output frames of at most BATCH_REPORTS rows or BATCH_CHARS characters of text."""
    out: list[dict[str, Any]] = []
    chars = 0
    for row in rows:
        out.append(row)
        chars += _text_size(row)
        if len(out) >= BATCH_REPORTS or chars >= BATCH_CHARS:
            yield pd.DataFrame(out, columns=_COLUMNS)
            out, chars = [], 0
    if out:
        yield pd.DataFrame(out, columns=_COLUMNS)


def parse_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """For `mapInPandas(parse_batches, PARSED.schema)` over a frame of `LANDED_FILES.schema` (`deid_core.lakehouse`)."""
    for batch in batches:
        now = datetime.now(timezone.utc)
        yield from _in_frames(
            row for uri, size in zip(batch["path"], batch["size"], strict=True)
            for row in parse_file(uri, None if pd.isna(size) else int(size), now))


def parse_documents(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """For `mapInPandas(parse_documents, PARSED.schema)` over a frame of `TABLE_DOCUMENTS.schema`."""
    for batch in batches:
        now = datetime.now(timezone.utc)
        columns = (batch["source_file"], batch["document"], batch["document_sha256"], batch["from_text"],
                   batch["received_date"])
        yield from _in_frames(
            row for uri, data, sha, from_text, received in zip(*columns, strict=True)
            for row in parse_document(uri, bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else None,
                                      None if pd.isna(sha) else sha, bool(from_text),
                                      None if pd.isna(received) else received, now))
