"""Stream E2B reports out of R2 and R3 files of any size, safely.

Design:

* **Streaming.** A batch file can hold tens of thousands of reports and be
  gigabytes large, so it is never loaded as one tree. ``lxml.etree.iterparse``
  builds one report's subtree at a time; once the report is extracted, the
  subtree is cleared and its already-processed siblings are deleted, so
  memory is bounded by the largest single report, not by the file.
* **Dispatch on the root.** The first start event names the root element:
  ``ichicsr`` (R2; every ``safetyreport`` is a report), ``MCCI_IN200100UV01``
  (an R3 batch; every ``PORR_IN049016UV`` is a message with one report) or
  a bare ``PORR_IN049016UV``. Anything else is refused before the rest of
  the file is read. Names are matched on local names, so a missing or
  different namespace does not matter.
* **Hostile input.** Entities are never resolved (no XXE file or network
  reads, no billion-laughs expansion: an entity reference stays a literal
  ``&name;`` in the text), no DTD is loaded, the network is off and
  ``huge_tree`` stays off (libxml2's size and depth limits apply).
* **No text in errors.** Every failure surfaces as :class:`E2BParseError`
  whose message names a reason and a line number, never document content
  (see :mod:`.errors`), and whose ``kind`` tells apart malformed XML, data
  that is not XML at all (binary, plain text) and a blank document: libxml2
  reports the last two alike ("Document is empty"), so the first bytes read
  are kept to tell which.

The extractors live in :mod:`.r2` and :mod:`.r3`; this module only finds
the report elements and hands them over.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import BinaryIO

from lxml import etree

from deid_core.e2b.errors import BLANK, MALFORMED, NOT_XML, E2BParseError, safe_name
from deid_core.e2b.model import Report
from deid_core.e2b.r2 import extract_r2
from deid_core.e2b.r3 import extract_r3
from deid_core.e2b.r3_codes import BATCH_ROOT, MESSAGE
from deid_core.e2b.xmlnav import Element, local

__all__ = ["E2BParseError", "iter_reports", "parse_reports"]

Source = bytes | str | os.PathLike[str] | BinaryIO
Extractor = Callable[[Element], Report]

_REPORT_ELEMENTS: dict[str, tuple[str, Extractor]] = {
    "ichicsr": ("safetyreport", extract_r2),
    BATCH_ROOT: (MESSAGE, extract_r3),
    MESSAGE: (MESSAGE, extract_r3),
}
"""Root element -> (report element, extractor)."""


def _secure_events(stream: BinaryIO) -> etree.iterparse:
    """An iterparse over ``stream`` that resolves nothing and fetches nothing."""
    return etree.iterparse(
        stream,
        events=("start", "end"),
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def _open(source: Source, stack: ExitStack) -> BinaryIO:
    """A binary stream for ``source``: bytes are wrapped, str and path-likes are file paths."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source))
    if isinstance(source, (str, os.PathLike)):
        return stack.enter_context(open(source, "rb"))
    if hasattr(source, "read"):
        return source
    raise TypeError(f"cannot read E2B from {type(source).__name__}")


class _Head:
    """A binary stream that remembers its first bytes (to name what a document that never started was)."""

    KEEP = 4096

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.head = b""

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        if len(self.head) < self.KEEP:
            self.head += data[: self.KEEP - len(self.head)]
        return data


_BOMS = (("utf-8", b"\xef\xbb\xbf"), ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-32-be", b"\x00\x00\xfe\xff"),
         ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"))


def _never_started(head: bytes) -> E2BParseError:
    """The error for a document in which libxml2 found no root element: blank, markup without a root, or not XML."""
    text = head.decode("latin-1")
    for codec, bom in _BOMS:
        if head.startswith(bom):
            text = head[len(bom):].decode(codec, errors="replace")
            break
    text = text.lstrip(" \t\r\n")
    if not text:
        return E2BParseError("no XML content (empty or only white space)", kind=BLANK)
    if text.startswith("<"):
        return E2BParseError("XML without a root element")
    return E2BParseError("not XML: no markup at the start (binary data or plain text)", kind=NOT_XML)


def iter_reports(source: Source) -> Iterator[Report]:
    """Yield the reports of an E2B(R2) or E2B(R3) document, one at a time.

    ``source`` is the document as bytes, a path (``str`` or path-like; XML
    text must be passed as bytes) or a binary file object. Raises
    :class:`E2BParseError` for malformed XML, an unknown root element or a
    report without identity; reports before the error have been yielded.
    """
    with ExitStack() as stack:
        stream = _Head(_open(source, stack))
        try:
            yield from _reports(_secure_events(stream))
        except _NeverStarted as exc:
            why = _never_started(stream.head)
            specific = why.kind == MALFORMED and exc.reason and "ERR_DOCUMENT_EMPTY" not in exc.reason
            raise (E2BParseError(exc.reason) if specific else why) from None


def parse_reports(data: bytes) -> list[Report]:
    """All reports of a document held in memory (convenience for small inputs and tests)."""
    return list(iter_reports(data))


def _reports(events: etree.iterparse) -> Iterator[Report]:
    target: str | None = None
    extract: Extractor | None = None
    count = 0
    try:
        for event, el in events:
            if target is None:
                target, extract = _dispatch(el)
                continue
            if event != "end" or not el.tag.endswith(target) or local(el) != target:
                continue
            count += 1
            try:
                report = extract(el)
            except E2BParseError as exc:
                raise E2BParseError(f"{exc} (report {count} of the file)") from None
            _release(el)
            yield report
    except etree.XMLSyntaxError as exc:
        if target is None:
            raise _NeverStarted(_syntax_reason(exc)) from None
        raise E2BParseError(_syntax_reason(exc)) from None
    if target is None:
        raise _NeverStarted(None)


def _dispatch(root: Element) -> tuple[str, Extractor]:
    """The report element and extractor for a root, or the refusal."""
    name = local(root)
    if name not in _REPORT_ELEMENTS:
        raise E2BParseError(
            f"root element {safe_name(name)} is neither ichicsr nor {BATCH_ROOT}/{MESSAGE}")
    return _REPORT_ELEMENTS[name]


def _release(el: Element) -> None:
    """Free a processed report and everything before it (the streaming memory bound)."""
    el.clear(keep_tail=False)
    parent = el.getparent()
    if parent is None:
        return
    while el.getprevious() is not None:
        del parent[0]


class _NeverStarted(Exception):
    """No root element was found; `iter_reports` names why from the first bytes."""

    def __init__(self, reason: str | None) -> None:
        super().__init__(reason)
        self.reason = reason


def _error_kind(exc: etree.XMLSyntaxError) -> str | None:
    last = getattr(exc, "error_log", None) and exc.error_log.last_error
    if last is None:
        return None
    return safe_name(str(getattr(last, "type_name", "") or "")) or None


def _syntax_reason(exc: etree.XMLSyntaxError) -> str:
    """"not well-formed XML at line N (ERR_...)": position and libxml2 error kind only."""
    line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else None
    kind = _error_kind(exc)
    where = f" at line {line}" if line is not None else ""
    suffix = f" ({kind})" if kind and kind != "<unprintable>" else ""
    return f"not well-formed XML{where}{suffix}"
