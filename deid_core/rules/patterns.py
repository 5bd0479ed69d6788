"""Pattern detectors for PHI-shaped substrings: dates, ages, phones, e-mail, URLs, IPs, IDs.

Why this module exists: the rule layer is an *inverse* de-identifier. It masks
every token it cannot vouch for, and a token that overlaps a match found here
is masked and labelled with the match's category, which decides the
placeholder ([DATE], [PHONE], ...). A missed identifier leaks while an extra
match only costs readability, so the patterns lean towards recall. They still
keep clinical values (doses, lab values, vital signs, clock times, durations)
out of DATE/PHONE/ID where the context says so: those numbers are masked by a
separate digit rule anyway, and the only effect of a wrong category here is a
visibly wrong placeholder.

Date and age patterns are composed from small parts (month names, 1-2 digit
days, 2/4 digit years; "y.o.", "years old", "aged N"), as rule-based
de-identification of VigiBase narratives did, and extended with the shapes of
nursing notes (month/day without a year, ordinal days, space-separated
dates). Phone numbers combine the `phonenumbers` matcher with regexes for the
notations it cannot be relied on for.

Speed: every regex is compiled once at import. Numeric validation (month
1-12, day 1-31, octet 0-255) is done in Python on the few matches rather than
with alternations at the start of a regex, because the `regex` engine scans
fast only when a pattern starts with a plain character class or contains a
required literal. Patterns anchor on that cheap part (a digit, a month word,
".tld", "y" of "yo"/"years") and look outwards; digit runs use possessive or
bounded quantifiers, so `find` stays linear on long runs of digits and
punctuation.
"""

from __future__ import annotations

import bisect
import calendar
import ipaddress
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import phonenumbers
import regex as re

from deid_core.categories import PATTERN_CATEGORIES as CATEGORIES

#: Equal-length overlap tie-break (lower wins): the more specific shape first.
_PRIORITY = {"EMAIL": 0, "URL": 1, "IP": 2, "PHONE": 3, "DATE": 4, "AGE": 5, "ID": 6}

DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "SE", "IN", "AU", "CA", "JP", "BR")


@dataclass(frozen=True, slots=True)
class PatternMatch:
    """One detected span: 0-based, end-exclusive offsets, category and detector name."""

    start: int
    end: int
    category: str
    detector: str


# --------------------------------------------------------------------------
# Shared building blocks
# --------------------------------------------------------------------------

# Units and count words that mark the number before them as a clinical value
# (dose, volume, rate, duration), not a day, year or identifier.
_UNIT_WORDS = (
    r"mg|mcg|µg|μg|ug|ng|pg|gms?|grams?|g|kg|lbs?|oz|"
    r"mls?|dl|cl|l|cc|iu|u|units?|meq|mmol|µmol|umol|nmol|pmol|mol|mosm|"
    r"mmhg|mm3?|cm|km|ft|mcl|µl|ul|fl|"
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

_YEAR4 = r"(?:19|20)\d{2}"
_YEAR = rf"(?:{_YEAR4}|['’]\d{{2}}|\d{{2}})(?!\d)"


def _preceded_by(text: str, pos: int, pattern: re.Pattern[str], window: int = 30) -> re.Match[str] | None:
    """Match of an end-anchored `pattern` just before `pos` (a variable-length look-behind)."""
    return pattern.search(text, max(0, pos - window), pos)


def _followed_by(text: str, pos: int, pattern: re.Pattern[str]) -> bool:
    """Does `pattern` match right at `pos`?"""
    return pattern.match(text, pos) is not None


def _digit_count(s: str) -> int:
    return sum(map(str.isdigit, s))


# --------------------------------------------------------------------------
# DATE
# --------------------------------------------------------------------------

# Dates with a month name are grown outwards from each month word: one scan
# for month words, then anchored look-ups for a day or a year on either side.
# Forms: 12-JAN-2014, 12 Jan 14, 12JAN2014, 24th of January 2014, 24 January,
# January 24, 2014, Sept. 3rd, 2019, Jan 24, jan2014, Jan-2014, Jan '14,
# May of 2014, 2014 oct, 2014-Jan-12.
_MONTH_WORD_RE = re.compile(
    r"(?<![^\W\d_])(?P<mon>j(?:an(?:uary)?|u(?:ne?|ly?))|feb(?:ruary)?|ma(?:r(?:ch)?|y)|a(?:pr(?:il)?|ug(?:ust)?)"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![^\W\d_])\.?",
    re.IGNORECASE,
)
_DAY_BEFORE_RE = re.compile(r"(?<![\w.,/:])(?P<day>\d{1,2})(?i:st|nd|rd|th)?(?i:\s+of\s+(?:the\s+)?|[\s./-]{0,3})$")
_YEAR_BEFORE_RE = re.compile(r"(?<![\w.,/:])(?:19|20)\d{2}[\s./-]{0,3}$")
_DAY_AFTER_RE = re.compile(
    rf"[\s./-]{{0,3}}(?P<day>\d{{1,2}})(?i:st|nd|rd|th)?(?![^\W_])"
    rf"(?:(?:,\s*|,?[\s./-]{{1,3}})(?P<year>{_YEAR}){_NOT_UNIT})?"
)
_YEAR_AFTER_RE = re.compile(rf"[\s.,/-]{{0,3}}(?i:of\s+)?(?:{_YEAR4}|['’]\d{{2}})(?!\d){_NOT_UNIT}")
_ANY_YEAR_AFTER_RE = re.compile(rf"[\s.,/-]{{0,3}}{_YEAR}{_NOT_UNIT}")
#: Month words that are also ordinary English: in lower case they count only
#: when a number follows them inside the match ("may 2014", not "may be").
_AMBIGUOUS_MONTHS = frozenset({"may", "mar", "march"})
#: Full month names that stand alone as a DATE ("since January"); May and
#: March are left out because they are also common English words.
_FULL_MONTH_NAMES = frozenset("january february april june july august september october november december".split())

