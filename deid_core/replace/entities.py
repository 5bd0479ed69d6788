"""Masked tokens -> entities: the units that get one replacement each.

A date "12-JAN-2014" is three masked tokens but one date to shift; "J.
Smith" is two tokens of one name. Tokens are joined when they come from one
detector match (same group), or when they share a category and only a
short name-like gap separates them ("J. Smith", "Mary-Ann", "New York").
A weekday next to a date ("Monday, 12 January 2014") joins the date so that
it can follow the shift.

Tokens of different detector matches are never joined ("8/14, 8/15" are two
dates), and neither are tokens of different categories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex as re

from deid_core.categories import UNKNOWN_LABEL
from deid_core.results import MaskedToken

#: Gaps inside a name or place: a space or two, an initial's dot, a hyphen, an apostrophe.
_NAME_GAP = re.compile(r"[ \t]{1,2}|\.[ \t]?|[-'’]")
#: Dates may also be separated from their weekday by a comma.
_DATE_GAP = re.compile(r"[ \t]{1,2}|,[ \t]?|\.[ \t]?|[-/]")


@dataclass(frozen=True, slots=True)
class Entity:
    start: int
    end: int
    label: str
    score: float
    #: offsets of the entity's tokens (the gaps between them are not PHI)
    tokens: tuple[tuple[int, int], ...]
    #: a pattern or context detector matched it (its category is a shape, not a guess)
    detected: bool = False


def _joins(text: str, prev: MaskedToken, cur: MaskedToken) -> bool:
    if prev.label != cur.label:
        return False
    if prev.group >= 0 and cur.group >= 0:
        return prev.group == cur.group
    if cur.label == UNKNOWN_LABEL:
        return False  # unknown tokens are no entity: "[PHI] [PHI]" keeps the shape
    if (prev.group >= 0) != (cur.group >= 0):
        # a detector match takes in a neighbouring word ("Monday, 12 Jan 2014",
        # "Dr. Ann Lee Jr"), not a loose number ("21Mar2021 09" of a clock time)
        loose = cur if cur.group < 0 else prev
        if not text[loose.start : loose.end].isalpha():
            return False
    gap = text[prev.end : cur.start]
    pattern = _DATE_GAP if cur.label == "DATE" else _NAME_GAP
    return pattern.fullmatch(gap) is not None


def build_entities(text: str, masked: Sequence[MaskedToken]) -> list[Entity]:
    """Entities in text order; raises ValueError on overlapping tokens."""
    out: list[Entity] = []
    run: list[MaskedToken] = []

    def close() -> None:
        if run:
            out.append(
                Entity(
                    run[0].start, run[-1].end, run[0].label, max(m.score for m in run),
                    tuple((m.start, m.end) for m in run), any(m.group >= 0 for m in run),
                )
            )

    last_end = -1
    for m in sorted(masked, key=lambda m: m.start):
        if m.start < last_end:
            raise ValueError("masked spans overlap")
        last_end = m.end
        if run and _joins(text, run[-1], m):
            run.append(m)
            continue
        close()
        run = [m]
    close()
    return out
