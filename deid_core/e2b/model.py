"""What the de-identifier needs from one E2B case safety report.

An ICSR carries personal data in two shapes, and they are de-identified
differently, so the model keeps them apart:

* :class:`TextField` -- free text (the case narrative, comments, verbatim
  terms). PHI can sit anywhere inside it, so the text goes through the
  detector like any narrative.
* :class:`StructuredField` -- an element whose *whole value* is one piece of
  PHI of a known kind (a birth date, a reporter's family name, a phone
  number). No detection is needed: the value is replaced as one entity of
  its ``label``.

Every field has a ``path``: a stable id, unique within its report, that
says where the value came from ("reaction[0].start_date",
"reporter_comment"). Paths are what later steps join on (the de-identified
value goes back to the same path) and what they group by (all DATE paths of
a case shift by the same offset), so they are built from the report's
structure, never from its content.

The classes are frozen, slotted and hold only strings and tuples: reports
are produced by the million in Spark executors, hashed for change detection
and compared in tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from deid_core.categories import E2B_LABELS, E2BLabel

Label = E2BLabel
"""The entity kinds a structured value is replaced as."""

LABELS: tuple[Label, ...] = E2B_LABELS

Format = Literal["R2", "R3"]


@dataclass(frozen=True, slots=True)
class TextField:
    """A free-text element to de-identify.

    ``text`` is exactly as written in the XML (after entity and character
    reference decoding), surrounding white space included, so that offsets
    found in it are offsets in the element's content.
    """

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class StructuredField:
    """An identifying structured element; ``value`` is replaced as one entity of ``label``.

    ``value`` is stripped of surrounding white space and of E2B packaging
    that carries no identity (a telecom URI's ``tel:``/``mailto:`` scheme,
    an age's unit), so that a replacement can be written back in its place.
    """

    path: str
    label: Label
    value: str


@dataclass(frozen=True, slots=True)
class Report:
    """One ICSR, one version of a case.

    ``case_id`` plus ``version`` identify a row: a retransmission of the same
    case (a follow-up) has the same ``case_id`` and a new ``version``.
    ``report_id`` is the sender's own id for the report, kept for tracing.
    ``received_date`` is the date of the most recent information, exactly as
    written (E2B date digits such as ``"20140112"``), or None.
    ``country`` is the ISO 3166 code of the country where the reaction
    occurred, else of the primary source (QA samples are stratified by it;
    a country code alone does not identify anyone, so it is kept).
    """

    case_id: str
    version: str
    format: Format
    report_id: str
    received_date: str | None
    sender: str | None
    text_fields: tuple[TextField, ...]
    structured_fields: tuple[StructuredField, ...]
    country: str | None = None

    def text(self, path: str) -> str | None:
        """The text of the free-text field at ``path``, or None."""
        for field in self.text_fields:
            if field.path == path:
                return field.text
        return None

    def value(self, path: str) -> str | None:
        """The value of the structured field at ``path``, or None."""
        for field in self.structured_fields:
            if field.path == path:
                return field.value
        return None