# 1/8/14, 01/08/2014, 21.03.2020, 21.3.20, 9/30/20 (either day or month first)
_DATE_NUMERIC_RE = re.compile(
    r"(?<![\w.,/:])(?P<a>\d{1,2})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2})(?!\d)(?![./-]\d)"
)
# 2014-01-12, 2014/01/12, 2014-01-12T08:30 (an attached ISO time is kept)
_DATE_ISO_RE = re.compile(
    r"(?<![\w.,/:])(?P<y>\d{4})(?P<sep>[./-])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?!\d)(?![./-]\d)"
    r"(?:T\d{2}(?::?\d{2}){1,2}(?:Z|[+-]\d{2}:?\d{2})?(?!\d))?"
)
# 03/2014, 3-2014
_DATE_MONTH_YEAR_RE = re.compile(rf"(?<![\w.,/:])(?P<m>\d{{1,2}})[./-](?P<y>\d{{4}})(?!\d)(?![./-]\d){_NOT_UNIT}")
# 20140112: yyyymmdd only; other 8-digit runs are left to the ID detector
_DATE_COMPACT_RE = re.compile(r"(?<![\w.,])\d{8}(?!\d)(?![.,]\d)")
# "FU 7 10 2003": d m yyyy with single spaces (4-digit year only, to stay
# clear of space-separated series of lab values)
_DATE_SPACED_RE = re.compile(r"(?<![\w.,/:-])(?P<a>\d{1,2})[ \t](?P<b>\d{1,2})[ \t](?P<y>\d{4})(?!\d)(?![.,:]\d)")
# 10/13, 8/23: month/day without a year, as nursing notes write them.
# Trade-off: "4/5" (a muscle-power score) and "10/13" (a date) look the same.
# The date reading is accepted whenever both parts are valid in either order
# and the context does not mark a value (a unit or "%" after it; "BP",
# "strength", "x", ... before it). A false DATE on a value only changes the
# placeholder of a number that is masked anyway; a missed date leaks.
_DATE_MONTH_DAY_RE = re.compile(r"(?<![\w.,/:])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\w/])(?![.,:]\d)")
_VALUE_BEFORE_RE = re.compile(
    r"(?:\b(?:n?i?bp|b/p|abp|blood\s+pressure|pressures?|strength|power|motor|muscles?|scored?|"
    r"grades?|ratio|gcs|apgars?|pain|sats?|spo2|o2|hr|rr|pulse|temp|dilution|titers?|titres?|"
    r"vision|acuity|va|reflexes|dtrs?|rated?|ef|fio2|peep|ie|i:e|x)|[x×*=])\s*[:=]?\s*(?:of\s+)?$",
    re.IGNORECASE,
)
_VALUE_AFTER_RE = re.compile(
    rf"{_UNIT_AHEAD}|\s*(?:strength|power|pain|score|scale|ratio|dilution|titer|titre|bilat\w*|"
    r"murmur|systolic|diastolic|in\s+strength)\b",
    re.IGNORECASE,
)
# 1977, 2014, 1990s: a bare 19xx/20xx number is read as a year
_DATE_YEAR_RE = re.compile(rf"(?<![\w.,:/#$£€+])(?P<y>[12][09]\d{{2}})(?:['’]?s)?(?![\w])(?![.,:]\d){_NOT_UNIT}")
_TIME_BEFORE_RE = re.compile(r"(?:\bat|@)\s*$", re.IGNORECASE)  # "at 2000" is a clock time
# mid-2014, Q3 2019, spring 2019, end of 2014: a year with a period word before it
_PERIOD_BEFORE_RE = re.compile(
    r"(?<![^\W\d_])(?:(?:early|mid|late|end\s+of|beginning\s+of|start\s+of)[\s-]?|q[1-4][\s-]?|h[12][\s-]?"
    r"|(?:spring|summer|autumn|fall|winter)(?:\s+of)?\s+)$",
    re.IGNORECASE,
)
# '95, '50s: a two-digit year after an apostrophe
_DATE_APOS_YEAR_RE = re.compile(rf"(?<![\w'’])['’]\d{{2}}s?(?![\w])(?![.,:]\d){_NOT_UNIT}")
# 29th, 11th, 3rd standing alone ("seen on the 29th"), unless a counted noun
# follows ("3rd dose", "2nd-line").
_DATE_ORDINAL_RE = re.compile(r"(?<![\w.,/])(?P<day>\d{1,2})(?i:st|nd|rd|th)(?![\w])")
_ORDINAL_NOUN_AFTER_RE = re.compile(
    r"[\s-]*(?:doses?|dosing|cycles?|lines?|days?|weeks?|months?|years?|times?|trimesters?|courses?|"
    r"infusions?|injections?|shots?|vaccinations?|vaccines?|treatments?|generations?|degrees?|"
    r"grades?|visits?|percentiles?|centiles?|ribs?|toes?|fingers?|digits?|metatarsals?|"
    r"metacarpals?|intercostal|cranial|nerves?|ventricles?|floors?|place|attempts?|episodes?|"
    r"occurrences?|admissions?|hospitali[sz]ations?|birthdays?|decades?|century|order|party|"
    r"lumbar|sacral|cervical|thoracic|vertebrae?|hours?|sessions?|rounds?|pregnancy|child|baby|"
    r"sons?|daughters?|stage|phase|level|quartile|tertile|quintile|streets?|st|avenues?|ave|roads?|rd|"
    r"fl|wards?|class|edition)\b",
    re.IGNORECASE,
)

#: Detectors whose matches are fully numeric dates; a phone candidate that
#: overlaps one of them is a date, not a phone ("21.03.2020", "7 10 2003").
_NUMERIC_DATE_DETECTORS = frozenset({"date_numeric", "date_iso", "date_compact", "date_spaced"})


def _day_month_ok(a: int, b: int) -> bool:
    """True when (a, b) is a valid day/month pair in either order."""
    return (1 <= a <= 31 and 1 <= b <= 12) or (1 <= a <= 12 and 1 <= b <= 31)


def _year_ok(y: str) -> bool:
    """Four-digit years 19xx/20xx; other 4-digit numbers are values or IDs."""
    return y[:2] in ("19", "20")


