"""The table-row parse UDF body, without Spark: a document in a cell gets the file's outcome codes."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch
from deid_core.lakehouse import PARSED, TABLE_DOCUMENTS
from udfs.parse_e2b import (
    FILE,
    REPORT,
    declared_utf8,
    file_uri,
    normalise_received,
    parse_document,
    parse_documents,
    parse_file,
)

NOW = datetime(2026, 11, 26, tzinfo=timezone.utc)


def _outcome(data: bytes | None, *, from_text: bool = False, received: str | None = None) -> tuple[list, dict]:
    sha = None if data is None else hashlib.sha256(data).hexdigest()
    rows = list(parse_document("table:/t#1", data, sha, from_text, received, NOW))
    assert [r["row_kind"] for r in rows[:-1]] == [REPORT] * (len(rows) - 1) and rows[-1]["row_kind"] == FILE
    return rows[:-1], rows[-1]


@pytest.mark.parametrize(("content", "code"), [
    (None, "E_EMPTY"),
    (b"", "E_EMPTY"),
    (b"  \r\n\t ", "E_EMPTY"),
    (bytes(range(256)) * 4, "E_NOT_XML"),
    (b"Dear colleague, the patient Jane Roe ...", "E_NOT_XML"),
    (b"<?xml version='1.0'?><invoice><total>3</total></invoice>", "E_PARSE"),
    (b"<ichicsr><safetyreport><safetyreportid>1</safety", "E_PARSE"),
    (b"<ichicsr></ichicsr>", "E_EMPTY"),
])
def test_every_bad_document_has_one_outcome_with_the_files_code(content: bytes | None, code: str) -> None:
    reports, outcome = _outcome(content)
    assert reports == [] and outcome["error_code"] == code and outcome["reason"]
    assert "Jane" not in outcome["reason"]


def test_a_document_gives_the_rows_its_file_gives(tmp_path: Path) -> None:
    data = synthetic_r3_batch(3, 5)
    p = tmp_path / "batch.xml"
    p.write_bytes(data)
    from_file = list(parse_file(file_uri(p), len(data), NOW))
    from_cell = list(parse_document("table:/t#1", data, hashlib.sha256(data).hexdigest(), False, None, NOW))
    strip = lambda rows: [{k: v for k, v in r.items() if k != "source_file"} for r in rows]  # noqa: E731
    assert strip(from_cell) == strip(from_file)
    assert from_cell[-1]["file_sha256"] == hashlib.sha256(data).hexdigest() and from_cell[-1]["error_code"] is None


def test_a_string_cell_ignores_the_encoding_its_declaration_names() -> None:
    original = synthetic_r2_batch(2, 9)
    declared = original.replace(b"encoding='utf-8'", b"encoding='UTF-16'", 1)
    assert b"UTF-16" in declared[:60]
    # a string column holds the decoded text; its UTF-8 bytes no longer match the declaration
    _, misread = _outcome(declared)
    assert misread["error_code"] is not None
    reports, outcome = _outcome(declared, from_text=True)
    expected, _ = _outcome(original)
    assert outcome["error_code"] is None
    assert [r["content_sha256"] for r in reports] == [r["content_sha256"] for r in expected]
    assert declared_utf8(b"\xef\xbb\xbf<?xml version='1.0' encoding='utf-16'?><a/>") == (
        b"\xef\xbb\xbf<?xml version='1.0' encoding='UTF-8'?><a/>")
    assert declared_utf8(b"<a>encoding='x'</a>") == b"<a>encoding='x'</a>"


@pytest.mark.parametrize(("value", "expected"), [
    ("20140112", "20140112"), (" 20140112093000+0100 ", "20140112093000+0100"), ("2014-01-12", "20140112"),
    ("2014-01-12T09:30:00Z", "20140112"), ("12/01/2014", None), ("", None), (None, None), ("Jane", None),
    ("\u0662\u0660\u0661\u0664\u0660\u0661\u0661\u0662", None),
])
def test_received_dates_take_the_parsers_form(value: str | None, expected: str | None) -> None:
    assert normalise_received(value) == expected


def test_a_received_date_fills_in_only_reports_without_one() -> None:
    data = synthetic_r2_batch(2, 3)
    own, _ = _outcome(data)
    filled, _ = _outcome(data, received="2001-02-03")
    assert all(r["received_date"] for r in own)
    assert [r["received_date"] for r in filled] == [r["received_date"] for r in own]
    bare = data.replace(b"<receiptdate>", b"<x>").replace(b"</receiptdate>", b"</x>")
    bare = bare.replace(b"<receivedate>", b"<y>").replace(b"</receivedate>", b"</y>")
    none, _ = _outcome(bare)
    assert {r["received_date"] for r in none} == {None}
    given, _ = _outcome(bare, received="2001-02-03")
    assert {r["received_date"] for r in given} == {"20010203"}
    assert [r["content_sha256"] for r in given] != [r["content_sha256"] for r in none]


def test_parse_documents_emits_parsed_rows() -> None:
    data = synthetic_r3_batch(2, 4)
    frame = pd.DataFrame([
        {"source_file": "table:/t#a", "document": data, "document_sha256": hashlib.sha256(data).hexdigest(),
         "from_text": False, "received_date": None},
        {"source_file": "table:/t#b", "document": None, "document_sha256": None, "from_text": True,
         "received_date": None},
    ], columns=list(TABLE_DOCUMENTS.names))
    out = pd.concat(list(parse_documents(iter([frame]))))
    assert list(out.columns) == list(PARSED.names)
    files = out[out["row_kind"] == FILE].set_index("source_file")
    assert files.loc["table:/t#a", "error_code"] is None and files.loc["table:/t#b", "error_code"] == "E_EMPTY"
    assert (out["row_kind"] == REPORT).sum() == 2
