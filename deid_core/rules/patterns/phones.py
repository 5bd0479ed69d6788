"""PHONE detection: the `phonenumbers` matcher on pre-filtered windows, plus regexes for what it misses.

Why this module exists: phone numbers come in national formats that only a
numbering-plan library knows, so the `phonenumbers` matcher confirms
candidates for the configured regions. Running it over whole narratives is
slow, so it only sees short windows of phone-shaped text, at most
`_MAX_LIB_WINDOWS` per call. Regexes cover the notations it cannot be relied
on for (NANP, hyphenated local numbers, "+"/"00" international numbers,
numbers after "tel"/"fax"/"pager", bare extensions), and these still run
when no region is configured or the window budget is spent. Blood pressures,
series of lab values, clock times, decimals, SSNs, IPv4 addresses and
numeric dates are kept out of PHONE.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import phonenumbers
import regex as re

from deid_core.rules.patterns.common import (
    _UNIT_AHEAD_RE,
    PatternMatch,
    _digit_count,
    _followed_by,
    _preceded_by,
)

_EXT = r"(?:\s?(?:ext(?:ension)?\.?|x)\s?\d{1,5}(?!\d))"
_DIGIT_GROUPS = r"\(?\d++\)?(?:(?:[ .\-/]|\s?[-–]\s?)?\(?\d++\)?){0,7}"

# Coarse phone shape: the windows handed to phonenumbers' matcher. Running the
# matcher over whole narratives for ten regions costs tens of milliseconds
# per document; over these short, pre-filtered windows it costs little.
# A window never starts at the minutes of a clock time: "11:00 89/56 66 14" is a
# time and a row of vital signs, not the number "00 89/56 66 14".
_PHONE_SHAPE_RE = re.compile(
    rf"(?<![\w+.,/])(?<![^\W_]-)(?<!\d:)(?P<main>(?:\+\s?)?{_DIGIT_GROUPS})(?P<ext>{_EXT})?", re.IGNORECASE
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
    r"(?<![^\W\d_])(?P<kw>tel(?:ephone|efon)?|phone|ph|fax|facsimile|pager|pg|beeper|bleep|"
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
_DECIMAL_RANGE_RE = re.compile(r"\d{1,3}[.,]\d{1,3}\s?[-–]\s?\d{1,3}[.,]\d{1,3}")
_BP_SHAPE_RE = re.compile(r"(?<!\d)\d{2,3}/\d{2,3}(?!\d)")
_SSN_SHAPE_RE = re.compile(r"\d{3}-\d{2}-\d{4}")
_DECIMAL_RE = re.compile(r"\d+[.,]\d+")
_IPV4_SHAPE_RE = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_DIGITS_RE = re.compile(r"\d+")
_ONE_DIGIT_FRACTION_RE = re.compile(r"\d\.\d(?!\d)")
#: a decimal fraction on either side of a slash ("7.40/55", "5/3.27")
_DECIMAL_BY_SLASH_RE = re.compile(r"\d\.\d+\s?/|/\s?\d*\.\d")
#: a pH-like decimal (one digit, a point, one or two digits) before a dash; "1.800-555-0199" has three
_PH_BEFORE_DASH_RE = re.compile(r"(?<![\d.])\d\.\d{1,2}\s?-")
#: a four-digit time, then a value of one to three digits or one with a fraction or a slash
_TIME_THEN_VALUE_RE = re.compile(r"\(?(?P<t>\d{4})\)?(?:\s?-\s?|\s)(?:[1-9]\d{0,2}|\d+[./]\d[\d./]*)")
#: the North American grouping in any writing ("201/324/1423", "410) 555-9876"): a phone number
_NANP_ANY_RE = re.compile(r"\d{3}\)?[\s./-]?\d{3}[\s./-]\d{4}")
#: an area or country code in brackets ("(410)", "(+44)"): trunk evidence
_AREA_CODE_RE = re.compile(r"\(\+?\d{1,5}\)")

#: Most coarse windows handed to the matcher per `find` call; the regexes
#: above still run past it, so this only bounds the cost of adversarial text.
_MAX_LIB_WINDOWS = 32
_MAX_WINDOW_CHARS = 40


def _clock_times(span: str) -> bool:
    """Every group three or four digits that read as a 24-hour time ("930-1130", "0700-1245")."""
    groups = _DIGITS_RE.findall(span)
    return bool(groups) and all(len(g) in (3, 4) and _clock_time(g.zfill(4)) for g in groups)


def _clock_time(hhmm: str) -> bool:
    """A four-digit 24-hour time, midnight written "2400" too."""
    return hhmm == "2400" or (int(hhmm[:2]) < 24 and int(hhmm[2:]) < 60)


def _slashed_values(s: str, groups: list[str]) -> bool:
    """Slashed groups that read as measured values, not a number's own grouping (see the caller)."""
    if s.startswith(("0", "+")) or _NANP_ANY_RE.fullmatch(s):
        return False
    if len(groups) >= 3:
        return True
    return len(groups) == 2 and all(3 <= len(g) <= 4 for g in groups) and not groups[0].startswith(("19", "20"))