def _is_compact_date(s: str) -> bool:
    """An 8-digit yyyymmdd that is a real calendar date."""
    if len(s) != 8 or not s.isdigit() or not _year_ok(s):
        return False
    y, m, d = int(s[:4]), int(s[4:6]), int(s[6:])
    return 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]


def _text_dates(text: str) -> Iterator[PatternMatch]:
    """Dates written with a month name, grown outwards from each month word.

    Yields every plausible reading; the resolver keeps the longest. A
    lower-case "may"/"mar"/"march" counts only with a number after it, and a
    full month name standing alone ("since January") is a DATE by itself.
    """
    for mw in _MONTH_WORD_RE.finditer(text):
        s, e = mw.span()
        mon = mw.group("mon")
        strict = mon.islower() and mon in _AMBIGUOUS_MONTHS
        day_before = _preceded_by(text, s, _DAY_BEFORE_RE, 16)
        if day_before and not 1 <= int(day_before.group("day")) <= 31:
            day_before = None
        day_after = _DAY_AFTER_RE.match(text, e)
        if day_after and not 1 <= int(day_after.group("day")) <= 31:
            day_after = None
        if day_after and (day_after.group("year") or not _followed_by(text, day_after.end("day"), _UNIT_AHEAD_RE)):
            yield PatternMatch(s, day_after.end(), "DATE", "date_text")
        year_after = _YEAR_AFTER_RE.match(text, e)
        if year_after:
            yield PatternMatch(s, year_after.end(), "DATE", "date_text")
        if day_before:
            any_year = _ANY_YEAR_AFTER_RE.match(text, e)
            if any_year:
                yield PatternMatch(day_before.start(), any_year.end(), "DATE", "date_text")
            elif not strict:
                yield PatternMatch(day_before.start(), e, "DATE", "date_text")
        year_before = _preceded_by(text, s, _YEAR_BEFORE_RE, 8)
        if year_before and (day_after or not strict):
            yield PatternMatch(year_before.start(), day_after.end("day") if day_after else e, "DATE", "date_text")
        if mon.lower() in _FULL_MONTH_NAMES:
            yield PatternMatch(s, s + len(mon), "DATE", "date_month_name")


def _numeric_dates(text: str) -> Iterator[PatternMatch]:
    """Fully numeric dates with a year; validated so that ratios and ranges drop out."""
    for m in _DATE_NUMERIC_RE.finditer(text):
        a, b, y = int(m.group("a")), int(m.group("b")), m.group("y")
        if _day_month_ok(a, b) and (len(y) == 2 or 1800 <= int(y) <= 2099):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_numeric")
    for m in _DATE_ISO_RE.finditer(text):
        if _year_ok(m.group("y")) and 1 <= int(m.group("m")) <= 12 and 1 <= int(m.group("d")) <= 31:
            yield PatternMatch(m.start(), m.end(), "DATE", "date_iso")
    for m in _DATE_MONTH_YEAR_RE.finditer(text):
        if 1 <= int(m.group("m")) <= 12 and _year_ok(m.group("y")):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_month_year")
    for m in _DATE_COMPACT_RE.finditer(text):
        if _is_compact_date(m.group()):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_compact")
    for m in _DATE_SPACED_RE.finditer(text):
        if _year_ok(m.group("y")) and _day_month_ok(int(m.group("a")), int(m.group("b"))):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_spaced")


def _month_day_dates(text: str) -> Iterator[PatternMatch]:
    """Month/day without a year, unless the context marks it as a value (see the regex note)."""
    for m in _DATE_MONTH_DAY_RE.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        if not _day_month_ok(a, b) or (a, b) == (24, 7):  # "24/7" means around the clock
            continue
        if _preceded_by(text, m.start(), _VALUE_BEFORE_RE) or _followed_by(text, m.end(), _VALUE_AFTER_RE):
            continue
        yield PatternMatch(m.start(), m.end(), "DATE", "date_month_day")


def _partial_dates(text: str) -> Iterator[PatternMatch]:
    """Years (alone or after a period word), apostrophe years and ordinal days."""
    for m in _DATE_YEAR_RE.finditer(text):
        if not _year_ok(m.group("y")) or _preceded_by(text, m.start(), _TIME_BEFORE_RE, 6):
            continue
        yield PatternMatch(m.start(), m.end(), "DATE", "date_year")
        period = _preceded_by(text, m.start(), _PERIOD_BEFORE_RE, 20)
        if period:
            yield PatternMatch(period.start(), m.end(), "DATE", "date_period")
    for m in _DATE_APOS_YEAR_RE.finditer(text):
        yield PatternMatch(m.start(), m.end(), "DATE", "date_year")
    for m in _DATE_ORDINAL_RE.finditer(text):
        if 1 <= int(m.group("day")) <= 31 and not _followed_by(text, m.end(), _ORDINAL_NOUN_AFTER_RE):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_ordinal")


def find_dates(text: str) -> list[PatternMatch]:
    """All DATE candidates (possibly overlapping); `PatternDetector.find` resolves overlaps."""
    out: list[PatternMatch] = []
    out.extend(_text_dates(text))
    out.extend(_numeric_dates(text))
    out.extend(_month_day_dates(text))
    out.extend(_partial_dates(text))
    return out


# --------------------------------------------------------------------------
# AGE
# --------------------------------------------------------------------------

_UNIT_NUMBER_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine)"
# one..ninety-nine in words, factored by first letter so a failing word is left fast
_NUM_WORD = (
    r"(?:(?:t(?:wenty|hirty)|f(?:ou?rty|ifty)|s(?:ixty|eventy)|eighty|ninety)"
    rf"(?:[\s-]?{_UNIT_NUMBER_WORD}(?![^\W\d_]))?"
    r"|t(?:en|wo|hree|welve|hirteen)|f(?:our|ive|ourteen|ifteen)|s(?:ix|even|ixteen|eventeen)"
    r"|e(?:ight|leven|ighteen)|n(?:ine|ineteen)|one)(?![^\W\d_])"
)
_AGE_DIGITS = r"\d{1,3}(?:[.,]\d{1,2})?(?:\s?(?:-|–|to)\s?\d{1,3}(?!\d))?"
_WORD_VALUES = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS_VALUES = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

