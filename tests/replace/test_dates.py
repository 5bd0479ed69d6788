"""Date shifting: every supported format round-trips in its own shape, intervals stay exact.

All dates are synthetic. Expected values are written out by hand (base date
2014-01-12, a Sunday; +30 days is 2014-02-11, a Tuesday) so that the tests
do not reuse the module's own name tables or arithmetic.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from datetime import date, timedelta

import pytest

from deid_core.replace.dates import (
    DateOrder,
    ParsedDate,
    document_order,
    order_evidence,
    parse_date,
    reference_year_of,
    shift_date_text,
)

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def suffix(n: int) -> str:
    if 11 <= n <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


# --------------------------------------------------------------------------
# Formats: (input, order, offset, expected output)
# --------------------------------------------------------------------------

FORMATS: list[tuple[str, DateOrder, int, str]] = [
    # numeric
    ("1/12/2014", "MDY", 30, "2/11/2014"),
    ("01/12/2014", "MDY", 30, "02/11/2014"),
    ("12/01/2014", "DMY", 30, "11/02/2014"),
    ("1-12-14", "MDY", 30, "2-11-14"),
    ("12.01.2014", "DMY", 30, "11.02.2014"),
    ("2014-01-12", "DMY", 30, "2014-02-11"),
    ("2014-01-12", "MDY", 30, "2014-02-11"),
    ("2014/1/12", "MDY", 30, "2014/2/11"),
    ("2014/1/12", "DMY", 30, "2014/2/11"),
    ("20140112", "MDY", 30, "20140211"),
    ("20141112", "DMY", 30, "20141212"),
    ("12 1 2014", "DMY", 30, "11 2 2014"),
    ("2014-01-12T08:30", "DMY", 30, "2014-02-11T08:30"),
    ("1/12/2014 10:30", "MDY", 30, "2/11/2014 10:30"),
    # month names
    ("12-JAN-2014", "MDY", 30, "11-FEB-2014"),
    ("12JAN2014", "DMY", 30, "11FEB2014"),
    ("12 Jan 14", "DMY", 30, "11 Feb 14"),
    ("12 jan 2014", "DMY", 30, "11 feb 2014"),
    ("Jan 12, 2014", "MDY", 30, "Feb 11, 2014"),
    ("Jan. 12, 2014", "MDY", 30, "Feb. 11, 2014"),
    ("January 12th, 2014", "MDY", 30, "February 11th, 2014"),
    ("JANUARY 12, 2014", "MDY", 30, "FEBRUARY 11, 2014"),
    ("january 12 2014", "MDY", 30, "february 11 2014"),
    ("12th of January 2014", "DMY", 30, "11th of February 2014"),
    ("the 12th of January, 2014", "DMY", 30, "the 11th of February, 2014"),
    ("24th January", "DMY", 30, "23rd February"),  # no year: 2000-01-24 + 30
    ("January 24", "MDY", 30, "February 23"),
    ("Sept. 3rd, 2019", "MDY", 30, "Oct. 3rd, 2019"),
    ("Aug 20, 2019", "MDY", 14, "Sep 3, 2019"),
    ("Sept 3, 2019", "MDY", -3, "Aug 31, 2019"),
    ("August 20, 2019", "MDY", 14, "September 3, 2019"),
    ("2014-Jan-12", "MDY", 30, "2014-Feb-11"),
    ("2014 oct", "MDY", 30, "2014 nov"),  # Oct 15 + 30 = Nov 14
    ("May 12, 2014", "MDY", 30, "June 11, 2014"),
    ("12-May-2014", "DMY", 30, "11-Jun-2014"),
    ("12-MAY-2014", "DMY", 30, "11-JUN-2014"),
    ("12 Jan '14", "DMY", 30, "11 Feb '14"),
    # partial: month + year (missing day -> 15th)
    ("Jan 2014", "MDY", 10, "Jan 2014"),
    ("Jan 2014", "MDY", 20, "Feb 2014"),
    ("Jan 2014", "MDY", -15, "Dec 2013"),
    ("January of 2014", "MDY", 20, "February of 2014"),
    ("01/2014", "MDY", 20, "02/2014"),
    ("1/2014", "DMY", 20, "2/2014"),
    ("12/2014", "MDY", 20, "1/2015"),
    ("Jan '14", "MDY", 20, "Feb '14"),
    ("Dec ’14", "MDY", 20, "Jan ’15"),
    ("jan2014", "MDY", 20, "feb2014"),
    ("Jan-2014", "MDY", 20, "Feb-2014"),
    ("2014-01", "MDY", 20, "2014-02"),
    # partial: month + day without a year (2000 unless a reference year)
    ("8/14", "MDY", 30, "9/13"),
    ("14/8", "DMY", 30, "13/9"),
    ("25.08.", "DMY", 10, "04.09."),
    ("Aug 14", "MDY", 30, "Sep 13"),
    # partial: year alone (missing month -> July 2), month alone (-> the 15th)
    ("2014", "MDY", 100, "2014"),
    ("2014", "MDY", 200, "2015"),
    ("2014", "MDY", -184, "2013"),
    ("mid-2014", "MDY", 200, "mid-2015"),
    ("'14", "MDY", 200, "'15"),
    ("January", "MDY", 30, "February"),
    ("Jan", "MDY", 30, "Feb"),
    ("JAN", "MDY", -30, "DEC"),
    # weekday with a date: recomputed from the shifted date
    ("Monday, 12 January 2014", "DMY", 30, "Tuesday, 11 February 2014"),
    ("Mon 1/12/2014", "MDY", 30, "Tue 2/11/2014"),
    ("12/01/2014 (Tue)", "DMY", 31, "12/02/2014 (Wed)"),
    ("SUNDAY 12-JAN-2014", "DMY", 2, "TUESDAY 14-JAN-2014"),
    ("Thurs., Jan 16, 2014", "MDY", -2, "Tues., Jan 14, 2014"),
    # weekday alone: moved by offset mod 7
    ("Monday", "MDY", 30, "Wednesday"),
    ("MON", "MDY", 1, "TUE"),
    ("Tues.", "MDY", 1, "Wed."),
    ("sunday", "MDY", -1, "saturday"),
    ("Fri", "DMY", 7 * 1000 + 3, "Mon"),
    ("on Wednesday", "MDY", -14, "on Wednesday"),
    # two-digit years, century roll-over
    ("12/31/99", "MDY", 1, "1/1/00"),
    ("31.12.99", "DMY", 1, "1.1.00"),  # nothing shows zero padding
    ("31.12.09", "DMY", 1, "1.1.10"),
]


@pytest.mark.parametrize(("text", "order", "offset", "expected"), FORMATS)
def test_shift_keeps_the_format(text: str, order: DateOrder, offset: int, expected: str) -> None:
    assert shift_date_text(text, offset, order) == expected


def test_at_least_25_distinct_formats_are_covered() -> None:
    assert len({text for text, *_ in FORMATS}) >= 25


# --------------------------------------------------------------------------
# parse_date
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "order", "fields"),
    [
        ("1/12/2014", "MDY", (2014, 1, 12, None)),
        ("1/12/2014", "DMY", (2014, 12, 1, None)),
        ("03/04/2014", "MDY", (2014, 3, 4, None)),
        ("03/04/2014", "DMY", (2014, 4, 3, None)),
        ("25/04/2014", "MDY", (2014, 4, 25, None)),  # only one valid reading
        ("04/25/2014", "DMY", (2014, 4, 25, None)),
        ("2014-03-04", "DMY", (2014, 3, 4, None)),  # ISO whatever the order
        ("20140304", "DMY", (2014, 3, 4, None)),
        ("1-12-14", "MDY", (2014, 1, 12, None)),
        ("1/12/99", "MDY", (1999, 1, 12, None)),
        ("Jan 12, 2014", "DMY", (2014, 1, 12, None)),
        ("Monday, 12 January 2014", "DMY", (2014, 1, 12, 0)),
        ("Jan 2014", "MDY", (2014, 1, None, None)),
        ("8/14", "MDY", (None, 8, 14, None)),
        ("8/14", "DMY", (None, 8, 14, None)),
        ("2014", "MDY", (2014, None, None, None)),
        ("January", "MDY", (None, 1, None, None)),
        ("Tues.", "MDY", (None, None, None, 1)),
        ("SAT", "MDY", (None, None, None, 5)),
    ],
)
def test_parse_date_fields(text: str, order: DateOrder, fields: tuple[int | None, ...]) -> None:
    parsed = parse_date(text, order)
    assert isinstance(parsed, ParsedDate)
    assert (parsed.year, parsed.month, parsed.day, parsed.weekday) == fields


def test_parsed_dates_compare_by_value_only() -> None:
    assert parse_date("12 Jan 2014", "DMY") == parse_date("1/12/2014", "MDY") == ParsedDate(2014, 1, 12, None)


def test_two_digit_year_pivot_follows_the_current_year() -> None:
    this_year = date.today().year
    near = (this_year + 1) % 100
    beyond = (this_year + 2) % 100
    assert parse_date(f"Jan '{near:02d}", "MDY").year == this_year + 1  # type: ignore[union-attr]
    assert parse_date(f"Jan '{beyond:02d}", "MDY").year == this_year + 2 - 100  # type: ignore[union-attr]
    assert parse_date("1/1/50", "MDY").year == 1950  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "abc",
        "120/80",  # blood pressure
        "120/80 mmHg",
        "13/13/2014",
        "2/30/2014",
        "30/02/2014",
        "0/12/2014",
        "1/0/2014",
        "1/32/2014",
        "31/31",
        "12",
        "29th",  # a day without a month cannot be shifted
        "1850",  # a lone number is a year only in 1900..2100
        "3000",
        "0",
        "12345678",  # not YYYYMMDD with a 19xx/20xx year
        "20141332",
        "20140230",
        "2.5",  # a decimal
        "1-2",  # a range
        "1/12-2014",  # mixed separators
        "1 12 14",  # spaced dates need a 4-digit year
        "1990s",  # a decade
        "'90s",
        "Q3 2019",
        "5mg",
        "12:30",
        "Jan to Feb 2014",
        "Jan 12 14 2015",
        "Monday Tuesday",
        "Jan Monday 12",
        "12/01/2014/5",
        "1/12/201",
        "111/12/2014",
        "Feb 30, 2014",
        "30 February",
        "Jan 32",
        "Dec 99",
        "Jan 12th, 14th",
        "2014-13-01",
        "2014-02-30",
        "12 Jan 2300",
        "x" * 500,
    ],
)
def test_not_dates_give_none(text: str) -> None:
    assert parse_date(text, "MDY") is None
    assert parse_date(text, "DMY") is None
    assert shift_date_text(text, 30, "MDY") is None
    assert shift_date_text(text, -30, "DMY") is None


def test_small_fractions_are_dates_only_when_valid() -> None:
    assert shift_date_text("2/3", 28, "MDY") == "3/2"  # 2000-02-03 + 28
    assert shift_date_text("2/3", 1, "DMY") == "3/3"
    assert parse_date("4/35", "MDY") is None


@pytest.mark.parametrize("bad", [None, 123, b"1/12/2014", ["1/12/2014"]])
def test_non_text_gives_none(bad: object) -> None:
    assert parse_date(bad, "MDY") is None  # type: ignore[arg-type]
    assert shift_date_text(bad, 3, "MDY") is None  # type: ignore[arg-type]
    assert order_evidence(bad) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("offset", [None, 1.5, "3", True])
def test_non_integer_offset_gives_none(offset: object) -> None:
    assert shift_date_text("1/12/2014", offset, "MDY") is None  # type: ignore[arg-type]


def test_offsets_beyond_the_calendar_give_none() -> None:
    assert shift_date_text("1/12/2014", 10**7, "MDY") is None
    assert shift_date_text("1/12/2014", -(10**7), "MDY") is None
    assert shift_date_text("1/12/2014", 10**30, "MDY") is None


# --------------------------------------------------------------------------
# Zero padding, ordinals, case, weekdays
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset", "expected"),
    [
        ("01/05/2014", 10, "01/15/2014"),
        ("1/5/2014", 10, "1/15/2014"),
        ("1/25/2014", 10, "2/4/2014"),
        ("01/25/2014", 10, "02/04/2014"),  # "01" shows the writer pads, so "25" is padded too
        ("10/25/2014", 10, "11/4/2014"),  # nothing shows padding: as many digits as needed
        ("09/30/2014", 1, "10/01/2014"),
        ("5 Jan 2014", 10, "15 Jan 2014"),
        ("05 Jan 2014", -1, "04 Jan 2014"),
        # writers of ISO and DD-MON-YYYY always pad, so "12" there means two digits
        ("2014-10-12", -9, "2014-10-03"),
        ("12-OCT-2014", -9, "03-OCT-2014"),
        ("12OCT2014", -9, "03OCT2014"),
        ("12-Oct-14", -9, "03-Oct-14"),
        ("2014-1-12", -9, "2014-1-3"),  # ... unless a one-digit part shows otherwise
        ("2014/10/12", -9, "2014/10/3"),  # slashes: no convention
        ("12 Oct 2014", -9, "3 Oct 2014"),
    ],
)
def test_zero_padding(text: str, offset: int, expected: str) -> None:
    assert shift_date_text(text, offset, "MDY") == expected


def test_ordinal_suffix_is_recomputed_for_every_day() -> None:
    for day in range(1, 32):
        assert shift_date_text("January 1st, 2014", day - 1, "MDY") == f"January {day}{suffix(day)}, 2014"
    for day in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31):
        assert shift_date_text("1ST JAN 2014", day - 1, "DMY") == f"{day}{suffix(day).upper()} JAN 2014"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("JAN 2014", "MAR 2014"), ("jan 2014", "mar 2014"), ("Jan 2014", "Mar 2014"),
     ("JANUARY 2014", "MARCH 2014"), ("january 2014", "march 2014"), ("January 2014", "March 2014")],
)  # fmt: skip
def test_month_name_case_and_length_are_kept(text: str, expected: str) -> None:
    assert shift_date_text(text, 50, "MDY") == expected  # Jan 15 + 50 = Mar 6


def test_every_month_name_renders_in_each_style() -> None:
    for month in range(1, 13):
        offset = (date(2014, month, 1) - date(2014, 1, 1)).days
        full = MONTHS[month - 1]
        assert shift_date_text("January 1, 2014", offset, "MDY") == f"{full} 1, 2014"
        assert shift_date_text("01-JAN-2014", offset, "DMY") == f"01-{full[:3].upper()}-2014"
        expected_abbr = "Sept" if month == 9 else full[:3]
        assert shift_date_text("Sept 1, 2014", offset - 243, "MDY") == f"{expected_abbr} 1, 2014"


def test_weekday_with_a_full_date_is_recomputed_not_copied() -> None:
    # 12 Jan 2014 was a Sunday; the text's "Monday" is wrong and must not leak into the result
    for offset in range(-400, 400, 37):
        shifted = date(2014, 1, 12) + timedelta(days=offset)
        expected = f"{WEEKDAYS[shifted.weekday()]}, {shifted.day} {MONTHS[shifted.month - 1]} {shifted.year}"
        assert shift_date_text("Monday, 12 January 2014", offset, "DMY") == expected


def test_weekday_without_a_year_moves_with_the_offset() -> None:
    # "Thursday, January 15" (2015) with a guessed year: keep the weekday arithmetic exact
    assert shift_date_text("Thursday, January 15", 3, "MDY", reference_year=2014) == "Sunday, January 18"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Monday", "Tuesday"), ("MONDAY", "TUESDAY"), ("monday", "tuesday"), ("Mon", "Tue"),
     ("MON.", "TUE."), ("Wed", "Thu"), ("Weds", "Thurs"), ("Tues", "Wed"), ("Sunday", "Monday")],
)  # fmt: skip
def test_weekday_alone_keeps_its_style(text: str, expected: str) -> None:
    assert shift_date_text(text, 8, "MDY") == expected


# --------------------------------------------------------------------------
# Order: per-date evidence and per-document vote
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        ("8/25", "MDY"),
        ("25/8", "DMY"),
        ("25.08.2014", "DMY"),
        ("08/25/2014", "MDY"),
        ("12-31-14", "MDY"),
        ("31 12 2014", "DMY"),
        ("03/04/2014", None),  # ambiguous
        ("12/12/2014", None),
        ("8/14", "MDY"),
        ("8/12", None),
        ("2014-01-25", None),  # ISO says nothing about the document's order
        ("20140125", None),
        ("25 Jan 2014", None),  # month names say nothing either
        ("Jan 25", None),
        ("01/2014", None),
        ("2014", None),
        ("13/13/2014", None),  # invalid both ways
        ("120/80", None),
        ("", None),
    ],
)
def test_order_evidence(text: str, evidence: DateOrder | None) -> None:
    assert order_evidence(text) == evidence


def test_document_order_majority_wins() -> None:
    assert document_order(["25/08/2014", "31.12.2014", "8/25"], "MDY") == "DMY"
    assert document_order(["8/25/2014", "12/31/2014", "25/08/2014", "03/04/2014"], "DMY") == "MDY"


def test_document_order_tie_or_no_evidence_keeps_the_default() -> None:
    assert document_order(["25/08/2014", "8/25/2014"], "MDY") == "MDY"
    assert document_order(["25/08/2014", "8/25/2014"], "DMY") == "DMY"
    assert document_order(["03/04/2014", "Jan 12, 2014", "2014-01-25"], "DMY") == "DMY"
    assert document_order([], "MDY") == "MDY"


def test_document_order_decides_the_ambiguous_dates() -> None:
    texts = ["25/08/2014", "03/04/2014"]
    order = document_order(texts, "MDY")
    assert shift_date_text("03/04/2014", 1, order) == "04/04/2014"  # 3 April + 1


# --------------------------------------------------------------------------
# Reference year for year-less dates
# --------------------------------------------------------------------------


def test_reference_year_is_the_most_frequent_written_year() -> None:
    texts = ["12 Jan 2014", "8/14", "2015-03-01", "Feb 2014", "1/12/13", "Monday"]
    assert reference_year_of(texts, "MDY") == 2014


def test_reference_year_prefers_four_digit_years_and_breaks_ties_by_first_seen() -> None:
    assert reference_year_of(["1/12/13", "2/12/13", "Jan 2014"], "MDY") == 2014
    assert reference_year_of(["1/12/13", "2/12/13"], "MDY") == 2013
    assert reference_year_of(["2015", "2014", "Jan 2014", "Mar 2015"], "MDY") == 2015
    assert reference_year_of(["8/14", "Jan", "Monday", "junk"], "MDY") is None
    assert reference_year_of([], "DMY") is None


def test_year_less_dates_shift_in_the_reference_year() -> None:
    assert shift_date_text("12/20", 20, "MDY", reference_year=2014) == "1/9"
    assert shift_date_text("2/28", 1, "MDY", reference_year=2016) == "2/29"
    assert shift_date_text("2/28", 1, "MDY", reference_year=2015) == "3/1"
    assert shift_date_text("2/28", 1, "MDY") == "2/29"  # leap year 2000 by default
    assert shift_date_text("2/29", 1, "MDY") == "3/1"
    assert shift_date_text("2/29", 1, "MDY", reference_year=2014) is None  # no such day that year
    assert shift_date_text("Jan 2014", 20, "MDY", reference_year=1990) == "Feb 2014"  # written year wins


def test_year_less_dates_shift_consistently_over_many_offsets() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        ref = rng.randint(1995, 2025)
        start = date(ref, 1, 1) + timedelta(days=rng.randint(0, 364))
        offset = rng.choice([-1, 1]) * rng.randint(1, 400)
        end = start + timedelta(days=offset)
        numeric = shift_date_text(f"{start.month}/{start.day}", offset, "MDY", reference_year=ref)
        assert numeric == f"{end.month}/{end.day}"
        named = shift_date_text(f"{start.day} {MONTHS[start.month - 1]}", offset, "DMY", reference_year=ref)
        assert named == f"{end.day} {MONTHS[end.month - 1]}"


# --------------------------------------------------------------------------
# Interval property: shifting both ends by the same offset keeps the interval
# --------------------------------------------------------------------------

Formatter = Callable[[date], str]
#: (name, writer of a date, order that reads it back, years it may take)
FULL_FORMATS: list[tuple[str, Formatter, DateOrder, tuple[int, int]]] = [
    ("m/d/yyyy", lambda d: f"{d.month}/{d.day}/{d.year}", "MDY", (1950, 2090)),
    ("mm/dd/yyyy", lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}", "MDY", (1950, 2090)),
    ("dd/mm/yyyy", lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}", "DMY", (1950, 2090)),
    ("d/m/yyyy", lambda d: f"{d.day}/{d.month}/{d.year}", "DMY", (1950, 2090)),
    ("dd.mm.yyyy", lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}", "DMY", (1950, 2090)),
    ("dd-mm-yyyy", lambda d: f"{d.day:02d}-{d.month:02d}-{d.year}", "DMY", (1950, 2090)),
    ("m-d-yy", lambda d: f"{d.month}-{d.day}-{d.year % 100:02d}", "MDY", (1990, 2018)),
    ("d m yyyy", lambda d: f"{d.day} {d.month} {d.year}", "DMY", (1950, 2090)),
    ("iso", lambda d: d.isoformat(), "DMY", (1950, 2090)),
    ("yyyy/m/d", lambda d: f"{d.year}/{d.month}/{d.day}", "MDY", (1950, 2090)),
    ("yyyymmdd", lambda d: f"{d.year}{d.month:02d}{d.day:02d}", "MDY", (1950, 2090)),
    ("dd-MON-yyyy", lambda d: f"{d.day:02d}-{MONTHS[d.month - 1][:3].upper()}-{d.year}", "DMY", (1950, 2090)),
    ("ddMONyyyy", lambda d: f"{d.day:02d}{MONTHS[d.month - 1][:3].upper()}{d.year}", "DMY", (1950, 2090)),
    ("d Mon yy", lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year % 100:02d}", "DMY", (1990, 2018)),
    ("Mon d, yyyy", lambda d: f"{MONTHS[d.month - 1][:3]} {d.day}, {d.year}", "MDY", (1950, 2090)),
    ("Month dth, yyyy", lambda d: f"{MONTHS[d.month - 1]} {d.day}{suffix(d.day)}, {d.year}", "MDY", (1950, 2090)),
    ("dth of Month yyyy", lambda d: f"{d.day}{suffix(d.day)} of {MONTHS[d.month - 1]} {d.year}", "DMY", (1950, 2090)),
    ("yyyy-Mon-dd", lambda d: f"{d.year}-{MONTHS[d.month - 1][:3]}-{d.day:02d}", "MDY", (1950, 2090)),
    ("Mon d 'yy", lambda d: f"{MONTHS[d.month - 1][:3]} {d.day} '{d.year % 100:02d}", "MDY", (1990, 2018)),
    ("Weekday, d Month yyyy", lambda d: f"{WEEKDAYS[d.weekday()]}, {d.day} {MONTHS[d.month - 1]} {d.year}", "DMY",
     (1950, 2090)),
]  # fmt: skip


#: Formats that abbreviate months in prose: there "May 12" reads as a full
#: name, so a shifted May is written "June", not "Jun" (a known limitation).
MAY_AS_FULL_NAME = frozenset({"d Mon yy", "Mon d, yyyy", "Mon d 'yy"})


#: Padded formats where "12/10/2014" does not show the padding, so a shifted
#: "3/11/2014" is written with as many digits as needed.
PADDING_HIDDEN_AT_TWO_DIGITS = frozenset({"mm/dd/yyyy", "dd/mm/yyyy", "dd.mm.yyyy", "dd-mm-yyyy"})


def shows_its_style(name: str, original: date) -> bool:
    """Whether the written date alone shows its format fully, so the shifted text is exact."""
    if name in PADDING_HIDDEN_AT_TWO_DIGITS and original.day >= 10 and original.month >= 10:
        return False
    return not (original.month == 5 and name in MAY_AS_FULL_NAME)


def random_date(rng: random.Random, years: tuple[int, int]) -> date:
    start = date(years[0], 1, 1)
    return start + timedelta(days=rng.randint(0, (date(years[1], 12, 31) - start).days))


# Month, year and leap-day boundaries that every format must cross correctly.
EDGE_DATES = [
    date(2016, 2, 28), date(2016, 2, 29), date(2016, 3, 1), date(2015, 2, 28), date(2015, 3, 1),
    date(1999, 12, 31), date(2000, 1, 1), date(2000, 2, 29), date(2012, 12, 31), date(2013, 1, 31),
]  # fmt: skip
EDGE_OFFSETS = [-366, -365, -60, -29, -1, 1, 28, 29, 365, 366, 1461]


@pytest.mark.parametrize(("name", "write", "order", "years"), FULL_FORMATS, ids=[f[0] for f in FULL_FORMATS])
def test_interval_is_kept_across_many_dates_and_offsets(
    name: str, write: Formatter, order: DateOrder, years: tuple[int, int]
) -> None:
    rng = random.Random(name)
    pairs = [(random_date(rng, years), random_date(rng, years)) for _ in range(300)]
    pairs += [(a, b) for a in EDGE_DATES for b in EDGE_DATES if years[0] <= min(a, b).year]
    for first, second in pairs:
        offsets = [rng.choice([-1, 1]) * rng.randint(1, 1500) for _ in range(2)] + rng.sample(EDGE_OFFSETS, 2)
        for offset in offsets:
            shifted = []
            for original in (first, second):
                text = shift_date_text(write(original), offset, order)
                assert text is not None, (name, original, offset)
                expected = original + timedelta(days=offset)
                if shows_its_style(name, original):
                    assert text == write(expected), (name, original, offset)
                back = parse_date(text, order)
                assert back is not None, (name, text)
                year = back.year if back.year is not None else expected.year
                shifted.append(date(year, back.month or 1, back.day or 1))
            assert (shifted[1] - shifted[0]) == (second - first), (name, first, second, offset)


def test_month_year_dates_land_in_the_month_of_their_shifted_midpoint() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        year, month = rng.randint(1950, 2090), rng.randint(1, 12)
        offset = rng.choice([-1, 1]) * rng.randint(1, 900)
        end = date(year, month, 15) + timedelta(days=offset)
        assert shift_date_text(f"{MONTHS[month - 1]} {year}", offset, "MDY") == f"{MONTHS[end.month - 1]} {end.year}"
        padded = f"{end.month:02d}" if month < 10 else str(end.month)  # "10/2014" does not show padding
        assert shift_date_text(f"{month:02d}/{year}", offset, "DMY") == f"{padded}/{end.year}"
        mid_year = date(year, 7, 2) + timedelta(days=offset)
        assert shift_date_text(str(year), offset, "MDY") == str(mid_year.year)


# --------------------------------------------------------------------------
# Robustness and speed
# --------------------------------------------------------------------------


def test_random_date_like_text_never_raises() -> None:
    rng = random.Random(11)
    alphabet = "0123456789/-.,' :TtHhSsNnDdRr" + "JanFebMaySeptMonTuesDecOfthe()’"
    for _ in range(6000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        for order in ("MDY", "DMY"):
            result = shift_date_text(text, rng.randint(-5000, 5000), order, reference_year=rng.choice([None, 2016]))
            assert result is None or isinstance(result, str)
            order_evidence(text)


def test_nothing_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        for text in ("12 Jan 2014", "120/80", "2/29", "Feb 30", "", "Monday"):
            shift_date_text(text, 5, "DMY", reference_year=2014)
            reference_year_of([text], "DMY")
            document_order([text], "MDY")
    assert caplog.records == []


def test_thousands_of_dates_per_second() -> None:
    texts = [t for t, *_ in FORMATS] * 40
    began = time.perf_counter()
    for text in texts:
        shift_date_text(text, 17, "MDY", reference_year=2014)
    rate = len(texts) / (time.perf_counter() - began)
    assert rate > 2000, f"{rate:.0f} dates/s"
