"""The template registry: how a new narrative style plugs in.

A template is a function that writes one narrative into a
:class:`~deid_core.synthetic.builder.NarrativeBuilder` from a
:class:`~deid_core.synthetic.case.Doc`. Registering it with :func:`template`
is all a new style needs: the generator schedules every registered template
evenly, so coverage tests and downstream training sets pick it up unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from deid_core.synthetic.builder import NarrativeBuilder
from deid_core.synthetic.case import Doc

Render = Callable[[NarrativeBuilder, Doc], None]

STYLES: tuple[str, ...] = (
    "regulator", "consumer", "literature", "follow_up", "telegraphic_caps", "translated", "nursing",
)
"""Narrative styles seen in real ICSR databases (the ``meta['style']`` values)."""

CASINGS: tuple[str, ...] = ("as_is", "upper", "lower")


@dataclass(frozen=True, slots=True)
class Template:
    """A registered narrative template.

    ``casing`` forces a case for the whole document (telegraphic notes are
    always upper case); ``None`` lets the generator vary it. ``locales``
    restricts reporting countries (a "translated from German" summary must
    come from a German locale); ``None`` means any.
    """

    id: str
    style: str
    render: Render
    casing: str | None = None
    locales: tuple[str, ...] | None = None


TEMPLATES: dict[str, Template] = {}


def template(template_id: str, style: str, *, casing: str | None = None,
             locales: tuple[str, ...] | None = None) -> Callable[[Render], Render]:
    """Decorator registering ``render`` under ``template_id``; ids must be unique."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}")
    if casing is not None and casing not in CASINGS:
        raise ValueError(f"unknown casing {casing!r}")

    def register(render: Render) -> Render:
        if template_id in TEMPLATES:
            raise ValueError(f"duplicate template id {template_id!r}")
        TEMPLATES[template_id] = Template(template_id, style, render, casing, locales)
        return render

    return register