# Year suffixes all start with "y" (the literal lets the engine skip ahead):
# 9 y.o., 9yo, 45 y/o, 9-year-old, 45-yr-old, 4 years of age, 45 yrs, 45y.
# Only the number is the AGE span.
_AGE_Y_SUFFIX = (
    r"\s?[-–]?\s?(?i:y)"
    r"(?i:\.?\s?o\.?(?![a-eg-ln-z])"  # "yo", "y.o."; an F/M may follow directly (67yoF)
    r"|\s?/\s?o(?![^\W\d_])"
    r"|(?:ears?|rs?)?\.?[\s-]*old(?![^\W\d_])"
    r"|(?:ears?|rs?)\.?\s+of\s+age(?![^\W\d_])"
    r"|(?P<bare>(?:ears?|rs?)?)\.?(?![^\W\d_]))"
)
_AGE_YEAR_RES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?<![\w.,])(?P<num>{_AGE_DIGITS}){_AGE_Y_SUFFIX}"),
    re.compile(rf"(?i:\b(?P<num>{_NUM_WORD})){_AGE_Y_SUFFIX}"),
)
# Infant ages: 3 months old, 6-week-old, 10 days of age, eleven months old
# (one regex per unit letter and number style: a literal lets the engine skip ahead)
_AGE_INFANT_UNITS = (r"(?i:m)(?i:onths?|os?|ths?)", r"(?i:w)(?i:eeks?|ks?)", r"(?i:d)(?i:ays?)")
_AGE_INFANT_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(rf"{num}\s?[-–]?\s?{unit}\.?(?i:[\s-]*old|\s+of\s+age)(?![^\W\d_])")
    for unit in _AGE_INFANT_UNITS
    for num in (rf"(?<![\w.,])(?P<num>{_AGE_DIGITS})", rf"(?i:\b(?P<num>{_NUM_WORD}))")
)
# "45 yrs" is an age; "for 5 yrs" and "2 years ago" are durations.
_DURATION_BEFORE_RE = re.compile(
    r"(?:\b(?:for|over|past|last|previous|prior|next|within|after|since|during|lasting|every|per|in|x)|[x×~])\s*$",
    re.IGNORECASE,
)
_DURATION_AFTER_RE = re.compile(
    r"\s*(?:ago|later|earlier|after|before|prior|previously|since|duration|history|period|follow\w*|of(?!\s+age))\b",
    re.IGNORECASE,
)
# aged 32, age 32, age: 32, age of 41; and "a.o. 85"
_AGE_KEYWORD_RES: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"(?<![^\W\d_])(?i:age)(?i:d|\s*(?:of|is|was|:|=|-))?\s*(?i:of\s+)?"
        rf"(?i:about\s+|approximately\s+|approx\.?\s*|~\s*)?(?P<num>\d{{1,3}}|(?i:{_NUM_WORD}))(?!\d)"
    ),
    re.compile(r"(?<![^\W\d_])(?i:a\.o\.)\s*(?P<num>\d{1,3})(?!\d)"),
)
# in his 80s, in her late 80s, in their eighties
_AGE_DECADE_RE = re.compile(
    r"(?<![^\W\d_])(?:in|at)\s+(?:his|her|their|the|its)\s+(?:(?:early|mid|late)[\s-]*)?"
    r"(?P<num>\d0['’]?s|teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)(?![^\W\d_])",
    re.IGNORECASE,
)
_DECADE_GATES = ("0s", "0's", "0’s", "ties", "teens")
# 67M, 67 F: the sex letter is a capital (case-sensitive); one regex per
# letter, because a literal lets the engine skip ahead
_AGE_SEX_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\w.,/-])(?P<num>\d{1,3})\s?M(?![\w/])"),
    re.compile(r"(?<![\w.,/-])(?P<num>\d{1,3})\s?F(?![\w/])"),
)
_TEMPERATURE_BEFORE_RE = re.compile(r"(?:\btemp\w*|\bt|°)\s*[:=]?\s*$", re.IGNORECASE)
_CATHETER_AFTER_RE = re.compile(r"\s*(?:foley|catheter|cath|fr|french)\b", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)?")
_WORD_SPLIT_RE = re.compile(r"[\s-]+")


def _age_value(num: str) -> float | None:
    """Value of the first number of an age span (digits or words); None if unknown."""
    head = _LEADING_NUMBER_RE.match(num)
    if head:
        return float(head.group().replace(",", "."))
    words = _WORD_SPLIT_RE.split(num.lower())
    if words[0] in _TENS_VALUES:
        return float(_TENS_VALUES[words[0]] + (_WORD_VALUES.get(words[1], 0) if len(words) > 1 else 0))
    return float(_WORD_VALUES[words[0]]) if words[0] in _WORD_VALUES else None


def _plausible_age(num: str) -> bool:
    value = _age_value(num)
    return value is not None and value <= 125


def _year_ages(text: str) -> Iterator[PatternMatch]:
    """Numbers followed by a year unit; bare "yrs"/"years" must not read as a duration."""
    for rx in _AGE_YEAR_RES:
        for m in rx.finditer(text):
            if not _plausible_age(m.group("num")):
                continue
            if m.group("bare") is not None:
                gap = text[m.end("num") : m.start("bare")]
                if not m.group("bare") and any(ch.isspace() for ch in gap):
                    continue  # "45y" is an age, "5 y" is too ambiguous
                if _preceded_by(text, m.start(), _DURATION_BEFORE_RE, 20) or _followed_by(
                    text, m.end(), _DURATION_AFTER_RE
                ):
                    continue
            yield PatternMatch(m.start("num"), m.end("num"), "AGE", "age_phrase")


