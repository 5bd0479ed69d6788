"""Date surrogates: shift a date by a secret per-case offset, keeping its exact format.

Why shift instead of replace: pharmacovigilance reviewers need intervals
(time to onset, duration of therapy, dechallenge) far more than absolute
dates. Moving every date of a case by the same secret number of days hides
the real dates while every interval stays exact, and rendering the shifted
date in the original shape ("12-JAN-2014" stays "DD-MON-YYYY", "Jan 2014"
stays a month) keeps the narrative readable and keeps its granularity: a
month-only date must not gain a made-up day.

Why the text is parsed by hand: ``dateutil.parser.parse`` returns only a
``datetime``. It forgets how the date was written (separators, zero padding,
month-name spelling, ordinal suffix, which parts were present) and silently
fills the missing parts from today ("Jan 2014" becomes 2014-01-<today>,
"8/14" gets the current year), so the result can neither be re-rendered in
the original format nor kept at its original granularity. Here the text is
split into tokens with one precompiled regex, the date-bearing tokens
(numbers, month names, 'yy years) are matched against a small set of shapes
("NMN" for 12-JAN-2014, "MNN" for Jan 12, 2014, ...), and the result keeps a
*template*: the original text with each date part replaced by a slot that
remembers its style. Rendering fills the slots from the shifted date and
copies everything else (separators, words, a time of day) verbatim.
Calendar facts (month lengths, leap years, weekdays, the shift itself) come
from ``datetime``/``calendar``; English month and weekday names come from
``dateutil``'s parser tables, which, unlike ``calendar.month_name``, do not
depend on the process locale (a Spark worker may run under any locale).

Missing parts are filled only to do the arithmetic, never rendered: a missing
day is the 15th and a missing month is July 2 (the midpoints, so the shifted
period is the one the offset moves the middle of the original period into),
and a missing year is the document's reference year, else the leap year 2000
so that "2/29" still shifts.

Styles kept per part: case and length of month and weekday names ("JAN",
"January", "Sept."), ordinal suffixes (recomputed, case kept: "21ST"), two-
or four-digit years, and zero padding. A day or month is padded when it was
written with a leading zero, when another part of the same date was ("01/12"
shows its writer pads the "12"), or when the shape is one whose writers
always pad (hyphenated year-first ISO dates, DD-MON-YY(YY)) and no one-digit
part says otherwise; otherwise it gets as many digits as it needs. A weekday
next to a full date is recomputed from the shifted date; next to a partial
date, or alone, it is moved by the offset modulo 7.

Day/month order of ambiguous numeric dates ("03/04/2014") is the caller's
``order``, typically chosen per document by :func:`document_order` from the
document's unambiguous dates; a date that validates only one way ("25/04/2014")
is read that way whatever the order.

Failure is always ``None`` (the caller writes ``[DATE]``): nothing here raises
on odd input and nothing is logged, because the input text is PHI.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

from dateutil.parser import parserinfo

__all__ = [
    "DateOrder",
    "ParsedDate",
    "document_order",
    "order_evidence",
    "parse_date",
    "reference_year_of",
    "shift_date_text",
]

DateOrder = Literal["MDY", "DMY"]
_Field = Literal["year", "month", "day", "weekday"]

#: Entities longer than this are not a single date; refusing them early also
#: bounds the work done on pathological input.
_MAX_TEXT_LEN = 100
#: A year standing alone must look like a year of a case narrative ...
_LONE_YEAR_MIN, _LONE_YEAR_MAX = 1900, 2100
#: ... while one inside a full date may be a birth date of an old patient.
_YEAR_MIN, _YEAR_MAX = 1800, 2199
#: The fill-in year when neither the text nor the document gives one: a leap
#: year, so that "2/29" is valid and shifts.
_DEFAULT_YEAR = 2000
_MID_MONTH_DAY = 15
_MID_YEAR = (7, 2)

# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------


def _name_table(groups: Iterable[Sequence[str]], extra: dict[str, int]) -> dict[str, int]:
    """Lower-cased spelling -> index, from dateutil's English tables plus extras."""
    table = {name.lower(): i for i, names in enumerate(groups) for name in names}
    table.update(extra)
    return table


