"""The in-memory form of an annotated narrative, independent of file format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """A PHI annotation: 0-based, end-exclusive character offsets.

    `subtype` keeps the i2b2 fine-grained TYPE (e.g. "CITY" under LOCATION)
    so that a round trip through i2b2 XML loses nothing.
    """

    start: int
    end: int
    label: str
    subtype: str | None = None


@dataclass(slots=True)
class Document:
    """A narrative and its (possibly empty) gold PHI spans.

    `meta` carries whatever extra fields the input had; they are kept for
    round trips but never interpreted by the de-identifiers.
    """

    doc_id: str
    text: str
    spans: list[GoldSpan] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        """Reject spans that do not slice the text; raises ValueError.

        The message names offsets only, never the text, so it is safe to log.
        """
        n = len(self.text)
        for i, s in enumerate(self.spans):
            if not (0 <= s.start < s.end <= n):
                raise ValueError(
                    f"span {i} has offsets [{s.start}, {s.end}) outside the text (length {n})"
                )
