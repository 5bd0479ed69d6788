"""JSONL corpus reading: strict on what we need, lenient on extra fields, no PHI in errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_core.corpus.document import Document, GoldSpan
from deid_core.corpus.jsonl import CorpusFormatError, read_jsonl, write_jsonl

SECRET = "Wilhelmina Quackenbush"


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    p = tmp_path / "in.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return p


def test_reads_documents_spans_and_keeps_extra_fields(tmp_path: Path) -> None:
    p = _write(tmp_path, [
        json.dumps({"doc_id": "a", "text": "Seen by Dr Smith.", "spans": [{"start": 11, "end": 16, "label": "NAME"}],
                    "meta": {"age": 40}, "site": "x"}).encode(),
        b"",
        json.dumps({"doc_id": 7, "text": "no phi"}).encode(),
    ])
    docs = read_jsonl(p)
    assert [d.doc_id for d in docs] == ["a", "7"]
    assert docs[0].spans == [GoldSpan(11, 16, "NAME")]
    assert docs[0].meta == {"meta": {"age": 40}, "site": "x"}
    assert docs[1].spans == []


def test_missing_doc_id_defaults_to_line_number(tmp_path: Path) -> None:
    p = _write(tmp_path, [b'{"text": "x"}', b'{"text": "y"}'])
    assert [d.doc_id for d in read_jsonl(p)] == ["1", "2"]


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b'{"doc_id": "a", "text": "' + SECRET.encode() + b'"', "invalid JSON"),
        (b'{"doc_id": "a", "note": "' + SECRET.encode() + b'"}', "missing or non-string 'text'"),
        (b'{"doc_id": "a", "text": 5}', "missing or non-string 'text'"),
        (b'["' + SECRET.encode() + b'"]', "expected a JSON object"),
        (b'{"doc_id": "a", "text": "' + SECRET.encode() + b'\xff\xfe"}', "not valid UTF-8"),
        (b'{"doc_id": "a", "text": "abc", "spans": [{"start": 0, "end": 9, "label": "NAME"}]}', "outside the text"),
        (b'{"doc_id": "a", "text": "abc", "spans": [{"start": "0", "end": 2, "label": "NAME"}]}', "integer"),
        (b'{"doc_id": {"x": 1}, "text": "abc"}', "'doc_id'"),
    ],
)
def test_bad_lines_name_the_line_and_never_the_content(tmp_path: Path, line: bytes, fragment: str) -> None:
    p = _write(tmp_path, [b'{"doc_id": "ok", "text": "fine"}', line])
    with pytest.raises(CorpusFormatError) as exc:
        read_jsonl(p)
    msg = str(exc.value)
    assert msg.startswith("in.jsonl: line 2:")
    assert fragment in msg
    assert "Quackenbush" not in msg and "Wilhelmina" not in msg


def test_round_trip(tmp_path: Path) -> None:
    docs = [
        Document("d1", "Anna Berg, 12-JAN-2014\r\nStockholm", [GoldSpan(0, 9, "NAME", "PATIENT"), GoldSpan(11, 22, "DATE")],
                 {"meta": {"k": [1, 2]}}),
        Document("d2", "", []),
    ]
    out = tmp_path / "sub" / "out.jsonl"
    assert write_jsonl(docs, out) == 2
    back = read_jsonl(out)
    assert [(d.doc_id, d.text, d.spans, d.meta) for d in back] == [(d.doc_id, d.text, d.spans, d.meta) for d in docs]


def test_write_is_atomic_on_failure(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"

    def docs():
        yield Document("d1", "x")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_jsonl(docs(), out)
    assert list(tmp_path.iterdir()) == []