_MONTH_INDEX = _name_table(parserinfo.MONTHS, {})  # 0 = January
# dateutil knows "Tue"/"Thu" but narratives also write the longer forms.
_WEEKDAY_INDEX = _name_table(parserinfo.WEEKDAYS, {"tues": 1, "weds": 2, "thur": 3, "thurs": 3})  # 0 = Monday
_MONTH_FULL = tuple(names[-1] for names in parserinfo.MONTHS)
_WEEKDAY_FULL = tuple(names[-1] for names in parserinfo.WEEKDAYS)
#: Abbreviations longer than three letters that a "Sept"/"Tues" writer uses.
_MONTH_LONG_ABBR = {8: "Sept"}
_WEEKDAY_LONG_ABBR = {1: "Tues", 3: "Thurs"}

# --------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------

# One scanner over the whole entity. A time of day is matched first so that
# its digits are not read as date parts (it is copied verbatim); an ordinal
# suffix stays with its number; 'yy is a year; words are classified later;
# runs of punctuation and spaces are copied. Digits are ASCII only: int()
# would accept other scripts' digits but they could not be written back alike.
_TOKEN_RE = re.compile(
    r"(?P<time>T?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:\s?[AaPp]\.?[Mm]\b\.?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?)"
    r"|(?P<num>[0-9]+)(?:(?P<ord>[sS][tT]|[nN][dD]|[rR][dD]|[tT][hH])(?![^\W\d_]))?"
    r"|['’](?P<apos>[0-9]{2})(?![0-9])"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<other>[^\w'’]+|.)",
    re.DOTALL,
)
#: What may stand between the parts of a date written with a month name:
#: "12-JAN-2014", "Jan 12, 2014", "12th of January", "Sept. 3rd".
_NAME_GAP_RE = re.compile(r"(?:[\s,./-]+|of\b|the\b)*", re.IGNORECASE)
_MAX_NAME_GAP = 10
_NUMERIC_SEPARATORS = frozenset("/-.")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: Literal["num", "apos", "month", "weekday", "word"]
    start: int
    end: int
    digits: str = ""  # num/apos: the digits; month/weekday: the name as written
    ordinal: str | None = None  # num: the suffix as written ("th", "RD")
    value: int = 0  # num/apos: the number; month: 1-12; weekday: 0-6
    fixed: bool = False  # num: always written with exactly its digits (20140112)


def _classify_word(match: re.Match[str]) -> _Token:
    """A word is a month, a weekday or just a word (kept verbatim)."""
    word = match.group()
    lower = word.lower()
    if lower in _MONTH_INDEX:
        return _Token("month", match.start(), match.end(), word, value=_MONTH_INDEX[lower] + 1)
    if lower in _WEEKDAY_INDEX:
        return _Token("weekday", match.start(), match.end(), word, value=_WEEKDAY_INDEX[lower])
    return _Token("word", match.start(), match.end(), word)


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "ord":  # the suffix group closes last; the token is its number
            kind = "num"
        if kind == "num":
            digits = m.group("num")
            tokens.append(_Token("num", m.start(), m.end(), digits, m.group("ord"), int(digits)))
        elif kind == "apos":
            digits = m.group("apos")
            tokens.append(_Token("apos", m.start(), m.end(), digits, value=int(digits)))
        elif kind == "word":
            tokens.append(_classify_word(m))
        # times and punctuation are only ever copied, so they need no token
    return tokens


def _glued_to_word(tokens: list[_Token]) -> bool:
    """True when a number touches a non-month word ("1990s", "Q3", "5mg").

    Such a number is a decade, a quarter or a quantity, not a date part; a
    month name may touch a number ("12JAN2014", "jan2014").
    """
    for left, right in zip(tokens, tokens[1:]):
        if left.end != right.start:
            continue
        kinds = {left.kind, right.kind}
        if kinds & {"num", "apos"} and kinds & {"word", "weekday"}:
            return True
    return False


# --------------------------------------------------------------------------
# Readings: which token is the year, the month, the day
# --------------------------------------------------------------------------

# A reading assigns a field to each date-bearing token. Several readings are
# possible for numeric day/month dates; they are tried in the order's
# preference and the first that validates wins.
_Reading = tuple[tuple[_Field, _Token], ...]


def _pivot_two_digit_year(yy: int) -> int:
    """The century of a 'yy year: the 2000s unless that is beyond next year."""
    return 2000 + yy if 2000 + yy <= date.today().year + 1 else 1900 + yy


def _day_month_readings(first: _Token, second: _Token, order: DateOrder) -> list[_Reading]:
    month_first: _Reading = (("month", first), ("day", second))
    day_first: _Reading = (("day", first), ("month", second))
    return [day_first, month_first] if order == "DMY" else [month_first, day_first]


def _numeric_gaps_ok(text: str, parts: list[_Token], *, allow_space: bool) -> bool:
    """All-numeric dates need one and the same separator: "1/12/2014", not "1/12-2014"."""
    gaps = {text[a.end : b.start] for a, b in zip(parts, parts[1:])}
    if len(gaps) != 1:
        return False
    gap = gaps.pop()
    return gap in _NUMERIC_SEPARATORS or (allow_space and gap == " ")


def _numeric_readings(text: str, parts: list[_Token], order: DateOrder) -> list[_Reading]:
    """Readings of dates written only with numbers (no month name)."""
    widths = [len(p.digits) for p in parts]
    if not 1 <= len(parts) <= 3:
        return []
    if len(parts) == 1:
        return _single_number_readings(parts[0])
    if len(parts) == 2:
        return _two_number_readings(text, parts, widths, order)
    a, b, c = parts
    if widths[0] == 4 and widths[1] <= 2 and widths[2] <= 2 and _numeric_gaps_ok(text, parts, allow_space=False):
        return [(("year", a), ("month", b), ("day", c))]  # ISO order whatever the document order
    if widths[0] <= 2 and widths[1] <= 2 and widths[2] in (2, 4):
        if not _numeric_gaps_ok(text, parts, allow_space=widths[2] == 4):
            return []
        return [(*r, ("year", c)) for r in _day_month_readings(a, b, order)]
    return []


def _single_number_readings(token: _Token) -> list[_Reading]:
    if token.kind == "apos":
        return [(("year", token),)]
    if len(token.digits) == 4 and _LONE_YEAR_MIN <= token.value <= _LONE_YEAR_MAX:
        return [(("year", token),)]
    if len(token.digits) == 8 and token.digits[:2] in ("19", "20"):
        return [_split_compact(token)]
    return []


def _split_compact(token: _Token) -> _Reading:
    """20140112 -> three fixed-width parts, so each renders in its own slot."""
    s, d = token.start, token.digits
    return (
        ("year", _Token("num", s, s + 4, d[:4], value=int(d[:4]), fixed=True)),
        ("month", _Token("num", s + 4, s + 6, d[4:6], value=int(d[4:6]), fixed=True)),
        ("day", _Token("num", s + 6, s + 8, d[6:], value=int(d[6:]), fixed=True)),
    )


def _two_number_readings(text: str, parts: list[_Token], widths: list[int], order: DateOrder) -> list[_Reading]:
    a, b = parts
    gap = text[a.end : b.start]
    if b.kind == "apos" or gap not in _NUMERIC_SEPARATORS:
        return []
    if widths == [4, 1] or widths == [4, 2]:
        return [(("year", a), ("month", b))] if gap in "/-" else []  # 2014-01
    if widths[0] <= 2 and widths[1] == 4:
        return [(("month", a), ("year", b))]  # 01/2014
    if widths[0] <= 2 and widths[1] <= 2:
        # Month/day without a year is written with "/" ("8/14"), or with dots
        # only when a closing dot shows it is not a decimal ("25.08.").
        if gap == "/" or text[b.end : b.end + 1] == ".":
            return _day_month_readings(a, b, order)
    return []


def _named_readings(parts: list[_Token]) -> list[_Reading]:
    """Readings of dates with a month name, by the shape of their parts."""
    shape = "".join("M" if p.kind == "month" else "A" if p.kind == "apos" else "N" for p in parts)
    width = [len(p.digits) if p.kind == "num" else 0 for p in parts]
    if shape == "M":
        return [(("month", parts[0]),)]
    if shape in ("MA", "MN"):
        month, other = parts
        if shape == "MA" or width[1] == 4:
            return [(("month", month), ("year", other))]  # Jan 2014, Jan '14
        # two digits after a month are a day ("Aug 14"); "Dec 99" is too unsure to be a year
        return [(("month", month), ("day", other))]  # January 24
    if shape == "NM":
        if width[0] == 4:
            return [(("year", parts[0]), ("month", parts[1]))]  # 2014 oct
        return [(("day", parts[0]), ("month", parts[1]))]  # 24th January
    if shape in ("NMN", "NMA"):
        if width[0] == 4 and shape == "NMN":
            return [(("year", parts[0]), ("month", parts[1]), ("day", parts[2]))]  # 2014-Jan-12
        return [(("day", parts[0]), ("month", parts[1]), ("year", parts[2]))]  # 12-JAN-2014
    if shape in ("MNN", "MNA"):
        return [(("month", parts[0]), ("day", parts[1]), ("year", parts[2]))]  # Jan 12, 2014
    return []


def _name_gaps_ok(text: str, parts: list[_Token]) -> bool:
    for a, b in zip(parts, parts[1:]):
        gap = text[a.end : b.start]
        if len(gap) > _MAX_NAME_GAP or not _NAME_GAP_RE.fullmatch(gap):
            return False
    return True


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------


def _year_value(token: _Token, *, alone: bool) -> int | None:
    if token.kind == "apos" or (token.kind == "num" and len(token.digits) == 2 and not token.ordinal):
        return _pivot_two_digit_year(token.value)
    if token.kind != "num" or len(token.digits) != 4 or token.ordinal:
        return None
    low, high = (_LONE_YEAR_MIN, _LONE_YEAR_MAX) if alone else (_YEAR_MIN, _YEAR_MAX)
    return token.value if low <= token.value <= high else None


def _month_value(token: _Token) -> int | None:
    if token.kind == "month":
        return token.value
    if token.kind == "num" and len(token.digits) <= 2 and not token.ordinal and 1 <= token.value <= 12:
        return token.value
    return None


def _day_value(token: _Token) -> int | None:
    if token.kind == "num" and len(token.digits) <= 2 and 1 <= token.value <= 31:
        return token.value
    return None


def _days_in_month(year: int, month: int) -> int | None:
    if not 1 <= year <= 9999:
        return None
    return calendar.monthrange(year, month)[1]


def _validate(reading: _Reading, reference_year: int | None) -> tuple[int | None, int | None, int | None] | None:
    """(year, month, day) of a reading, or None when it is not a real date."""
    values: dict[str, int | None] = {}
    alone = len(reading) == 1
    for name, token in reading:
        if name == "year":
            values[name] = _year_value(token, alone=alone)
        elif name == "month":
            values[name] = _month_value(token)
        else:
            values[name] = _day_value(token)
        if values[name] is None:
            return None
    year, month, day = values.get("year"), values.get("month"), values.get("day")
    if month is not None and day is not None:
        filler = year if year is not None else reference_year if reference_year is not None else _DEFAULT_YEAR
        last = _days_in_month(filler, month)
        if last is None or day > last:
            return None
    return year, month, day


# --------------------------------------------------------------------------
# Template slots: how each part was written
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Slot:
    """One date part of the original text and the style to render it in."""

    field: _Field
    width: int = 1  # numbers: minimum digits (2 keeps "01"); years: 2 or 4
    ordinal_upper: bool | None = None  # None: no ordinal suffix
    named: Literal["full", "abbr", "long_abbr"] | None = None  # None: a number
    case: Literal["upper", "lower", "title"] = "title"


def _case_of(word: str) -> Literal["upper", "lower", "title"]:
    if word.isupper() and len(word) > 1:
        return "upper"
    return "lower" if word.islower() else "title"


def _apply_case(word: str, case: str) -> str:
    return word.upper() if case == "upper" else word.lower() if case == "lower" else word.capitalize()


def _month_name_length(token: _Token, text: str) -> Literal["full", "abbr", "long_abbr"]:
    """Full name or abbreviation, as written; "May" needs its surroundings.

    "May" is both; it counts as an abbreviation in upper case or when glued
    to a number or hyphen ("12-MAY-2014", "12-May-2014"), where other months
    would be abbreviated too, and as a full name in prose ("May 12, 2014").
    """
    name = token.digits.lower()
    if name == "may":
        around = text[token.start - 1 : token.start] + text[token.end : token.end + 1]
        glued = any(ch.isdigit() or ch == "-" for ch in around)
        return "abbr" if token.digits.isupper() or glued else "full"
    if name == _MONTH_FULL[token.value - 1].lower():
        return "full"
    return "abbr" if len(name) <= 3 else "long_abbr"


def _weekday_name_length(token: _Token) -> Literal["full", "abbr", "long_abbr"]:
    name = token.digits.lower()
    if name == _WEEKDAY_FULL[token.value].lower():
        return "full"
    return "abbr" if len(name) <= 3 else "long_abbr"


def _zero_padded(token: _Token) -> bool:
    return token.kind == "num" and len(token.digits) == 2 and token.digits.startswith("0")


def _slot_for(name: _Field, token: _Token, text: str, *, pads: bool) -> _Slot:
    """The style of one part; ``pads``: another part of this date shows zero padding."""
    if token.kind == "month":
        return _Slot(name, named=_month_name_length(token, text), case=_case_of(token.digits))
    if token.kind == "weekday":
        return _Slot(name, named=_weekday_name_length(token), case=_case_of(token.digits))
    if name == "year" or token.fixed:
        return _Slot(name, width=len(token.digits))
    # "12" alone does not say whether its writer pads; "12/01/2014" does.
    padded = _zero_padded(token) or (pads and len(token.digits) == 2)
    ordinal = None if token.ordinal is None else token.ordinal.isupper()
    return _Slot(name, width=2 if padded else 1, ordinal_upper=ordinal)


def _fixed_width_convention(text: str, parts: Sequence[tuple[_Field, _Token]]) -> bool:
    """True for shapes whose writers always pad: ISO-like 2014-10-12 and DD-MON-YY(YY).

    There a day or month written "12" does not show its padding, but "2014-11-3"
    or "3-NOV-2014" would no longer be the original format. ("2014/1/12" is a
    year-first shape that is often unpadded, so only hyphens count.)
    """
    fields = [name for name, _ in parts]
    hyphenated = all(text[a.end : b.start] in ("", "-") for (_, a), (_, b) in zip(parts, parts[1:]))
    if len(parts) >= 2 and fields[0] == "year":
        return hyphenated
    named_day_first = fields == ["day", "month", "year"] and parts[1][1].kind == "month"
    return hyphenated and named_day_first


def _build_template(text: str, parts: Sequence[tuple[_Field, _Token]]) -> tuple[str | _Slot, ...]:
    pieces: list[str | _Slot] = []
    pos = 0
    parts = sorted(parts, key=lambda p: p[1].start)
    dated = [p for p in parts if p[0] != "weekday"]
    numbers = [token for name, token in dated if name in ("month", "day") and token.kind == "num"]
    # a one-digit "1" shows its writer does not pad, whatever the shape
    unpadded = any(len(token.digits) == 1 for token in numbers)
    pads = any(map(_zero_padded, numbers)) or (_fixed_width_convention(text, dated) and not unpadded)
    for name, token in parts:
        start = token.start + 1 if token.kind == "apos" else token.start  # the apostrophe stays literal
        pieces.append(text[pos:start])
        pieces.append(_slot_for(name, token, text, pads=pads))
        pos = token.end
    pieces.append(text[pos:])
    return tuple(p for p in pieces if p != "")


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParsedDate:
    """What one date entity says; ``None`` marks a part the text does not give.

    ``year`` is the full year even when written with two digits. ``weekday``
    (0 = Monday) is the weekday named in the text, if any. The private
    template remembers how the text was written so that a shifted date can be
    rendered in the same format.
    """

    year: int | None
    month: int | None
    day: int | None
    weekday: int | None
    _template: tuple[str | _Slot, ...] = field(default=(), repr=False, compare=False)

    @property
    def _year_width(self) -> int:
        """2 or 4 for a written year, 0 without one (reference-year votes prefer 4)."""
        for piece in self._template:
            if isinstance(piece, _Slot) and piece.field == "year":
                return piece.width
        return 0


def _usable_text(text: object) -> bool:
    return isinstance(text, str) and 0 < len(text) <= _MAX_TEXT_LEN


def _parse(text: str, order: DateOrder, reference_year: int | None) -> ParsedDate | None:
    tokens = _tokenize(text)
    if _glued_to_word(tokens):
        return None
    weekdays = [t for t in tokens if t.kind == "weekday"]
    parts = [t for t in tokens if t.kind in ("num", "apos", "month")]
    if len(weekdays) > 1:
        return None
    if not parts:
        if not weekdays:
            return None
        return ParsedDate(None, None, None, weekdays[0].value, _build_template(text, [("weekday", weekdays[0])]))
    chosen = _choose_reading(text, parts, order, reference_year)
    if chosen is None:
        return None
    reading, (year, month, day) = chosen
    slots: list[tuple[_Field, _Token]] = list(reading)
    weekday = None
    if weekdays:
        weekday = weekdays[0].value
        slots.append(("weekday", weekdays[0]))
    return ParsedDate(year, month, day, weekday, _build_template(text, slots))


def _candidate_readings(text: str, parts: list[_Token], order: DateOrder) -> list[_Reading]:
    if any(p.kind == "month" for p in parts):
        return _named_readings(parts) if _name_gaps_ok(text, parts) else []
    return _numeric_readings(text, parts, order)


def _choose_reading(
    text: str, parts: list[_Token], order: DateOrder, reference_year: int | None
) -> tuple[_Reading, tuple[int | None, int | None, int | None]] | None:
    for reading in _candidate_readings(text, parts, order):
        values = _validate(reading, reference_year)
        if values is not None:
            return reading, values
    return None


def parse_date(text: str, order: DateOrder, *, reference_year: int | None = None) -> ParsedDate | None:
    """Read one date entity, or ``None`` when it is not confidently a date.

    ``reference_year`` only matters for a date without a year: its day must
    exist in that year ("2/29" needs a leap year), as it will be shifted there.
    """
    if not _usable_text(text):
        return None
    if reference_year is not None and not isinstance(reference_year, int):
        return None
    return _parse(text, order, reference_year)


# --------------------------------------------------------------------------
# Shifting and rendering
# --------------------------------------------------------------------------


def _anchor(parsed: ParsedDate, reference_year: int | None) -> date | None:
    """The concrete day the shift starts from: missing parts at their midpoints."""
    year = parsed.year
    if year is None:
        year = reference_year if reference_year is not None else _DEFAULT_YEAR
    if parsed.month is None:
        month, day = _MID_YEAR
    else:
        month, day = parsed.month, parsed.day if parsed.day is not None else _MID_MONTH_DAY
    try:
        return date(year, month, day)
    except (ValueError, OverflowError):
        return None


def _ordinal_suffix(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _render_name(index: int, full: tuple[str, ...], long_abbr: dict[int, str], slot: _Slot) -> str:
    if slot.named == "full":
        word = full[index]
    elif slot.named == "long_abbr" and index in long_abbr:
        word = long_abbr[index]
    else:
        word = full[index][:3]
    return _apply_case(word, slot.case)


def _render_slot(slot: _Slot, shifted: date, weekday: int) -> str | None:
    if slot.field == "year":
        if slot.width == 2:
            return f"{shifted.year % 100:02d}"
        return str(shifted.year) if shifted.year >= 1000 else None
    if slot.field == "weekday":
        return _render_name(weekday, _WEEKDAY_FULL, _WEEKDAY_LONG_ABBR, slot)
    if slot.field == "month" and slot.named is not None:
        return _render_name(shifted.month - 1, _MONTH_FULL, _MONTH_LONG_ABBR, slot)
    value = shifted.month if slot.field == "month" else shifted.day
    rendered = f"{value:0{slot.width}d}"
    if slot.ordinal_upper is not None:
        suffix = _ordinal_suffix(value)
        rendered += suffix.upper() if slot.ordinal_upper else suffix
    return rendered


def _shifted_weekday(parsed: ParsedDate, shifted: date, offset_days: int) -> int:
    """The weekday to write next to the shifted date.

    With a full written date the weekday is recomputed from the shifted date
    (so it is right even if the original was a typo). Without a written year
    or day the anchor is a guess, so the named weekday is moved by the offset
    instead, which keeps it consistent with the case's other dates.
    """
    if parsed.weekday is None:
        return shifted.weekday()
    full = parsed.year is not None and parsed.month is not None and parsed.day is not None
    return shifted.weekday() if full else (parsed.weekday + offset_days) % 7


def _render(parsed: ParsedDate, shifted: date, weekday: int) -> str | None:
    out: list[str] = []
    for piece in parsed._template:
        if isinstance(piece, str):
            out.append(piece)
            continue
        rendered = _render_slot(piece, shifted, weekday)
        if rendered is None:
            return None
        out.append(rendered)
    return "".join(out)


def _shift_weekday_only(parsed: ParsedDate, offset_days: int) -> str | None:
    weekday = (parsed.weekday or 0) + offset_days
    # any date works as a carrier: only the weekday slot is rendered
    return _render(parsed, date(_DEFAULT_YEAR, 1, 1), weekday % 7)


def shift_date_text(
    text: str, offset_days: int, order: DateOrder, *, reference_year: int | None = None
) -> str | None:
    """The date moved by ``offset_days``, written like the original; ``None`` if unparsable.

    Only the parts the original had are written, so "Jan 2014" stays a month
    and "2014" a year; ``reference_year`` stands in for a missing year.
    """
    if isinstance(offset_days, bool) or not isinstance(offset_days, int):
        return None
    parsed = parse_date(text, order, reference_year=reference_year)
    if parsed is None:
        return None
    if parsed.year is None and parsed.month is None:
        return _shift_weekday_only(parsed, offset_days)
    start = _anchor(parsed, reference_year)
    if start is None:
        return None
    try:
        shifted = start + timedelta(days=offset_days)
    except OverflowError:
        return None
    return _render(parsed, shifted, _shifted_weekday(parsed, shifted, offset_days))


# --------------------------------------------------------------------------
# Document-level decisions
# --------------------------------------------------------------------------


def order_evidence(text: str) -> DateOrder | None:
    """The order this date alone proves: one of day/month exceeds 12 ("8/25", "25.08.2014").

    Dates with a month name or in ISO order say nothing about how the
    document writes numeric dates, so they give ``None``.
    """
    if not _usable_text(text):
        return None
    tokens = _tokenize(text)
    parts = [t for t in tokens if t.kind in ("num", "apos", "month")]
    if _glued_to_word(tokens) or any(p.kind == "month" for p in parts):
        return None
    readings = _numeric_readings(text, parts, "MDY")
    if len(readings) != 2:  # only day/month dates come with two readings, month first then day first
        return None
    month_first, day_first = (_validate(r, None) is not None for r in readings)
    if month_first != day_first:
        return "MDY" if month_first else "DMY"
    return None


def document_order(date_texts: Sequence[str], default: DateOrder) -> DateOrder:
    """The document's own day/month order: its unambiguous numeric dates vote.

    One document is written by one hand in one convention, so "25/08/2014"
    elsewhere in the text settles how "03/04/2014" is read. A tie or no
    evidence leaves the site's ``default``.
    """
    votes = Counter(order for text in date_texts if (order := order_evidence(text)) is not None)
    if votes["MDY"] > votes["DMY"]:
        return "MDY"
    if votes["DMY"] > votes["MDY"]:
        return "DMY"
    return default


def reference_year_of(date_texts: Sequence[str], order: DateOrder) -> int | None:
    """The year a document's year-less dates most likely belong to.

    The most frequent written year wins; four-digit years are preferred over
    two-digit ones (whose century is a guess). Ties go to the year seen first.
    """
    four: Counter[int] = Counter()
    other: Counter[int] = Counter()
    for text in date_texts:
        parsed = parse_date(text, order)
        if parsed is None or parsed.year is None:
            continue
        (four if parsed._year_width == 4 else other)[parsed.year] += 1
    for votes in (four, other):
        if votes:
            return votes.most_common(1)[0][0]
    return None