def find_ages(text: str) -> list[PatternMatch]:
    """AGE candidates; the span is only the number (or number words) of the age."""
    out = list(_year_ages(text))
    low = text.lower()
    if "old" in low or "of age" in low:
        for m in (m for rx in _AGE_INFANT_RES for m in rx.finditer(text)):
            if _plausible_age(m.group("num")):
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_phrase"))
    for rx in _AGE_KEYWORD_RES:
        for m in rx.finditer(text):
            if _plausible_age(m.group("num")):
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_keyword"))
    if any(g in low for g in _DECADE_GATES):
        for m in _AGE_DECADE_RE.finditer(text):
            out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_decade"))
    for rx in _AGE_SEX_RES:
        for m in rx.finditer(text):
            if not 1 <= int(m.group("num")) <= 120:
                continue
            if _preceded_by(text, m.start(), _TEMPERATURE_BEFORE_RE, 12) or _followed_by(
                text, m.end(), _CATHETER_AFTER_RE
            ):
                continue
            out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_sex"))
    return out


# --------------------------------------------------------------------------
# PHONE
# --------------------------------------------------------------------------

_EXT = r"(?:\s?(?:ext(?:ension)?\.?|x)\s?\d{1,5}(?!\d))"
_DIGIT_GROUPS = r"\(?\d++\)?(?:(?:[ .\-/]|\s?[-–]\s?)?\(?\d++\)?){0,7}"

# Coarse phone shape: the windows handed to phonenumbers' matcher. Running the
# matcher over whole narratives for ten regions costs tens of milliseconds
# per document; over these short, pre-filtered windows it costs little.
_PHONE_SHAPE_RE = re.compile(
    rf"(?<![\w+.,/])(?<![^\W_]-)(?P<main>(?:\+\s?)?{_DIGIT_GROUPS})(?P<ext>{_EXT})?", re.IGNORECASE
)
# Why: NANP numbers ((410) 555-9876, 410.555.9876, 240444-1243) must be found
# even when US/CA are not among the configured regions or the per-text
# matcher budget is spent.
_PHONE_NANP_RE = re.compile(
    rf"(?<![\w+.,/])(?<![^\W_]-)(?:\+?1[\s.-]?)?(?:\(\d{{3}}\)\s?|\d{{3}}[\s.-]?)\d{{3}}[\s.-]?\d{{4}}"
    rf"(?!\d)(?![.,]\d){_EXT}?",
    re.IGNORECASE,
)
# Why: the matcher accepts 7-digit local numbers (555-9876) only for some
# regions; the hyphenated 3-4 shape is a phone in any region.
_PHONE_LOCAL_RE = re.compile(r"(?<![\w+.,/-])\d{3}-\d{4}(?!\d)(?![.,-]\d)")
# Why: international numbers with "+" or "00" (including the "(0)" trunk
# notation) must be found when no region is configured or the budget is spent.
_PHONE_INTL_RE = re.compile(
    rf"(?<![\w+])(?:\+\s?|00)[1-9]\d{{0,3}}(?:[\s.\-/]{{1,2}}(?:\(\d{{1,4}}\)\s?)?\d{{1,8}}){{2,7}}(?!\d){_EXT}?",
    re.IGNORECASE,
)
# Why: after "tel", "fax", "pager", ... a number is a phone even when short
# (pager 54321, beeper #33445); neither the matcher nor the shapes accept it.
_PHONE_KEYWORD_RE = re.compile(
    r"(?<![^\W\d_])(?P<kw>tel(?:ephone|efon)?|phone|ph|fax|facsimile|pager|beeper|bleep|"
    r"cell(?:ular|phone)?|mobile|mob|contact\s+(?:no|number))(?![^\W\d_])\.?\s*"
    r"(?:(?:no|nr|number|num)(?![^\W\d_])\.?\s*)?[:#.]?\s*#?\s*"
    rf"(?P<num>(?:\+\s?)?{_DIGIT_GROUPS}{_EXT}?)",
    re.IGNORECASE,
)
# Why: an extension on its own ("x 273", "ext. 4411") is a phone. One regex
# per marker, as a literal start lets the engine skip ahead.
_PHONE_EXT_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![^\W\d_])(?i:x)\s?#?\s?(?P<num>\d{3,5})(?!\d)(?![.,]\d)"),
    re.compile(r"(?<![^\W\d_])(?i:ext)(?i:ension)?\.?\s?#?\s?(?P<num>\d{2,5})(?!\d)(?![.,]\d)"),
)
_DIGIT_BEFORE_RE = re.compile(r"\d\s*$")
_SHORT_DECIMAL_RE = re.compile(r"\d{1,3}[.,]\d{1,3}")
_BP_SHAPE_RE = re.compile(r"(?<!\d)\d{2,3}/\d{2,3}(?!\d)")
_SSN_SHAPE_RE = re.compile(r"\d{3}-\d{2}-\d{4}")
_DECIMAL_RE = re.compile(r"\d+[.,]\d+")
_IPV4_SHAPE_RE = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_DIGITS_RE = re.compile(r"\d+")

#: Most coarse windows handed to the matcher per `find` call; the regexes
#: above still run past it, so this only bounds the cost of adversarial text.
_MAX_LIB_WINDOWS = 32
_MAX_WINDOW_CHARS = 40


def _clinical_number_series(main: str) -> bool:
    """True for digit groups that read as clinical values rather than a phone number.

    Rejects blood-pressure pairs (120/80 140/90), series of short values
    (112 145 130, 94-96 97-99), pairs of clock times (0800 2130), decimals,
    SSNs and IPv4 addresses. Numbers starting with "+", "0" or "(" carry
    trunk or international evidence and skip the value checks.
    """
    s = main.strip()
    groups = _DIGITS_RE.findall(s)
    if _SSN_SHAPE_RE.fullmatch(s) or _IPV4_SHAPE_RE.fullmatch(s) or _DECIMAL_RE.fullmatch(s):
        return True
    if len(groups) >= 2 and all(len(g) == 4 and int(g[:2]) < 24 and int(g[2:]) < 60 for g in groups):
        return True
    if s.startswith(("+", "0", "(")):
        return False
    if _BP_SHAPE_RE.search(s):
        return True
    return all(len(g) <= 3 for g in groups)


