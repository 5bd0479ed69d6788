"""The i2b2 2014 de-identification XML format.

    <deIdi2b2>
      <TEXT>...narrative...</TEXT>
      <TAGS>
        <NAME id="P0" start="16" end="26" text="..." TYPE="PATIENT" comment=""/>
      </TAGS>
    </deIdi2b2>

The element name is the PHI category and TYPE its sub-type. Centres that
annotate their own narratives for fine-tuning often use this format (it is
what the i2b2 tools and many annotation tools export), so we read and write it
losslessly: category -> `GoldSpan.label`, TYPE -> `GoldSpan.subtype`.

Offsets count characters of the TEXT content. XML parsers turn CR LF into LF,
so the writer escapes carriage returns as character references (which are
not normalised) instead of using CDATA; that keeps offsets exact on a round
trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from lxml import etree

from deid_core.corpus.atomic import atomic_text_writer
from deid_core.corpus.document import Document, GoldSpan
from deid_core.corpus.jsonl import CorpusFormatError

ROOT = "deIdi2b2"


def _parser() -> etree.XMLParser:
    # No entity expansion, no network: input files are untrusted.
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_blank_text=False)


def parse_i2b2(data: bytes, doc_id: str, source: str = "<bytes>") -> Document:
    """Parse one i2b2 XML document; errors name `source`, never its content."""
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        raise CorpusFormatError(f"{source}: not well-formed XML (line {exc.lineno})") from None
    if root.tag != ROOT:
        raise CorpusFormatError(f"{source}: root element is not <{ROOT}>")
    text_el = root.find("TEXT")
    if text_el is None:
        raise CorpusFormatError(f"{source}: missing <TEXT>")
    text = text_el.text or ""
    spans: list[GoldSpan] = []
    tags = root.find("TAGS")
    for i, el in enumerate(tags if tags is not None else []):
        if not isinstance(el.tag, str):  # comments, processing instructions
            continue
        tag_id = el.get("id", f"#{i}")
        try:
            start, end = int(el.get("start", "")), int(el.get("end", ""))
        except ValueError:
            raise CorpusFormatError(f"{source}: tag {tag_id} has non-integer start/end") from None
        if not 0 <= start < end <= len(text):
            raise CorpusFormatError(f"{source}: tag {tag_id} offsets lie outside the text")
        if el.get("text") is not None and el.get("text") != text[start:end]:
            raise CorpusFormatError(f"{source}: tag {tag_id} text does not match its offsets")
        spans.append(GoldSpan(start, end, el.tag, el.get("TYPE") or None))
    return Document(doc_id=doc_id, text=text, spans=spans)


def read_i2b2_file(path: Path) -> Document:
    path = Path(path)
    return parse_i2b2(path.read_bytes(), doc_id=path.stem, source=path.name)


def read_i2b2_dir(folder: Path) -> Iterator[Document]:
    """All `*.xml` files of a folder, in name order (doc_id = file stem)."""
    for path in sorted(Path(folder).glob("*.xml")):
        yield read_i2b2_file(path)


def to_i2b2_bytes(doc: Document) -> bytes:
    """Serialise a document; ids are P0, P1, ... in span order."""
    root = etree.Element(ROOT)
    text_el = etree.SubElement(root, "TEXT")
    try:
        text_el.text = doc.text
    except ValueError:
        raise CorpusFormatError(f"document {doc.doc_id}: text has characters XML 1.0 cannot carry") from None
    tags = etree.SubElement(root, "TAGS")
    for i, s in enumerate(sorted(doc.spans, key=lambda s: (s.start, s.end))):
        el = etree.SubElement(tags, s.label)
        el.set("id", f"P{i}")
        el.set("start", str(s.start))
        el.set("end", str(s.end))
        el.set("text", doc.text[s.start:s.end])
        el.set("TYPE", s.subtype or s.label)
        el.set("comment", "")
    body = etree.tostring(root, encoding="unicode")
    # lxml leaves CR unescaped in text; escape it so parsers keep it.
    body = body.replace("\r", "&#13;")
    return ('<?xml version="1.0" encoding="UTF-8" ?>\n' + body + "\n").encode("utf-8")


def write_i2b2_file(doc: Document, path: Path) -> None:
    with atomic_text_writer(Path(path)) as fh:
        fh.write(to_i2b2_bytes(doc).decode("utf-8"))


def write_i2b2_dir(docs: Iterable[Document], folder: Path) -> int:
    """One `<doc_id>.xml` per document. doc_ids become file names, so they must be safe ones."""
    n = 0
    for doc in docs:
        if not doc.doc_id or "/" in doc.doc_id or doc.doc_id.startswith("."):
            raise CorpusFormatError(f"document #{n}: doc_id is not usable as a file name")
        write_i2b2_file(doc, Path(folder) / f"{doc.doc_id}.xml")
        n += 1
    return n
