"""JSONL corpus reading: strict on what we need, lenient on extra fields, no PHI in errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_core.corpus.document import KEEP_LABELS, Document, GoldSpan, KeepSpan
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
        (b'{"doc_id": "a", "text": "abc", "keep": [{"start": 1, "end": 9, "label": "DOSE"}]}', "keep span 0 has offsets"),
        (b'{"doc_id": "a", "text": "abc", "keep": [{"start": 2, "end": 2, "label": "DOSE"}]}', "outside the text"),
        (b'{"doc_id": "a", "text": "abc", "keep": [{"start": 0, "end": 2, "label": "' + SECRET.encode() + b'"}]}',
         "label outside DRUG, DOSE"),
        (b'{"doc_id": "a", "text": "abc", "keep": [{"start": 0, "end": 2}]}', "keep span 0 needs a string 'label'"),
        (b'{"doc_id": "a", "text": "abc", "keep": [{"start": true, "end": 2, "label": "LAB"}]}', "integer"),
        (b'{"doc_id": "a", "text": "abc", "keep": [3]}', "keep span 0 must be an object"),
        (b'{"doc_id": "a", "text": "abc", "keep": {"start": 0}}', "'keep' must be a list"),
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


def test_keep_spans_are_read_and_absent_means_none(tmp_path: Path) -> None:
    p = _write(tmp_path, [
        json.dumps({"doc_id": "a", "text": "aspirin 5 mg", "keep": [
            {"start": 0, "end": 7, "label": "DRUG"}, {"start": 8, "end": 12, "label": "DOSE"}]}).encode(),
        json.dumps({"doc_id": "b", "text": "none"}).encode(),
        json.dumps({"doc_id": "c", "text": "none", "keep": None}).encode(),
    ])
    a, b, c = read_jsonl(p)
    assert a.keep == [KeepSpan(0, 7, "DRUG"), KeepSpan(8, 12, "DOSE")]
    assert a.meta == {}  # "keep" is a known field, not meta
    assert b.keep == [] and c.keep == []


def test_keep_spans_round_trip_every_label(tmp_path: Path) -> None:
    text = "Lot AB12: aspirin 5 mg for 3 days; ALT 80 U/L; rash"
    keep = [KeepSpan(4, 8, "LOT"), KeepSpan(10, 17, "DRUG"), KeepSpan(18, 22, "DOSE"), KeepSpan(27, 33, "DURATION"),
            KeepSpan(35, 45, "LAB"), KeepSpan(47, 51, "REACTION")]
    assert {k.label for k in keep} == set(KEEP_LABELS)
    docs = [Document("d1", text, [GoldSpan(4, 8, "ID")], {"site": "x"}, keep), Document("d2", "plain")]
    out = tmp_path / "out.jsonl"
    write_jsonl(docs, out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["keep"][0] == {"start": 4, "end": 8, "label": "LOT"}
    assert "keep" not in lines[1]  # no keep spans, written as before
    back = read_jsonl(out)
    assert [(d.doc_id, d.text, d.spans, d.meta, d.keep) for d in back] == [
        (d.doc_id, d.text, d.spans, d.meta, d.keep) for d in docs]


def test_document_validate_rejects_bad_keep_spans() -> None:
    Document("a", "abc", keep=[KeepSpan(0, 3, "LAB")]).validate()
    with pytest.raises(ValueError, match="keep span 1"):
        Document("a", "abc", keep=[KeepSpan(0, 3, "LAB"), KeepSpan(0, 3, "NAME")]).validate()
    with pytest.raises(ValueError, match="keep span 0"):
        Document("a", "abc", keep=[KeepSpan(-1, 3, "LAB")]).validate()