@lru_cache(maxsize=8192)
def _lib_phone_spans(window: str, regions: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """Spans that phonenumbers' matcher (POSSIBLE leniency) finds in `window`, over all regions.

    Cached because the same numbers (a switchboard, a company fax) recur
    across narratives. Stops early once a region matches the whole window:
    no other region can add a longer span.
    """
    spans: set[tuple[int, int]] = set()
    whole = len(window.rstrip())
    for region in regions:
        for m in phonenumbers.PhoneNumberMatcher(window, region, leniency=phonenumbers.Leniency.POSSIBLE):
            spans.add((m.start, m.end))
        if any(a == 0 and b >= whole for a, b in spans):
            break
    return tuple(sorted(spans))


def _phone_ok(text: str, start: int, end: int, date_cover: bytearray) -> bool:
    """Shared filters for shape-based phone candidates (not the keyword ones)."""
    span = text[start:end]
    if not 7 <= _digit_count(span) <= 20:
        return False
    if span.isdigit():  # a bare digit run is left to the ID detector
        return False
    if 1 in date_cover[start:end]:
        return False
    return not _followed_by(text, end, _UNIT_AHEAD_RE)


class _PhoneFinder:
    """Phone detection for one configured region set."""

    def __init__(self, regions: Sequence[str]) -> None:
        self.regions = tuple(r.upper() for r in regions)

    def find(self, text: str, date_cover: bytearray) -> list[PatternMatch]:
        """All PHONE candidates; `date_cover` marks characters inside numeric dates."""
        out: list[PatternMatch] = []
        self._library(text, date_cover, out)
        for rx, name in (
            (_PHONE_NANP_RE, "phone_nanp"),
            (_PHONE_LOCAL_RE, "phone_local"),
            (_PHONE_INTL_RE, "phone_intl"),
        ):
            for m in rx.finditer(text):
                if _phone_ok(text, m.start(), m.end(), date_cover):
                    out.append(PatternMatch(m.start(), m.end(), "PHONE", name))
        self._keyword(text, out)
        return out

    def _library(self, text: str, date_cover: bytearray, out: list[PatternMatch]) -> None:
        """Coarse windows, pre-filtered, confirmed by phonenumbers' matcher."""
        if not self.regions:
            return
        budget = _MAX_LIB_WINDOWS
        for m in _PHONE_SHAPE_RE.finditer(text):
            main = m.group("main")
            if not 7 <= len(main) <= _MAX_WINDOW_CHARS or _digit_count(main) < 7:
                continue
            if main.isdigit() or _clinical_number_series(main):
                continue
            if 1 in date_cover[m.start() : m.end()] or _followed_by(text, m.end(), _UNIT_AHEAD_RE):
                continue
            if budget == 0:
                break
            budget -= 1
            for a, b in _lib_phone_spans(m.group(), self.regions):
                s, e = m.start() + a, m.start() + b
                if _phone_ok(text, s, e, date_cover) and not _clinical_number_series(text[s:e]):
                    out.append(PatternMatch(s, e, "PHONE", "phone_lib"))

    @staticmethod
    def _keyword(text: str, out: list[PatternMatch]) -> None:
        """Numbers after a phone keyword or an extension marker, even when short."""
        for m in _PHONE_KEYWORD_RE.finditer(text):
            num = m.group("num")
            need = 5 if m.group("kw").lower() == "ph" else 3  # "pH 7.35" is a lab value
            if _digit_count(num) < need or _SHORT_DECIMAL_RE.fullmatch(num):
                continue
            out.append(PatternMatch(m.start("num"), m.end("num"), "PHONE", "phone_keyword"))
        for rx in _PHONE_EXT_RES:
            for m in rx.finditer(text):
                if _followed_by(text, m.end(), _UNIT_AHEAD_RE) or _preceded_by(text, m.start(), _DIGIT_BEFORE_RE, 4):
                    continue  # "x 100 mg", "2 x 500"
                out.append(PatternMatch(m.start("num"), m.end("num"), "PHONE", "phone_keyword"))


# --------------------------------------------------------------------------
# EMAIL, URL, IP
# --------------------------------------------------------------------------

_EMAIL_RE = re.compile(r"(?<![\w.%+'-])[\w.%+'-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])")
_URL_CHARS = r"[^\s<>\"'`]"
_URL_SCHEME_RE = re.compile(rf"(?<![\w])(?:https?|s?ftps?)://{_URL_CHARS}+", re.IGNORECASE)
_URL_WWW_RE = re.compile(rf"(?<![\w.@/-])www\d{{0,3}}\.{_URL_CHARS}+", re.IGNORECASE)
_WWW_HOST_RE = re.compile(r"www\d{0,3}\.[^.\s/]+\.[^\W\d_]{2,}", re.IGNORECASE)
# Bare domains are found from their ".tld" (cheap to scan for) backwards.
_TLD_RE = re.compile(r"\.(?P<tld>[A-Za-z]{2,24})(?![\w@-])")
_HOST_BEFORE_RE = re.compile(
    r"(?<![\w.@/:%+-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){0,8}"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$"
)
_URL_PATH_RE = re.compile(rf"[/?#]{_URL_CHARS}*")
# A bare domain needs a TLD that looks like one. Generic TLDs count in any
# case; country codes only in lower case, and those that are also words or
# clinical abbreviations (in, it, no, ca, pt, ...) only with a sub-domain or
# a path. Codes such as mg, ml, md, hr, pm are never accepted, so "5.mg",
# "improved.He" or "Dr.Md" never become URLs.
_GENERIC_TLDS = frozenset(
    "com org net edu gov mil int info biz io eu app health hospital clinic pharmacy healthcare online "
    "site website science global museum academy university asia mobi tech".split()
)
_CC_TLDS = frozenset(
    "uk de fr se au jp br ch nl dk fi es nz za ru cn kr hu ro mx sg hk tw ke pk bd lk vn rs bg uy ve".split()
)
_WEAK_CC_TLDS = frozenset("ca in it no at be us co pt ie me is ai".split())
_ANY_TLD = _GENERIC_TLDS | _CC_TLDS | _WEAK_CC_TLDS
_URL_TRAIL = ".,;:!?'\"”’»"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_IPV4_RE = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?![\w])(?!\.\d)")
_IPV6_CANDIDATE_RE = re.compile(r"(?<![\w:.])[0-9A-Fa-f:]{2,39}(?:\d{1,3}(?:\.\d{1,3}){3})?(?![\w:]|\.\d)")


