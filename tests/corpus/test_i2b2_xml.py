"""i2b2 2014 XML: parse real-shaped files and round-trip exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.corpus.document import Document, GoldSpan
from deid_core.corpus.i2b2_xml import (
    parse_i2b2,
    read_i2b2_dir,
    to_i2b2_bytes,
    write_i2b2_dir,
)
from deid_core.corpus.jsonl import CorpusFormatError

SAMPLE = b"""<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Record date: 2067-05-03
Mr. Ivan Petrov was seen at Oakfield Clinic.]]></TEXT>
<TAGS>
<DATE id="P0" start="13" end="23" text="2067-05-03" TYPE="DATE" comment="" />
<NAME id="P1" start="28" end="39" text="Ivan Petrov" TYPE="PATIENT" comment="" />
<LOCATION id="P2" start="52" end="67" text="Oakfield Clinic" TYPE="HOSPITAL" comment="" />
</TAGS>
</deIdi2b2>
"""


def test_parses_cdata_text_and_tags() -> None:
    doc = parse_i2b2(SAMPLE, "110-01")
    assert doc.doc_id == "110-01"
    assert doc.text.startswith("Record date: 2067-05-03\nMr. Ivan")
    assert doc.spans == [
        GoldSpan(13, 23, "DATE", "DATE"),
        GoldSpan(28, 39, "NAME", "PATIENT"),
        GoldSpan(52, 67, "LOCATION", "HOSPITAL"),
    ]
    for s in doc.spans:
        assert doc.text[s.start:s.end] in {"2067-05-03", "Ivan Petrov", "Oakfield Clinic"}


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"<deIdi2b2><TEXT>Ivan</TEXT>", "not well-formed"),
        (b"<other><TEXT>x</TEXT></other>", "root element"),
        (b"<deIdi2b2><TAGS/></deIdi2b2>", "missing <TEXT>"),
        (b'<deIdi2b2><TEXT>Ivan</TEXT><TAGS><NAME id="P0" start="0" end="9"/></TAGS></deIdi2b2>', "outside"),
        (b'<deIdi2b2><TEXT>Ivan</TEXT><TAGS><NAME id="P0" start="0" end="2" text="Iv4"/></TAGS></deIdi2b2>',
         "does not match"),
        (b'<deIdi2b2><TEXT>Ivan</TEXT><TAGS><NAME id="P0" start="a" end="2"/></TAGS></deIdi2b2>', "non-integer"),
    ],
)
def test_errors_name_the_source_not_the_text(data: bytes, fragment: str) -> None:
    with pytest.raises(CorpusFormatError) as exc:
        parse_i2b2(data, "d", source="note.xml")
    assert str(exc.value).startswith("note.xml")
    assert fragment in str(exc.value)
    assert "Ivan" not in str(exc.value)


def test_no_entity_expansion() -> None:
    evil = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<deIdi2b2><TEXT>&x;</TEXT><TAGS/></deIdi2b2>"""
    doc = parse_i2b2(evil, "d")
    assert "root:" not in doc.text


def test_directory_round_trip(tmp_path: Path) -> None:
    docs = [parse_i2b2(SAMPLE, "a"), Document("b", "tab\there\r\nCRLF & <tags> ]]>", [GoldSpan(0, 3, "NAME")])]
    assert write_i2b2_dir(docs, tmp_path) == 2
    back = list(read_i2b2_dir(tmp_path))
    assert [(d.doc_id, d.text, d.spans) for d in back] == [
        (d.doc_id, d.text, [GoldSpan(s.start, s.end, s.label, s.subtype or s.label) for s in d.spans]) for d in docs
    ]


def test_unsafe_doc_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError):
        write_i2b2_dir([Document("../x", "t")], tmp_path)


_xml_char = st.characters(
    blacklist_categories=("Cs",),
    blacklist_characters="".join(chr(c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)) + "\ufffe\uffff",
)


@st.composite
def documents(draw: st.DrawFn) -> Document:
    text = draw(st.text(alphabet=_xml_char, min_size=1, max_size=200))
    n = len(text)
    spans = []
    for _ in range(draw(st.integers(0, 4))):
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        label = draw(st.sampled_from(["NAME", "DATE", "LOCATION", "AGE", "ID", "CONTACT"]))
        subtype = draw(st.sampled_from(["PATIENT", "CITY", "PHONE", label]))
        spans.append(GoldSpan(a, b, label, subtype))
    return Document("doc", text, spans)


@settings(max_examples=150, deadline=None)
@given(documents())
def test_round_trip_property(doc: Document) -> None:
    back = parse_i2b2(to_i2b2_bytes(doc), "doc")
    assert back.text == doc.text
    assert sorted(back.spans, key=lambda s: (s.start, s.end)) == sorted(doc.spans, key=lambda s: (s.start, s.end))
