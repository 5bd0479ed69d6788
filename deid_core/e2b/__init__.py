"""ICH E2B case safety reports (R2 ``ichicsr`` and R3 HL7 messages) for de-identification.

The package turns E2B files into :class:`~.model.Report` objects that say
which parts of a report are free text (to run through the detector) and
which structured elements are personal data as a whole (to replace as one
entity), each at a stable path. It reads only; writing a de-identified file
back is a separate concern.

* :mod:`.model` -- the report, text field and structured field types;
* :mod:`.parse` -- streaming, secure reading of R2 and R3 files;
* :mod:`.r2`, :mod:`.r3` (+ :mod:`.r3_patient`) -- what is extracted from
  each format, and why;
* :mod:`.synthetic` -- the project's own sample E2B files (imported lazily:
  it pulls in Faker, which the parsing path does not need).
"""

from __future__ import annotations

from typing import Any

from deid_core.e2b.errors import E2BParseError
from deid_core.e2b.model import LABELS, Label, Report, StructuredField, TextField
from deid_core.e2b.parse import iter_reports, parse_reports

__all__ = [
    "LABELS",
    "E2BParseError",
    "Label",
    "Report",
    "StructuredField",
    "TextField",
    "iter_reports",
    "parse_reports",
    "synthetic_r2_batch",
    "synthetic_r3_batch",
]


def __getattr__(name: str) -> Any:
    """Load the synthetic generators on first use only."""
    if name in ("synthetic_r2_batch", "synthetic_r3_batch"):
        from deid_core.e2b import synthetic

        return getattr(synthetic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
