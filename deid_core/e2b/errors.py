"""The one error the E2B reader raises for bad input, and why its message is bare.

Parse errors end up in logs, quarantine tables and ticket systems that are
not cleared for personal data. lxml's own messages quote the offending
markup, and a malformed narrative is exactly where a patient's name would
be, so :class:`E2BParseError` messages are built only from a fixed reason,
line numbers and element names (sanitised), never from document text, and
the lxml exception is not chained.
"""

from __future__ import annotations

import re

_SAFE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")


#: what kind of bad input an E2BParseError is about (the ingest maps kinds to quarantine codes)
MALFORMED = "malformed"   # XML that is not well-formed, not E2B, or a report without identity
NOT_XML = "not_xml"       # no markup where the document should start: binary data or plain text
BLANK = "blank"           # bytes, but nothing except white space (and a byte-order mark)


class E2BParseError(ValueError):
    """Input that is not a readable E2B R2/R3 document; the message never contains its text."""

    def __init__(self, reason: str, kind: str = MALFORMED) -> None:
        super().__init__(reason)
        self.kind = kind


def safe_name(name: str) -> str:
    """An element name fit for an error message: as is when it looks like a name, else a placeholder."""
    return name if _SAFE_NAME.fullmatch(name) else "<unprintable>"
