"""The in-memory form of an annotated narrative, independent of file format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Labels of keep spans: clinical content a reviewer needs after
#: de-identification (suspect drug, its dose, a lab value, a duration or time
#: to onset, the reaction, a lot number). Defined here once; the JSONL reader,
#: the synthetic generator and the evaluation all use this tuple.
KEEP_LABELS: tuple[str, ...] = ("DRUG", "DOSE", "LAB", "DURATION", "REACTION", "LOT")


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


@dataclass(frozen=True, slots=True)
class KeepSpan:
    """Clinical content that must survive de-identification: 0-based, end-exclusive.

    `label` is one of :data:`KEEP_LABELS`. The evaluation reports which share
    of its tokens no masked span touches (keep-retention).
    """

    start: int
    end: int
    label: str


@dataclass(slots=True)
class Document:
    """A narrative, its (possibly empty) gold PHI spans and keep spans.

    `meta` carries whatever extra fields the input had; they are kept for
    round trips but never interpreted by the de-identifiers.
    """

    doc_id: str
    text: str
    spans: list[GoldSpan] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    keep: list[KeepSpan] = field(default_factory=list)

    def validate(self) -> None:
        """Reject spans that do not slice the text or keep labels outside KEEP_LABELS; raises ValueError.

        The message names offsets and indices only, never the text, so it is
        safe to log.
        """
        n = len(self.text)
        for i, s in enumerate(self.spans):
            if not (0 <= s.start < s.end <= n):
                raise ValueError(
                    f"span {i} has offsets [{s.start}, {s.end}) outside the text (length {n})"
                )
        for i, k in enumerate(self.keep):
            if not (0 <= k.start < k.end <= n):
                raise ValueError(
                    f"keep span {i} has offsets [{k.start}, {k.end}) outside the text (length {n})"
                )
            if k.label not in KEEP_LABELS:
                raise ValueError(f"keep span {i} has a label outside {', '.join(KEEP_LABELS)}")
