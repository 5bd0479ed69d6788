"""Shared building blocks of the pattern detectors: the match type, unit words, look-around helpers.

Why this module exists: every detector family (dates, ages, phones,
e-mail/URL/IP, IDs) reports the same span type, `PatternMatch`, and most of
them need the same notion of a clinical value. A number followed by a unit
or count word ("5 mg", "3 days", "40%") is a dose, volume, rate or duration,
not a day, a year, a phone number or an identifier; such numbers are masked
by a separate digit rule anyway. Keeping that vocabulary and the look-around
helpers here gives all families one definition of it.

Speed: every regex is compiled once at import. Numeric validation (month
1-12, day 1-31, octet 0-255) is done in Python on the few matches rather than
with alternations at the start of a regex, because the `regex` engine scans
fast only when a pattern starts with a plain character class or contains a
required literal. Patterns anchor on that cheap part (a digit, a month word,
".tld", "y" of "yo"/"years") and look outwards with `_preceded_by` and
`_followed_by`; digit runs use possessive or bounded quantifiers, so the
detectors stay linear on long runs of digits and punctuation.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex as re


@dataclass(frozen=True, slots=True)
class PatternMatch:
    """One detected span: 0-based, end-exclusive offsets, category and detector name."""

    start: int
    end: int
    category: str
    detector: str


# Units and count words that mark the number before them as a clinical value
# (dose, volume, rate, duration), not a day, year or identifier.
_UNIT_WORDS = (
    # "9/2 GM + COCCI", "gram neg rods": a Gram stain after its date, no amount in grams
    r"mg|mcg|µg|μg|ug|ng|pg|(?:gms?|grams?)(?![ \t]?(?:[+-]|pos\b|neg\b|positive|negative))|g|kg|lbs?|oz|"
    r"mls?|dl|cl|l|ccs?|iu|u|units?|meq|mmol|µmol|umol|nmol|pmol|mol|mosm|"
    r"mmhg|mm3?|cm|km|ft|mcl|µl|ul|fl|liters?|litres?|gallons?|pints?|quarts?|cups?|inch(?:es)?|"
    r"hrs?|hours?|h|mins?|minutes?|secs?|seconds?|days?|d|wks?|weeks?|mos|months?|"
    r"tabs?|tablets?|caps?|capsules?|pills?|puffs?|drops?|gtts?|doses?|times|sprays?|vials?|"
    r"amps?|ampoules?|sachets?|patch(?:es)?|injections?|infusions?|cycles?|courses?|"
    r"bpm|breaths?|beats?|x|k|kcal|cal|ppm"
)
_UNIT_AHEAD = rf"\s{{0,2}}(?:[%°]|(?i:{_UNIT_WORDS})(?![^\W\d_]|-[^\W\d_]))"  # "x-ray" is no unit
#: Negative look-ahead for the end of a number: "not followed by a unit".
_NOT_UNIT = rf"(?!{_UNIT_AHEAD})"
_UNIT_AHEAD_RE = re.compile(_UNIT_AHEAD)
_UNIT_CODE_RE = re.compile(rf"\d+(?:[.,]\d+)?(?:{_UNIT_WORDS})(?:/(?:{_UNIT_WORDS}))*", re.IGNORECASE)
#: a range of two amounts with a unit on either end ("500-1000CC", "750cc-1250", "0700am-1900hrs")
_UNIT_RANGE_RE = re.compile(
    rf"(?P<a>\d+(?:[.,]\d+)?)(?P<ua>{_UNIT_WORDS}|am|pm)?-(?P<b>\d+(?:[.,]\d+)?)(?P<ub>{_UNIT_WORDS}|am|pm)?", re.IGNORECASE
)


def unit_range(code: str) -> bool:
    """Is `code` a rising range of two amounts with a unit written on at least one end?"""
    m = _UNIT_RANGE_RE.fullmatch(code)
    if m is None or not (m.group("ua") or m.group("ub")):
        return False
    return float(m.group("a").replace(",", ".")) < float(m.group("b").replace(",", "."))


def _preceded_by(text: str, pos: int, pattern: re.Pattern[str], window: int = 30) -> re.Match[str] | None:
    """Match of an end-anchored `pattern` just before `pos` (a variable-length look-behind)."""
    return pattern.search(text, max(0, pos - window), pos)


def _followed_by(text: str, pos: int, pattern: re.Pattern[str]) -> bool:
    """Does `pattern` match right at `pos`?"""
    return pattern.match(text, pos) is not None


def _digit_count(s: str) -> int:
    return sum(map(str.isdigit, s))
