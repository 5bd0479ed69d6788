from __future__ import annotations

import pytest

from deid_core.replace.entities import build_entities
from deid_core.results import MaskedToken


def _ents(rules, text: str) -> list[tuple[str, str]]:
    return [(e.label, text[e.start : e.end]) for e in build_entities(text, rules.analyse(text).masked())]


def test_detector_groups_and_name_gaps_form_entities(rules) -> None:
    text = "Seen Monday, 12-JAN-2014 by Dr. J. Smith; dates 8/14, 8/15 in New York."
    ents = _ents(rules, text)
    assert ("DATE", "Monday, 12-JAN-2014") in ents
    assert ("NAME", "J. Smith") in ents
    assert ("DATE", "8/14") in ents and ("DATE", "8/15") in ents  # two matches stay two dates
    assert ("LOCATION", "New York") in ents


def test_categories_and_groups_never_mix() -> None:
    text = "Ann Boston 1 2"
    masked = [MaskedToken(0, 3, "NAME", 1.0), MaskedToken(4, 10, "LOCATION", 1.0),
              MaskedToken(11, 12, "DATE", 1.0, 0), MaskedToken(13, 14, "DATE", 1.0, 1)]
    assert [(e.label, e.start, e.end) for e in build_entities(text, masked)] == [
        ("NAME", 0, 3), ("LOCATION", 4, 10), ("DATE", 11, 12), ("DATE", 13, 14)]


def test_unknown_tokens_stay_separate_and_overlaps_are_refused() -> None:
    text = "xq zz"
    assert len(build_entities(text, [MaskedToken(0, 2, "PHI", 1.0), MaskedToken(3, 5, "PHI", 1.0)])) == 2
    with pytest.raises(ValueError):
        build_entities(text, [MaskedToken(0, 3, "PHI", 1.0), MaskedToken(2, 5, "PHI", 1.0)])


def test_a_detected_date_takes_in_a_weekday_but_not_a_loose_number() -> None:
    text = "Monday 21Mar2021 09:30"
    masked = [MaskedToken(0, 6, "DATE", 1.0), MaskedToken(7, 9, "DATE", 1.0, 0),
              MaskedToken(9, 12, "DATE", 1.0, 0), MaskedToken(12, 16, "DATE", 1.0, 0),
              MaskedToken(17, 19, "DATE", 1.0)]
    assert [text[e.start : e.end] for e in build_entities(text, masked)] == ["Monday 21Mar2021", "09"]
