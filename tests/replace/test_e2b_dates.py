from __future__ import annotations

from datetime import date, timedelta

import pytest

from deid_core.replace.e2b_dates import is_e2b_date, shift_e2b_date
from tests.replace.conftest import KEY_A


@pytest.mark.parametrize(
    ("value", "offset", "expected"),
    [
        ("20140112", 20, "20140201"),
        ("20160228", 1, "20160229"),            # leap day
        ("20141231", 1, "20150101"),
        ("201401", 20, "201402"),               # month precision: from the 15th
        ("201401", 10, "201401"),
        ("2014", 200, "2015"),                  # year precision: from 2 July
        ("20140112093000+0100", -12, "20131231093000+0100"),  # time and zone kept
        ("201401120930", 1, "201401130930"),
    ],
)
def test_e2b_dates_move_at_their_precision(value: str, offset: int, expected: str) -> None:
    assert shift_e2b_date(value, offset) == expected


@pytest.mark.parametrize("value", ["2014-01-12", "12JAN2014", "20141301", "abc", "201"])
def test_non_e2b_or_invalid_values(value: str) -> None:
    assert shift_e2b_date(value, 3) is None or not is_e2b_date(value)


def test_structured_and_narrative_dates_move_together(replacer_for) -> None:
    rep = replacer_for("hipaa_safe_harbor")
    off = rep.offset_days("CASE-9")
    structured = rep.replace_value("20140112", "DATE", "CASE-9")
    assert structured == (date(2014, 1, 12) + timedelta(days=off)).strftime("%Y%m%d")
    assert rep.replace_value("2014", "DATE", "CASE-9") is None  # a year alone is kept under Safe Harbor
    assert rep.replace_value("Helen", "NAME", "CASE-9") not in (None, "Helen")
    assert rep.replace_value("93", "AGE", "CASE-9") == "[AGE>89]"
    assert rep.replace_value("France", "LOCATION", "CASE-9") is None
    assert rep.replace_value("   ", "NAME", "CASE-9") is None
    assert replacer_for("tags", None).replace_value("20140112", "DATE", "CASE-9") == "[DATE]"
    assert KEY_A.fingerprint in rep.version