def _clinical_number_series(main: str) -> bool:
    """True for digit groups that read as clinical values rather than a phone number.

    Rejects blood-pressure pairs (120/80 140/90), series of short values
    (112 145 130, 94-96 97-99), pairs of clock times (0800 2130), decimals
    and series holding a one-digit decimal fraction (2300 110.7), a
    four-digit value beside a three-digit one (1719/182), SSNs and IPv4
    addresses, decimals beside slashes (7.40/55/113), slashed values
    (40/1000/15, 6670/1182) and a clock time with its value (0430 150).
    Numbers starting with "+", "0" or an area code in brackets carry
    trunk or international evidence and skip the value checks.
    """
    s = main.strip()
    groups = _DIGITS_RE.findall(s)
    if _SSN_SHAPE_RE.fullmatch(s) or _IPV4_SHAPE_RE.fullmatch(s) or _DECIMAL_RE.fullmatch(s):
        return True
    if len(groups) >= 2 and all(len(g) == 4 and _clock_time(g) for g in groups):
        return True
    # a one-digit decimal fraction ("ptt 2300 110.7", "CO/CI 3.7/2.42/1081"): no numbering plan
    # splits off a single digit after a dot
    if _ONE_DIGIT_FRACTION_RE.search(s):
        return True
    # a decimal fraction beside a slash ("7.40/55/113", "5/3.27/928") or a pH before a dash ("7.22-72-90"):
    # a blood gas or cardiac output series; no numbering plan writes a decimal between groups
    if _DECIMAL_BY_SLASH_RE.search(s) or _PH_BEFORE_DASH_RE.search(s):
        return True
    # values joined by slashes ("40/1000/15" of a ventilator, "CPK 6670/1182"); a phone number may be
    # slashed in its own grouping ("201/324/1423", "030/1234567"), a case number after a year
    # ("2015/3609"), a record number after a short prefix ("24/11873")
    if "/" in s and _slashed_values(s.strip("()"), groups):
        return True
    # a clock time and the value measured at it ("@ 0430 150", "glucose @ 0600-281"): the rest is too
    # short for a subscriber number, which a trunk-led local number ("0412-0078") is not
    head = _TIME_THEN_VALUE_RE.fullmatch(s)
    if head is not None and _clock_time(head.group("t")):
        return True
    # "(" is trunk evidence only around an area code ("(410) 555-9876"), not before a range of values;
    # the North American grouping is a phone in any writing ("(201/324/1423)")
    if s.startswith(("+", "0")) or _AREA_CODE_RE.match(s) or _NANP_ANY_RE.fullmatch(s.strip("()")):
        return False
    # a four-digit value and a three-digit one ("CK 1719/182", "at 1515 373"): no phone grouping
    if len(groups) == 2 and (len(groups[0]), len(groups[1])) == (4, 3):
        return True
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
    if text[end:end + 1] == "^":
        return False  # "231 x10^9/L": a count in scientific notation, not an extension
    m = _DATE_THEN_VALUE_RE.fullmatch(span)
    if m is not None and _month_day(int(m.group("a")), int(m.group("b"))):
        return False  # "09/03 198" of a lab trend: a month/day and the value measured on it
    m = _ROUND_RANGE_RE.fullmatch(span)
    if m is not None and int(m.group("a")) < int(m.group("b")) and not int(m.group("a")) % 50 and not int(m.group("b")) % 50:
        return False  # "500-1000", "SVR 900-1100": a rising range of round amounts, no number to call
    if _followed_by(text, end, _CLOCK_SUFFIX_RE) and _clock_times(span):
        return False  # "DTV 930-1130PM": a span of clock times ("0171 1234567 am Abend" stays a number)
    return not _followed_by(text, end, _UNIT_AHEAD_RE)


_CLOCK_SUFFIX_RE = re.compile(r"\s?(?i:[ap]\.?m\.?)(?![^\W\d_])")
#: a three-digit amount to a four-digit one ("500-1000", "900-1300"), the shape of a local number "555-1234"
_ROUND_RANGE_RE = re.compile(r"(?P<a>[1-9]\d{2})\s?-\s?(?P<b>[1-9]\d{3})")
#: a month/day and one short number after it ("09/03 198", "9/6 112"), as lab trends list values
_DATE_THEN_VALUE_RE = re.compile(r"(?P<a>\d{1,2})/(?P<b>\d{1,2})[ \t]+\d{1,4}(?:[ \t]?x\d{1,2})?")


def _month_day(a: int, b: int) -> bool:
    return (1 <= a <= 12 and 1 <= b <= 31) or (1 <= a <= 31 and 1 <= b <= 12)


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
            num = m.group("num").strip("()")
            # "pH 7.35" is a lab value, "pg 12" a page; "PG 33445" a pager
            need = 5 if m.group("kw").lower() in ("ph", "pg") else 3
            if m.group("kw").lower() == "pg" and _preceded_by(text, m.start(), _DIGIT_BEFORE_RE, 4):
                continue  # "B12 350 pg 1245": picograms after their number
            if _digit_count(num) < need or _SHORT_DECIMAL_RE.fullmatch(num) or _DECIMAL_RANGE_RE.fullmatch(num):
                continue  # "pH 7.44-7.46": a range of lab values
            out.append(PatternMatch(m.start("num"), m.end("num"), "PHONE", "phone_keyword"))
        for rx in _PHONE_EXT_RES:
            for m in rx.finditer(text):
                if _followed_by(text, m.end(), _UNIT_AHEAD_RE) or _preceded_by(text, m.start(), _DIGIT_BEFORE_RE, 4):
                    continue  # "x 100 mg", "2 x 500"
                out.append(PatternMatch(m.start("num"), m.end("num"), "PHONE", "phone_keyword"))
