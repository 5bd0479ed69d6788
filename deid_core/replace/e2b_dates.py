"""Shifting the date values of E2B structured fields.

E2B writes dates as digit strings of varying precision: CCYY, CCYYMM,
CCYYMMDD, then hours, minutes, seconds and an optional UTC offset
("20140112093000+0100"). The narrative date parser reads human formats; this
module handles the E2B one exactly: the date part moves by the case's
offset, the precision and the time of day and zone stay as they were, so
the structured onset date and the narrative's onset date stay the same
number of days apart as in the original report.

Hand-written because the format is fixed and tiny; `datetime` does the
calendar arithmetic.
"""

from __future__ import annotations

from datetime import date, timedelta

import regex as re

_E2B = re.compile(r"(?P<y>\d{4})(?P<m>\d{2})?(?P<d>\d{2})?(?P<rest>(?:\d{2}){0,3}(?:\.\d+)?(?:[+-]\d{4})?)")


def is_e2b_date(value: str) -> bool:
    return _E2B.fullmatch(value.strip()) is not None


def shift_e2b_date(value: str, offset_days: int) -> str | None:
    """The value moved by `offset_days` at its own precision; None if it is not an E2B date.

    Missing parts are filled as the narrative shifter does (15th of the
    month, 2 July of the year) so that both move a partial date alike.
    """
    m = _E2B.fullmatch(value.strip())
    if m is None:
        return None
    y, mo, d = int(m["y"]), m["m"], m["d"]
    try:
        base = date(y, int(mo) if mo else 7, int(d) if d else (15 if mo else 2))
        new = base + timedelta(days=offset_days)
    except (ValueError, OverflowError):
        return None
    out = f"{new.year:04d}"
    if mo:
        out += f"{new.month:02d}"
    if d:
        out += f"{new.day:02d}"
    return out + m["rest"]
