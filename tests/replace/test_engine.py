"""The replacement engine: intervals, consistency, unlinkability, ages, fail-closed."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from deid_core.replace.engine import Replacer, case_offset_days
from deid_core.replace.keys import MissingKeyError
from deid_core.results import MaskedToken
from tests.replace.conftest import KEY_A, KEY_B, mask

D1 = date(2014, 1, 9)
D2 = date(2014, 3, 2)  # 52 days later, across a month end

#: (strftime format, post-processing): the oracle renders the expected shifted
#: date independently of the date module
FORMATS = [
    ("%d-%b-%Y", str.upper),        # 09-JAN-2014
    ("%m/%d/%Y", None),             # 01/09/2014
    ("%Y-%m-%d", None),             # ISO
    ("%d %B %Y", None),             # 09 January 2014
    ("%B %d, %Y", None),            # January 09, 2014
    ("%b %d %Y", None),             # Jan 09 2014
    ("%d%b%Y", str.upper),          # 09JAN2014
    ("%Y%m%d", None),               # 20140109
    ("%m/%d/%y", None),             # 01/09/14
    ("%d.%m.%Y", None),             # 09.01.2014 (day first: read from the document's other date)
    ("%Y/%m/%d", None),             # 2014/01/09
    ("%d-%b-%y", None),             # 09-Jan-14
]


def _fmt(d: date, fmt: str, post) -> str:
    s = d.strftime(fmt)
    return post(s) if post else s


def _replacement_texts(result) -> list[str]:
    return [r.replacement for r in result.replacements]


@pytest.mark.parametrize(("fmt", "post"), FORMATS, ids=[f[0] for f in FORMATS])
def test_dates_shift_by_the_case_offset_in_their_own_format(replacer_for, fmt: str, post) -> None:
    rep = replacer_for("hipaa_safe_harbor")
    # a third, unambiguous date (day 25) tells a day-first document from a month-first one
    d3 = date(2014, 1, 25)
    a, b, c = (_fmt(d, fmt, post) for d in (D1, D2, d3))
    text = f"Drug started {a}. Rash on {b}; resolved {c}."
    res = rep.replace(text, mask(text, [(a, "DATE"), (b, "DATE"), (c, "DATE")]), "CASE-1")
    off = rep.offset_days("CASE-1")
    assert 30 <= abs(off) <= 365
    expected = [_fmt(d + timedelta(days=off), fmt, post) for d in (D1, D2, d3)]
    assert _replacement_texts(res) == expected
    assert a not in res.text and b not in res.text


def test_interval_is_exact_for_year_less_and_ordinal_dates(replacer_for) -> None:
    rep = replacer_for("hipaa_safe_harbor")
    text = "Admitted 3/1/2016. Started drug 2/27, rash 3/4. Seen January 3rd, 2016."
    res = rep.replace(text, mask(text, [("3/1/2016", "DATE"), ("2/27", "DATE"), ("3/4", "DATE"),
                                        ("January 3rd, 2016", "DATE")]), "C9")
    off = timedelta(days=rep.offset_days("C9"))
    got = _replacement_texts(res)
    d_adm, d_start, d_rash = date(2016, 3, 1) + off, date(2016, 2, 27) + off, date(2016, 3, 4) + off
    assert got[0] == f"{d_adm.month}/{d_adm.day}/{d_adm.year}"
    assert got[1] == f"{d_start.month}/{d_start.day}"  # 2016 is a leap year: 2/27 -> 3/4 is 6 days
    assert got[2] == f"{d_rash.month}/{d_rash.day}"
    d_seen = date(2016, 1, 3) + off
    day = d_seen.day
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    assert got[3] == f"{d_seen.strftime('%B')} {day}{suffix}, {d_seen.year}"


def test_weekday_follows_its_shifted_date(replacer_for) -> None:
    rep = replacer_for("hipaa_safe_harbor")
    text = "Onset Monday, 13 January 2014 at home."
    res = rep.replace(text, mask(text, [("Monday, 13 January 2014", "DATE")]), "C2")
    new = date(2014, 1, 13) + timedelta(days=rep.offset_days("C2"))
    assert _replacement_texts(res) == [f"{new.strftime('%A')}, {new.day:02d} {new.strftime('%B')} {new.year}"]


def test_unparsable_date_becomes_a_tag_and_year_alone_follows_the_policy(replacer_for) -> None:
    text = "Event in 2014, around the feast of St Nobody."
    masks = mask(text, [("2014", "DATE"), ("feast of St Nobody", "DATE")])
    hipaa = replacer_for("hipaa_safe_harbor").replace(text, masks, "C")
    assert "2014" in hipaa.text and hipaa.kept["DATE"] == 1
    assert [r.replacement for r in hipaa.replacements] == ["[DATE]"]
    rep = replacer_for("i2b2")
    i2b2 = rep.replace(text, masks, "C")
    # a year alone moves like its middle day (2 July) would
    expected = (date(2014, 7, 2) + timedelta(days=rep.offset_days("C"))).year
    assert [r.replacement for r in i2b2.replacements] == [str(expected), "[DATE]"]


def test_consistent_within_a_case_across_documents(replacer_for) -> None:
    rep = replacer_for("hipaa_safe_harbor")
    t1 = "Patient John Smith, seen 12-JAN-2014, phone 555-123-4567."
    t2 = "Follow-up: SMITH reported on 20-JAN-2014. Call 555-123-4567."
    r1 = rep.replace(t1, mask(t1, [("John Smith", "NAME"), ("12-JAN-2014", "DATE"), ("555-123-4567", "PHONE")]), "CASE-7")
    r2 = rep.replace(t2, mask(t2, [("SMITH", "NAME"), ("20-JAN-2014", "DATE"), ("555-123-4567", "PHONE")]), "CASE-7")
    first, last = r1.replacements[0].replacement.split()
    assert r2.replacements[0].replacement == last.upper()
    assert r1.replacements[2].replacement == r2.replacements[2].replacement
    # the 8-day interval between the reports' dates survives
    d1 = date(2014, 1, 12) + timedelta(days=rep.offset_days("CASE-7"))
    assert r1.replacements[1].replacement == d1.strftime("%d-%b-%Y").upper()
    assert r2.replacements[1].replacement == (d1 + timedelta(days=8)).strftime("%d-%b-%Y").upper()
    for r in (r1, r2):
        assert "Smith" not in r.text and "SMITH" not in r.text and "555-123-4567" not in r.text


def test_unlinkable_across_keys_and_cases(replacer_for) -> None:
    a, b = replacer_for("hipaa_safe_harbor", KEY_A), replacer_for("hipaa_safe_harbor", KEY_B)
    cases = [f"CASE-{i}" for i in range(60)]
    same_key_other_key = sum(a.offset_days(c) == b.offset_days(c) for c in cases)
    assert same_key_other_key <= 3
    assert len({a.offset_days(c) for c in cases}) >= 50  # offsets differ between cases
    text = "Seen by Margaret Thompson."
    m = mask(text, [("Margaret Thompson", "NAME")])
    names_a = {a.replace(text, m, c).replacements[0].replacement for c in cases}
    names_b = {b.replace(text, m, c).replacements[0].replacement for c in cases}
    assert len(names_a) >= 55 and len(names_a & names_b) <= 3
    # same key and case: same pseudonym every time
    assert a.replace(text, m, "CASE-1").text == a.replace(text, m, "CASE-1").text


def test_offset_range_and_sign(cfg) -> None:
    offs = [case_offset_days(KEY_A, f"c{i}", 30, 365) for i in range(400)]
    assert all(30 <= abs(o) <= 365 for o in offs)
    assert 0 < sum(o > 0 for o in offs) < 400


@pytest.mark.parametrize(
    ("policy", "text", "age", "expected"),
    [
        ("hipaa_safe_harbor", "A 92 yo man.", "92", "A [AGE>89] yo man."),
        ("hipaa_safe_harbor", "A 90-year-old man.", "90", "A [AGE>89]-year-old man."),
        ("hipaa_safe_harbor", "A 45 yo man.", "45", "A 45 yo man."),
        ("i2b2", "A 45 yo man.", "45", "A [AGE] yo man."),
        ("tags", "A 101 yo man.", "101", "A [AGE>89] yo man."),
    ],
)
def test_age_bucketing(replacer_for, policy: str, text: str, age: str, expected: str) -> None:
    key = None if policy == "tags" else KEY_A
    res = replacer_for(policy, key).replace(text, mask(text, [(age, "AGE")]), "C")
    assert res.text == expected


def test_age_limit_is_configurable(replacer_for, cfg) -> None:
    c = cfg.model_copy(update={"replacement": cfg.replacement.model_copy(update={"age_bucket_from": 80})})
    text = "An 85 yo woman."
    assert replacer_for("hipaa_safe_harbor", c=c).replace(text, mask(text, [("85", "AGE")]), "C").text == (
        "An [AGE>79] yo woman."
    )


def test_places_ids_phones_and_tags(replacer_for) -> None:
    rep = replacer_for("hipaa_safe_harbor")
    text = "Lives in Springfield, reported from France. MRN 12-34567X. Tel +44 20 7946 0958. Mail jo@x.com"
    masks = mask(text, [("Springfield", "LOCATION"), ("France", "LOCATION"), ("12-34567X", "ID"),
                        ("44 20 7946 0958", "PHONE"), ("jo@x.com", "EMAIL")])
    res = rep.replace(text, masks, "C")
    by = {r.label: r.replacement for r in res.replacements}
    assert "France" in res.text and res.kept["LOCATION"] == 1  # countries are kept under Safe Harbor
    assert by["LOCATION"] != "Springfield" and "Springfield" not in res.text
    assert re.fullmatch(r"\d\d-\d{5}[A-Z]", by["ID"]) and by["ID"] != "12-34567X"
    assert by["PHONE"].startswith("+44 ") and len(by["PHONE"]) == len("+44 20 7946 0958")
    assert by["EMAIL"].endswith("@example.org")
    tags = replacer_for("tags", None).replace(text, masks, "C")
    assert tags.text == "Lives in [LOCATION], reported from [LOCATION]. MRN [ID]. Tel [PHONE]. Mail [EMAIL]"


def test_unknown_category_is_tagged_and_spans_point_at_the_original(replacer_for) -> None:
    text = "Seen by xq7 at home."
    masks = [MaskedToken(8, 11, "PHI", 0.4)]
    res = replacer_for("hipaa_safe_harbor").replace(text, masks, "C")
    assert res.text == "Seen by [PHI] at home."
    assert [(r.start, r.end, r.label) for r in res.replacements] == [(8, 11, "PHI")]


def test_overlapping_masks_fail_closed(replacer_for) -> None:
    text = "Seen by Ann Lee today."
    bad = [MaskedToken(8, 11, "NAME", 1.0), MaskedToken(9, 15, "NAME", 1.0)]
    res = replacer_for("hipaa_safe_harbor").replace(text, bad, "C")
    assert res.failures == 1
    assert res.text == "[PHI] [PHI] [PHI] [PHI] [PHI]."


def test_keyed_policies_refuse_to_run_without_a_key(policy_of, cfg) -> None:
    with pytest.raises(MissingKeyError):
        Replacer(policy_of("hipaa_safe_harbor"), cfg, None)
    Replacer(policy_of("tags"), cfg, None)  # tag-only profiles need none


def test_implausible_age_is_tagged_not_bucketed(replacer_for) -> None:
    text = "amoxicillin 500 mg"
    res = replacer_for("hipaa_safe_harbor").replace(text, mask(text, [("500", "AGE")]), "C")
    assert res.text == "amoxicillin [AGE] mg"


def test_a_phone_number_without_digits_is_tagged_without_a_failure(replacer_for) -> None:
    # the network alone may call a word a phone number: there is no shape to keep, and no error
    text = "Call KRISSY at home."
    res = replacer_for("hipaa_safe_harbor").replace(text, [MaskedToken(5, 11, "PHONE", 0.9, group=0)], "C")
    assert res.failures == 0
    assert res.text == "Call [PHONE] at home."