def _strip_url_tail(s: str) -> str:
    """Drop trailing sentence punctuation and unbalanced closing brackets."""
    while s:
        last = s[-1]
        if last in _URL_TRAIL or (last in _CLOSERS and s.count(last) > s.count(_CLOSERS[last])):
            s = s[:-1]
        else:
            break
    return s


def find_emails(text: str) -> list[PatternMatch]:
    """E-mail addresses, whole."""
    if "@" not in text:
        return []
    return [PatternMatch(m.start(), m.end(), "EMAIL", "email") for m in _EMAIL_RE.finditer(text)]


def _tld_ok(host: str, tld: str, has_path: bool) -> bool:
    """Is this bare host a plausible domain rather than a run-on sentence or abbreviation?"""
    low = tld.lower()
    if low in _GENERIC_TLDS:
        return True
    if not tld.islower():
        return False
    if low in _CC_TLDS:
        return True
    return low in _WEAK_CC_TLDS and (host.count(".") >= 2 or has_path)


def _bare_domains(text: str) -> Iterator[PatternMatch]:
    """name.tld[/path] without scheme or www, grown backwards from the ".tld"."""
    for m in _TLD_RE.finditer(text):
        tld = m.group("tld")
        if tld.lower() not in _ANY_TLD:
            continue
        head = _preceded_by(text, m.start(), _HOST_BEFORE_RE, 120)
        if head is None:
            continue
        path = _URL_PATH_RE.match(text, m.end())
        if not _tld_ok(text[head.start() : m.end()], tld, path is not None):
            continue
        url = _strip_url_tail(text[head.start() : path.end() if path else m.end()])
        yield PatternMatch(head.start(), head.start() + len(url), "URL", "url_domain")


def find_urls(text: str) -> list[PatternMatch]:
    """URLs with a scheme, www-prefixed hosts and bare domains with a plausible TLD."""
    out: list[PatternMatch] = []
    if "://" in text:
        for m in _URL_SCHEME_RE.finditer(text):
            url = _strip_url_tail(m.group())
            if len(url) > url.index("://") + 3:
                out.append(PatternMatch(m.start(), m.start() + len(url), "URL", "url_scheme"))
    low = text.lower()
    if "www" in low:
        for m in _URL_WWW_RE.finditer(text):
            url = _strip_url_tail(m.group())
            if _WWW_HOST_RE.match(url):
                out.append(PatternMatch(m.start(), m.start() + len(url), "URL", "url_www"))
    out.extend(_bare_domains(text))
    return out


def find_ips(text: str) -> list[PatternMatch]:
    """IPv4 (octets 0-255, optional CIDR) and IPv6 (validated with `ipaddress`)."""
    out: list[PatternMatch] = []
    for m in _IPV4_RE.finditer(text):
        addr = m.group().split("/")[0]
        if all(int(o) <= 255 for o in addr.split(".")):
            out.append(PatternMatch(m.start(), m.end(), "IP", "ipv4"))
    if "::" in text or text.count(":") >= 7:
        for m in _IPV6_CANDIDATE_RE.finditer(text):
            cand = m.group()
            if cand.count(":") < 2 or not any(ch.isdigit() for ch in cand):
                continue
            try:
                ipaddress.IPv6Address(cand)
            except ValueError:
                continue
            out.append(PatternMatch(m.start(), m.end(), "IP", "ipv6"))
    return out


# --------------------------------------------------------------------------
# ID
# --------------------------------------------------------------------------

# Keyword-introduced codes: MRN 12345678, MR# 445566, case no. 2014-123,
# Lot: AB1234, SSN 123-45-6789, ID: rg17. The regex anchors on the *last*
# keyword before the code (a standalone keyword, a qualifier such as "no",
# "number", "id", or "#"); a qualifier is accepted only when a prefix word
# ("case", "record", "MR", ...) or a standalone keyword precedes it.
_ID_STANDALONE_WORDS = (
    "mrn ssn id lot batch serial license licence dea acct account policy npi passport upin medicaid medicare nhs"
).split()
_ID_QUALIFIER_WORDS = "no nr number num ref reference code identifier identification".split()
_ID_KEYWORD_RE = re.compile(
    r"(?i)(?:\b(?P<kw>\L<id_words>)\b\.?|(?P<kw2>#)|\b(?P<kw3>i\.d|m\.r\.n|s/n)\b\.?)"
    r"\s*[:#=]?\s*(?=[A-Za-z0-9./_-]*\d)(?P<code>[A-Za-z0-9](?:[A-Za-z0-9./_-]{0,38}[A-Za-z0-9])?)(?![A-Za-z0-9])",
    id_words=_ID_STANDALONE_WORDS + _ID_QUALIFIER_WORDS,
)
_ID_PREFIX_BEFORE_RE = re.compile(
    r"(?<![^\W\d_])(?:medical\s+record|health\s+record|record|chart|hospital|unit|health|patient|pt|subject|"
    r"case|report|safety\s+report|reference|ref|manufacturer|mfr|aer|worldwide|study|protocol|accession|"
    r"specimen|sample|member|insurance|claim|control|local|unique|company|sender|tracking|registration|"
    r"file|document|certificate|device|mr|social\s+security|serial|" + "|".join(_ID_STANDALONE_WORDS) + r")"
    r"(?:\s*(?:id|identifier|identification|no|nr|number|num|ref(?:erence)?|code)\b\.?)*\s*#?\s*$",
    re.IGNORECASE,
)
_A_LOT_BEFORE_RE = re.compile(r"\ba\s+$", re.IGNORECASE)
_SSN_RE = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w])(?!-\d)")
# Mixed letter/digit codes with >= 5 digits (US-PFIZER-2014-123456, AB123456)
# are found from a 5-digit core inside one token, then grown to the token.
_ID_CODE_CORE_RE = re.compile(r"\d(?:[A-Za-z_/-]*\d){4}")
_ID_CODE_SHAPE_RE = re.compile(r"[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+){0,8}")
_CODE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/")
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
_ID_DIGITS_RE = re.compile(rf"(?<![\w.,])\d{{6,}}(?![\w])(?![.,]\d){_NOT_UNIT}")


