"""JSONL corpora: one document per line, `{"doc_id", "text", "spans"?, "keep"?, ...}`.

`keep` (optional; absent means none) lists clinical content that must
survive de-identification as `{"start", "end", "label"}` with a label from
`KEEP_LABELS`; it is checked like `spans`.

Reading is strict about what we need and lenient about what we do not:
extra fields are kept in `meta` and otherwise ignored, while a line that is
not UTF-8, not JSON, or lacks a string `text` stops the run with an error that
names the file and line. Error messages never quote the line itself, since it
may hold PHI.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from deid_core.corpus.atomic import atomic_text_writer
from deid_core.corpus.document import Document, GoldSpan, KeepSpan

_KNOWN = frozenset({"doc_id", "text", "spans", "keep"})


class CorpusFormatError(ValueError):
    """An input line cannot be read; the message names file and line, never content."""


def _fail(path: Path, line_no: int, why: str) -> CorpusFormatError:
    return CorpusFormatError(f"{path.name}: line {line_no}: {why}")


def _span_objects(raw: Any, key: str, what: str, path: Path, line_no: int) -> list[tuple[dict[str, Any], int, int, str]]:
    """The objects of a `spans`/`keep` list with their integer offsets and string label, checked."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _fail(path, line_no, f"'{key}' must be a list")
    out = []
    for i, s in enumerate(raw):
        if not isinstance(s, dict):
            raise _fail(path, line_no, f"{what} {i} must be an object")
        start, end, label = s.get("start"), s.get("end"), s.get("label")
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
            raise _fail(path, line_no, f"{what} {i} needs integer 'start' and 'end'")
        if not isinstance(label, str) or not label:
            raise _fail(path, line_no, f"{what} {i} needs a string 'label'")
        out.append((s, start, end, label))
    return out


def _parse_spans(raw: Any, path: Path, line_no: int) -> list[GoldSpan]:
    return [
        GoldSpan(start, end, label, s["subtype"] if isinstance(s.get("subtype"), str) else None)
        for s, start, end, label in _span_objects(raw, "spans", "span", path, line_no)
    ]


def _parse_keep(raw: Any, path: Path, line_no: int) -> list[KeepSpan]:
    """Keep spans: offsets as for gold spans; labels are checked by `Document.validate`."""
    return [KeepSpan(start, end, label) for _, start, end, label in _span_objects(raw, "keep", "keep span", path, line_no)]


def parse_line(raw: bytes, path: Path, line_no: int) -> Document | None:
    """Parse one line; None for a blank line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(path, line_no, f"not valid UTF-8 (bad byte at offset {exc.start})") from None
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _fail(path, line_no, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    return document_from_json(obj, path, line_no)


def document_from_json(obj: Any, path: Path, line_no: int) -> Document:
    """A decoded corpus record as a checked `Document`; errors name `path` and `line_no`, never content.

    Also used by readers whose records are assembled from elsewhere (the
    stand-off annotations join offsets with a text read from another file).
    """
    if not isinstance(obj, dict):
        raise _fail(path, line_no, "expected a JSON object")
    text = obj.get("text")
    if not isinstance(text, str):
        raise _fail(path, line_no, "missing or non-string 'text'")
    doc_id = obj.get("doc_id", str(line_no))
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        raise _fail(path, line_no, "'doc_id' must be a string or integer")
    doc = Document(
        doc_id=str(doc_id),
        text=text,
        spans=_parse_spans(obj.get("spans"), path, line_no),
        meta={k: v for k, v in obj.items() if k not in _KNOWN},
        keep=_parse_keep(obj.get("keep"), path, line_no),
    )
    try:
        doc.validate()
    except ValueError as exc:
        raise _fail(path, line_no, str(exc)) from None
    return doc


def iter_jsonl(path: Path) -> Iterator[tuple[int, Document]]:
    """Yield (line number, document), streaming; raises CorpusFormatError on bad input."""
    path = Path(path)
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            doc = parse_line(raw, path, line_no)
            if doc is not None:
                yield line_no, doc


def read_jsonl(path: Path) -> list[Document]:
    return [doc for _, doc in iter_jsonl(path)]


def document_to_json(doc: Document) -> dict[str, Any]:
    out: dict[str, Any] = {"doc_id": doc.doc_id, "text": doc.text}
    spans = []
    for s in doc.spans:
        d: dict[str, Any] = {"start": s.start, "end": s.end, "label": s.label}
        if s.subtype:
            d["subtype"] = s.subtype
        spans.append(d)
    out["spans"] = spans
    if doc.keep:  # absent means none, so corpora without keep spans are written as before
        out["keep"] = [{"start": k.start, "end": k.end, "label": k.label} for k in doc.keep]
    out.update({k: v for k, v in doc.meta.items() if k not in _KNOWN})
    return out


def write_jsonl(docs: Iterable[Document], path: Path) -> int:
    """Write documents atomically; returns how many were written."""
    n = 0
    with atomic_text_writer(Path(path)) as fh:
        for doc in docs:
            fh.write(json.dumps(document_to_json(doc), ensure_ascii=False) + "\n")
            n += 1
    return n
