"""Synthetic, fully annotated PV case narratives (no real data involved).

The project generates its own sample corpus rather than shipping real
reports; the same generator later seeds training data. See
:mod:`deid_core.synthetic.narratives` for the guarantees (exact spans,
determinism, template coverage).
"""

from deid_core.synthetic.builder import CLINICAL_KINDS, LABELS
from deid_core.synthetic.narratives import (
    SyntheticNarrative,
    generate_narratives,
    generate_one,
    template_for,
)
from deid_core.synthetic.templates import STYLES, TEMPLATES

__all__ = [
    "CLINICAL_KINDS",
    "LABELS",
    "STYLES",
    "TEMPLATES",
    "SyntheticNarrative",
    "generate_narratives",
    "generate_one",
    "template_for",
]