def _keyword_ids(text: str) -> Iterator[PatternMatch]:
    """Codes that follow an identifier keyword; the span is the code only."""
    for m in _ID_KEYWORD_RE.finditer(text):
        kw = (m.group("kw") or m.group("kw2") or m.group("kw3")).lower()
        if kw == "lot" and _preceded_by(text, m.start(), _A_LOT_BEFORE_RE, 6):
            continue  # "a lot 3 times"
        if (kw in _ID_QUALIFIER_WORDS or kw == "#") and not _preceded_by(text, m.start(), _ID_PREFIX_BEFORE_RE, 40):
            continue  # "no. 5", "#3" on their own are not identifiers
        yield PatternMatch(m.start("code"), m.end("code"), "ID", "id_keyword")


def _code_ids(text: str) -> Iterator[PatternMatch]:
    """Mixed letter/digit codes with at least five digits, minus dose-like units (5000000IU)."""
    token_end = 0
    for core in _ID_CODE_CORE_RE.finditer(text):
        if core.start() < token_end:
            continue  # another core of the token just handled
        s, e = core.start(), core.end()
        while s > 0 and text[s - 1] in _CODE_CHARS:
            s -= 1
        while e < len(text) and text[e] in _CODE_CHARS:
            e += 1
        while text[s] in "-_/":
            s += 1
        token_end = e
        while text[e - 1] in "-_/":
            e -= 1
        code = text[s:e]
        if (
            _ID_CODE_SHAPE_RE.fullmatch(code)
            and _ASCII_LETTER_RE.search(code)
            and _digit_count(code) >= 5
            and not _UNIT_CODE_RE.fullmatch(code)
        ):
            yield PatternMatch(s, e, "ID", "id_code")


def find_ids(text: str) -> list[PatternMatch]:
    """Identifier candidates: keyword-introduced codes, SSNs, mixed codes and long digit runs."""
    out = list(_keyword_ids(text))
    out.extend(PatternMatch(m.start(), m.end(), "ID", "id_ssn") for m in _SSN_RE.finditer(text))
    out.extend(_code_ids(text))
    for m in _ID_DIGITS_RE.finditer(text):
        if not _is_compact_date(m.group()):  # yyyymmdd is left to DATE
            out.append(PatternMatch(m.start(), m.end(), "ID", "id_digits"))
    return out


# --------------------------------------------------------------------------
# Detector
# --------------------------------------------------------------------------


#: Among identical spans of one category, report the most specific detector
#: ("MRN 445566" is an id_keyword match rather than a bare digit run).
_DETECTOR_RANK = {
    name: i
    for i, name in enumerate(
        (
            "id_keyword", "id_ssn", "id_code", "id_digits",
            "url_scheme", "url_www", "url_domain",
            "phone_keyword", "phone_lib", "phone_nanp", "phone_intl", "phone_local",
            "date_text", "date_iso", "date_numeric", "date_compact", "date_spaced", "date_month_year",
            "date_period", "date_month_day", "date_year", "date_ordinal", "date_month_name",
        )
    )
}


def _resolve(candidates: Iterable[PatternMatch]) -> list[PatternMatch]:
    """Non-overlapping subset sorted by start: longer spans win, then category priority."""
    ranked = sorted(
        candidates,
        key=lambda c: (c.start - c.end, _PRIORITY[c.category], c.start, _DETECTOR_RANK.get(c.detector, 99), c.detector),
    )
    chosen: list[PatternMatch] = []
    starts: list[int] = []
    for c in ranked:
        if c.end <= c.start:
            continue
        i = bisect.bisect_left(starts, c.start)
        if i > 0 and chosen[i - 1].end > c.start:
            continue
        if i < len(chosen) and chosen[i].start < c.end:
            continue
        starts.insert(i, c.start)
        chosen.insert(i, c)
    return chosen


def _cover(text: str, matches: Iterable[PatternMatch]) -> bytearray:
    """Per-character mask of the given spans, for cheap overlap tests."""
    cover = bytearray(len(text))
    for m in matches:
        cover[m.start : m.end] = b"\x01" * (m.end - m.start)
    return cover


class PatternDetector:
    """Finds DATE/AGE/PHONE/EMAIL/URL/IP/ID spans in free text.

    `enabled` restricts the categories reported; `phone_regions` are the
    regions whose numbering plans phonenumbers' matcher tries.
    """

    def __init__(
        self, enabled: Iterable[str] = CATEGORIES, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS
    ) -> None:
        self.enabled = frozenset(enabled)
        unknown = self.enabled - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown pattern categories: {sorted(unknown)}")
        self._phones = _PhoneFinder(phone_regions)

    def find(self, text: str) -> list[PatternMatch]:
        """Non-overlapping matches sorted by start. Where candidates overlap, keep the longer one;
        on equal length prefer EMAIL > URL > IP > PHONE > DATE > AGE > ID."""
        if not text or not self.enabled:
            return []
        en = self.enabled
        cands: list[PatternMatch] = []
        dates = find_dates(text) if ("DATE" in en or "PHONE" in en) else []
        if "DATE" in en:
            cands.extend(dates)
        if "AGE" in en:
            cands.extend(find_ages(text))
        if "PHONE" in en:
            numeric = [d for d in dates if d.detector in _NUMERIC_DATE_DETECTORS]
            cands.extend(self._phones.find(text, _cover(text, numeric)))
        if "EMAIL" in en:
            cands.extend(find_emails(text))
        if "URL" in en:
            cands.extend(find_urls(text))
        if "IP" in en:
            cands.extend(find_ips(text))
        if "ID" in en:
            ids = find_ids(text)
            keyword = [m for m in ids if m.detector == "id_keyword"]
            if keyword:
                # A code after "MRN", "lot", "case no." is an identifier even where
                # it looks like a date, a phone number or an age ("MRN 20140112").
                kw_cover = _cover(text, keyword)
                cands = [
                    c
                    for c in cands
                    if c.category not in ("PHONE", "DATE", "AGE") or 1 not in kw_cover[c.start : c.end]
                ]
            cands.extend(ids)
        return _resolve(cands)
