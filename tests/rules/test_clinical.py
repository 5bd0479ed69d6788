"""Clinical-value evidence: doses, lab values and timings stay visible; identifiers stay masked."""

from __future__ import annotations

import pytest

from deid_core.config import DeidConfig
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.rules.clinical import ClinicalEvidence
from deid_core.rules.deidentifier import RuleDeidentifier


@pytest.fixture(scope="module")
def evidence(cfg: DeidConfig) -> ClinicalEvidence:
    assert cfg.rules.clinical is not None
    return ClinicalEvidence.from_files(cfg.rules.clinical.analytes, cfg.rules.clinical.dose_units,
                                       cfg.rules.clinical.designations, cfg.rules.clinical.shorthand)


def spans(evidence: ClinicalEvidence, text: str) -> set[tuple[str, str]]:
    return {(text[s.start:s.end], s.kind) for s in evidence.find(text)}


@pytest.mark.parametrize("text", ["101*F", "40 mg", "13.2 g/dL", "12.5 x10^9/L", "95%", "38.5 °C", "3 days", "2 tabs",
                                  "500 cells/mm3", "40 mEq", "5-10 mg", "1,000 units", "0.5 mg/kg/day", "88 bpm"])
def test_quantities(evidence: ClinicalEvidence, text: str) -> None:
    assert (text, "quantity") in spans(evidence, text)


@pytest.mark.parametrize(("text", "expected"), [
    ("Na 118", "Na 118"), ("INR: 2.3", "INR: 2.3"), ("ALT 3x ULN", "ALT 3x ULN"), ("BP 120/80", "BP 120/80"),
    ("creatinine rose to 2.1 mg/dL", "creatinine rose to 2.1 mg/dL"), ("GCS 15", "GCS 15"),
    ("Hgb 9.1 yesterday", "Hgb 9.1"),
    # British and Australian writing, named scales
    ("WCC 11.4, CRP 96", "WCC 11.4"), ("BGL 9.8; given charcoal", "BGL 9.8"), ("SCORTEN 1. Admitted", "SCORTEN 1"),
])
def test_analytes_with_their_values(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    assert (expected, "analyte") in spans(evidence, text)


@pytest.mark.parametrize("text", ["q6h", "q 4-6 hours", "x2", "day 5", "cycle 3", "3x", "2nd dose", "3rd day",
                                  "10:30", "3:10 AM", "1130 am", "7a-7p", "3 pm", "once daily", "per day", "QD",
                                  "twice a week", "at night", "every 8 hours", "b.i.d.", "the next day",
                                  "The day after", "a day later", "A FEW HOURS LATER", "two weeks",
                                  "throughout the day", "all day long", "day +11", "Day -3", "C1D22", "C2 D8",
                                  "39+2 weeks", "27+3/40"])
def test_timings(evidence: ClinicalEvidence, text: str) -> None:
    assert (text, "timing") in spans(evidence, text)


@pytest.mark.parametrize("text", ["Room 12", "Henry 5", "in 2014", "at 5 in the morning", "MRN 1234567",
                                  "called 555-1234", "Smith 42", "Weeks 3", "tsw-day-40", "38+5", "(12-14)",
                                  "(3-4)"])
def test_no_evidence_where_there_is_no_measurement(evidence: ClinicalEvidence, text: str) -> None:
    assert spans(evidence, text) == set()


@pytest.mark.parametrize(("text", "expected"), [
    ("extubated at 1850 on 40%", "1850"), ("labs @ 0300", "0300"), ("stopped at 2130 hrs", "2130 hrs"),
])
def test_four_digit_times_after_a_cue(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    assert (expected, "timing") in spans(evidence, text)


@pytest.mark.parametrize(("text", "expected"), [
    ("NURSING NOTE 1900-0700 NEURO", "1900-0700"), ("Progress Note 0700->1930 S/O", "0700->1930"),
    ("note 1900>>0700", "1900>>0700"), ("CPK at 2100, 0500 and 0900", "0900"), ("given at 0630 and 1400", "1400"),
    ("arrive @ approx 1900 from Rome", "1900"), ("extubated at aprox 2030 with", "2030"),
])
def test_shifts_time_lists_and_approximate_times(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    """A nursing shift, the next times of a cued list and "at approx" times are clock times (not PHI)."""
    assert (expected, "timing") in spans(evidence, text)


@pytest.mark.parametrize("text", ["Subject 0142-0037, born 1958", "smoked 1992-1995 then", "CABG 1957, 1971",
                                  "from 1930-2030", "list 0142, 0037"])
def test_subject_numbers_year_ranges_and_odd_minutes_are_no_shift(evidence: ClinicalEvidence, text: str) -> None:
    """Both ends of a shift are on the hour or a quarter, and not both years; a list needs a cued time first."""
    assert not any(kind == "timing" for _, kind in spans(evidence, text))


def test_a_year_like_end_of_a_shift_is_no_year_but_a_year_range_stays(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "NURSING NOTE 1900-0700 uneventful. MI 1992, CABG 1957 and 1971, smoked 1990-2000.")
    assert v["1900"] == (False, "clinical:timing") and v["0700"] == (False, "clinical:timing")
    assert v["1992"][0] and v["1957"][0] and v["1971"][0] and v["1990"][0] and v["2000"][0]


@pytest.mark.parametrize("text", ["code 1850 on file", "at 2460 units", "at 1875", "ref 0300"])
def test_four_digits_without_a_cue_or_a_valid_time_are_no_time(evidence: ClinicalEvidence, text: str) -> None:
    assert not any(kind == "timing" for _, kind in spans(evidence, text))


@pytest.mark.parametrize(("text", "expected"), [
    ("BP 100-120/50-60s", "BP 100-120/50-60s"), ("SBP 90-160s", "SBP 90-160s"), ("abg 7.38/47/72", "abg 7.38/47/72"),
    ("K+ 3.7", "K+ 3.7"), ("FROM 12 TO 24MCG", None),
])
def test_vital_sign_series(evidence: ClinicalEvidence, text: str, expected: str | None) -> None:
    if expected is None:  # an upper-case range before a unit is a quantity
        assert (text.split(" ", 1)[1], "quantity") in spans(evidence, text)
    else:
        assert (expected, "analyte") in spans(evidence, text)


@pytest.mark.parametrize(("text", "expected"), [
    ("CONTINUES TO C/O PAIN 8/10.", "PAIN 8/10"), ("pain score of 7/10", "pain score of 7/10"),
])
def test_pain_scores(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    assert (expected, "score") in spans(evidence, text)


def test_a_score_shape_without_its_word_may_be_a_date(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "seen 8/10 again, pain 8/10/2020")
    assert v["8"][0] is True and v["10"][0] is True


@pytest.mark.parametrize(("text", "letters"), [
    ("S/O: remains intubated", ["S", "O"]), ("spoke w/ MD", ["w"]), ("d/t allergies", ["d", "t"]),
    ("98 s/p hip fx", ["s", "p"]), ("CONTINUES TO C/O PAIN", ["C", "O"]),
    # care-plan headers, oxygen and ventilation, site checks, and a longer last part
    ("A/P: continue plan", ["A", "P"]), ("on 2L n/c, vent on A/C", ["n", "c", "A", "C"]),
    ("line site d/i, B/P stable", ["d", "i", "B", "P"]), ("heparin d/ced today", ["d"]),
    ("tolerated w/out difficulty", ["w"]), ("no s/sx of bleeding", ["s"]),
])
def test_slashed_shorthand_letters_are_no_initials(rules: RuleDeidentifier, text: str, letters: list[str]) -> None:
    a = rules.analyse(text)
    for i, t in enumerate(a.tokens):
        if t.text in letters:
            assert (a.unsafe[i], a.reasons[i]) == (False, "clinical:shorthand"), t.text


def test_a_longer_slashed_part_needs_the_whole_string_on_the_list(rules: RuleDeidentifier) -> None:
    # "J/Lee" and "K/Dan" are no shorthand: only listed strings count, so their letters stay masked
    a = rules.analyse("seen by J/Lee and K/Dan")
    assert all(u for t, u in zip(a.tokens, a.unsafe, strict=True) if t.text in ("J", "K"))


def test_slashed_initials_and_possessive_names(rules: RuleDeidentifier) -> None:
    a = rules.analyse("J/S seen. The pt's dtr and Smith's son, Report(s) and (s) alone")
    by = [(t.text, a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens)]
    assert ("J", True, "single_letter") in by and ("S", True, "single_letter") in by
    # the possessive and plural endings are no initials; an "s" standing alone in brackets is judged as a letter
    assert [u for t, u, _ in by if t == "s"] == [False, False, False, True]
    assert ("Smith", True, "unsafe_list") in by  # the name itself is judged alone


def test_clock_times_do_not_override_an_address_or_a_year(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "lives at 1850 Main Street since 2010")
    assert v["1850"][0] is True and v["1850"][1].startswith("context:")
    assert v["2010"] == (True, "pattern:DATE")


def test_function_words_pint_accepts_are_not_units(evidence: ClinicalEvidence) -> None:
    # pint parses "in" (inch), "at" (technical atmosphere), "a" (year), "are" (100 m2)
    for word in ("in", "at", "a", "are", "as"):
        assert not evidence.is_unit(word)
    for word in ("mg", "mL", "mmol", "mmHg", "dL", "µg", "h", "weeks", "tabs", "mEq", "mm3"):
        assert evidence.is_unit(word), word


def _verdict(rules: RuleDeidentifier, text: str) -> dict[str, tuple[bool, str]]:
    a = rules.analyse(text)
    return {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens)}


def test_rules_keep_clinical_values_and_mask_identifiers(rules: RuleDeidentifier) -> None:
    text = ("A 67-year-old man on warfarin 5 mg daily: INR 2.3 and Na 118 mmol/L after 3 days, q6h x2. "
            "Seen by Dr. Tyro on 12-JAN-2014, phone 617-555-0123, aged 92. Patient J.S. in Room 12.")
    v = _verdict(rules, text)
    for kept in ["5", "mg", "INR", "2", "3", "Na", "118", "mmol", "L", "q6h", "x2"]:
        assert v[kept][0] is False and v[kept][1].startswith("clinical:"), kept
    assert v["A"][0] is False  # the article before a number, not an initial
    # "12" last occurs in "Room 12": a room and its number are a place, masked with the word
    for masked, reason in [("Tyro", "context:"), ("JAN", "pattern:DATE"), ("2014", "pattern:DATE"),
                           ("617", "pattern:PHONE"), ("0123", "pattern:PHONE"), ("92", "pattern:AGE"),
                           ("J", "single_letter"), ("S", "single_letter"), ("12", "context:room"),
                           ("Room", "context:room")]:
        assert v[masked][0] is True and v[masked][1].startswith(reason), masked


def test_a_phi_detector_wins_over_clinical_evidence(rules: RuleDeidentifier) -> None:
    # a date followed by a unit-like word, and an age >= 90 in years: the PHI detectors keep them masked
    v = _verdict(rules, "on 12/03/2019 h the 93 year old")
    assert v["2019"] == (True, "pattern:DATE")
    assert v["93"][0] is True and v["93"][1].startswith("pattern:AGE")


def test_capitalised_list_words_stay_masked_lower_case_units_do_not(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "for 2 weeks, then Dr Weeks for 2 Weeks")
    a = rules.analyse("for 2 weeks, then Dr Weeks for 2 Weeks")
    words = [(t.text, a.unsafe[i]) for i, t in enumerate(a.tokens)]
    assert words[1:3] == [("2", False), ("weeks", False)]
    assert ("Weeks", True) in words[4:]
    assert v["Weeks"][0] is True


@pytest.mark.parametrize("text", ["randomised on Day 1 (14-SEP-2022); admitted on Day 16.",
                                  "On Cycle 2 Day 8 the subject presented", "seen at the Week 12 visit"])
def test_the_day_or_week_of_a_schedule_is_no_surname(rules: RuleDeidentifier, text: str) -> None:
    a = rules.analyse(text)
    words = {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens) if t.text in ("Day", "Week")}
    assert words and all(v == (False, "clinical:timing") for v in words.values())
    # without its number the surname stays masked
    assert _verdict(rules, "Seen by Dr Day today.")["Day"][0] is True


def test_an_upper_case_article_before_a_stopword_is_no_initial(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "WE CALLED HIM. A FEW OF US STAYED. A SMITH CALLED.")
    assert v["A"][0] is True  # the last "A" is the initial of "A SMITH"
    a = rules.analyse("WE CALLED HIM. A FEW OF US STAYED.")
    assert [a.unsafe[i] for i, t in enumerate(a.tokens) if t.text == "A"] == [False]


def test_lone_initials_stay_masked(rules: RuleDeidentifier) -> None:
    for text in ["A. Smith was seen", "reported by A Smith", "K was given"]:
        a = rules.analyse(text)
        first = a.tokens[[t.text for t in a.tokens].index("A" if "A" in text else "K")]
        assert a.unsafe[a.tokens.index(first)], text


def test_disabled_evidence_masks_numbers_as_before(cfg: DeidConfig, artifact: DictionaryArtifact) -> None:
    assert cfg.rules.clinical is not None
    off = cfg.rules.model_copy(update={"clinical": cfg.rules.clinical.model_copy(update={"enabled": False})})
    rules = RuleDeidentifier(artifact, off)
    v = _verdict(rules, "warfarin 5 mg, INR 2.3")
    assert v["5"] == (True, "digit") and v["2"] == (True, "digit")


@pytest.mark.parametrize("alphabet", ["0123456789./ ", "1 mg/", "Na 1. ", "q1x2 ", "0123 %x10^"])
def test_adversarial_input_is_fast(evidence: ClinicalEvidence, alphabet: str) -> None:
    # sanity guard against catastrophic backtracking, not a benchmark
    import random
    import time

    rng = random.Random(7)
    text = "".join(rng.choice(alphabet) for _ in range(100_000))
    t0 = time.perf_counter()
    found = evidence.find(text)
    assert time.perf_counter() - t0 < 5.0
    assert all(0 <= s.start < s.end <= len(text) for s in found)


@pytest.mark.parametrize("text", ["PT 8/14", "level 3-12", "Sat 12/3", "trough 2014", "CA 90210"])
def test_values_that_read_as_dates_or_zip_codes_are_not_lab_values(evidence: ClinicalEvidence, text: str) -> None:
    assert {kind for _, kind in spans(evidence, text)} <= {"timing"}
    assert not any(kind == "analyte" for _, kind in spans(evidence, text))


def test_blood_pressure_and_gases_are_not_dates(evidence: ClinicalEvidence) -> None:
    assert ("BP 120/80", "analyte") in spans(evidence, "BP 120/80")
    assert ("abg 7.44/55/57", "analyte") in spans(evidence, "abg 7.44/55/57")


@pytest.mark.parametrize("text", ["BC from 9/2 GM stain", "drawn 3/12 h", "seen 12-3 x"])
def test_a_number_continuing_a_date_shape_is_never_a_quantity(evidence: ClinicalEvidence, text: str) -> None:
    # "9/2 GM" is a date and a Gram stain, not 2 grams: the "2" is not judged on its own
    digits_in_spans = [t for t, _ in spans(evidence, text) if any(ch.isdigit() for ch in t)]
    assert digits_in_spans == []


# --- lot and batch numbers: a product batch, never PHI ------------------------------------


@pytest.mark.parametrize(("text", "code"), [
    ("Lot EL1442", "EL1442"), ("lot # EK9231", "EK9231"), ("Lot number: 030M20A", "030M20A"),
    ("batch no. AB12-34", "AB12-34"), ("Lot#:039K20A", "039K20A"), ("lot l4k9-zz given", "l4k9-zz"),
    ("LOT AB1234 ON FILE", "AB1234"), ("the lot was EK9231.", "EK9231"),
])
def test_lot_codes_are_clinical_evidence(evidence: ClinicalEvidence, text: str, code: str) -> None:
    assert (code, "lot") in spans(evidence, text)
    assert not any(t.lower() in ("lot", "batch") for t, _ in spans(evidence, text))  # the cue is an ordinary word


@pytest.mark.parametrize("text", ["a lot of pain", "lots of fluids", "Improved a lot 3 times a week.",
                                  "a lot 100 times", "batches of 12", "Lot: unknown"])
def test_no_lot_without_a_cue_and_a_code(evidence: ClinicalEvidence, text: str) -> None:
    assert not any(kind == "lot" for _, kind in spans(evidence, text))


@pytest.mark.parametrize(("text", "tokens"), [
    ("Lot EL1442 given.", ["EL1442"]), ("lot # EK9231", ["EK9231"]), ("Lot number: 030M20A", ["030M20A"]),
    ("batch no. AB12-34", ["AB12", "34"]), ("Moderna lot 039K20A, left arm", ["039K20A"]),
    ("Lot ED-1234", ["ED", "1234"]),  # a piece of a lot code is no name, even if a name list has it
])
def test_rules_keep_lot_codes_visible(rules: RuleDeidentifier, text: str, tokens: list[str]) -> None:
    a = rules.analyse(text)
    for i, t in enumerate(a.tokens):
        if t.text in tokens:
            assert (a.unsafe[i], a.reasons[i]) == (False, "clinical:lot"), t.text
        elif t.lower in ("lot", "batch", "number", "no"):
            assert not a.unsafe[i] and a.reasons[i] in ("safe", "medical", "medical:lower_case", "drug"), t.text


@pytest.mark.parametrize("text", ["a lot of pain", "lots of fluids"])
def test_rules_see_no_lot_in_everyday_words(rules: RuleDeidentifier, text: str) -> None:
    assert not any(r.startswith("clinical:lot") for r in rules.analyse(text).reasons)


def test_a_phi_detector_wins_over_a_lot_cue(rules: RuleDeidentifier) -> None:
    # a date, a phone number or an SSN after "lot" stays masked as what it is
    for text, token, reason in [("lot 12/03/2019", "2019", "pattern:DATE"),
                                ("Lot 410-555-9876", "9876", "pattern:PHONE"),
                                ("lot 123-45-6789", "6789", "pattern:ID")]:
        v = _verdict(rules, text)
        assert v[token] == (True, reason), text
        assert not any(r == "clinical:lot" for _, r in v.values()), text


def test_lot_cues_are_fast_on_adversarial_input(evidence: ClinicalEvidence) -> None:
    import time

    text = ("lot " + "# no. " * 2000 + "x") * 5 + " batch " + "1-" * 5000
    t0 = time.perf_counter()
    evidence.find(text)
    assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize(("text", "expected"), [
    ("COVID-19 vaccine", "COVID-19"), ("had Covid 19 in May", "Covid 19"), ("covid19 PCR", "covid19"),
    ("Moderna mRNA-1273 dose", "mRNA-1273"), ("BNT162b2", "BNT162b2"), ("SARS-CoV-2 antibody", "SARS-CoV-2"),
    ("H1N1 flu", "H1N1"), ("CYP2D6 poor metaboliser", "CYP2D6"),
])
def test_designations(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    assert (expected, "designation") in spans(evidence, text)


def test_designations_are_safe_and_a_date_still_wins(rules: RuleDeidentifier) -> None:
    a = rules.analyse("COVID-19 vaccine mRNA-1273 on 3/19/21; COVID19x is no designation")
    by_token = [(t.text, a.reasons[i], a.unsafe[i]) for i, t in enumerate(a.tokens)]
    assert ("19", "clinical:designation", False) in by_token and ("1273", "clinical:designation", False) in by_token
    # the "19" of the date stays a masked date token
    assert ("19", "pattern:DATE", True) in by_token
    assert all(r != "clinical:designation" for t, r, _ in by_token if t == "COVID19x")


@pytest.mark.parametrize(("text", "series"), [
    ("ABG 7.32/72/84/7/39. While on Bipap", "7.32/72/84/7/39"), ("abg 159/43/7.31/23/-4 98%", "159/43/7.31/23/-4"),
    ("CO/CI/SVR- 5.2/3.06/1292 ", "5.2/3.06/1292"), ("CO/CI 5.6/2.67. Nipride", "5.6/2.67"),
    ("CONTINUES ON A/C 12/650/.50/7.5 WITH", "12/650/.50/7.5"),
])
def test_a_slashed_series_with_a_decimal_is_a_measurement(evidence: ClinicalEvidence, text: str, series: str) -> None:
    assert (series, "analyte") in spans(evidence, text)


@pytest.mark.parametrize("text", ["11/21.93 \nneuro: pt alert", "seen 3.12/2020 in clinic", "C/O 5.6/67.", "on 12/3/2020",
                                  "7.28-67-128 drawn", "code 12/34/56"])
def test_dates_and_series_without_a_decimal_are_no_measured_series(evidence: ClinicalEvidence, text: str) -> None:
    assert not any("/" in t and kind == "analyte" for t, kind in spans(evidence, text))


@pytest.mark.parametrize(("text", "value"), [
    ("Cardiac: nsr in the 90's with rare pvc's", "90's"), ("SR IN THE 90'S, AFEBRILE", "90'S"),
    ("Sat's in the 90's. ABG WNL", "90's"), ("sbp's in the 110's, while on nitro", "110's"),
    ("systolic have been in the 90's, diastolic", "90's"), ("HR MAINTAINED IN THE 120's.", "120's"),
    ("SB 50s with no ectopy", "50s"),
])
def test_rhythms_phases_and_plurals_take_their_values(evidence: ClinicalEvidence, text: str, value: str) -> None:
    number = value.rstrip("'sS")  # the apostrophe's "s" may stay outside the value
    assert any(number in t and t.endswith((number, value)) for t, kind in spans(evidence, text) if kind == "analyte")


def test_a_rhythm_in_the_nineties_is_no_age(rules: RuleDeidentifier) -> None:
    text = "Cardiac: nsr in the 90's to low 100's. Pt in the 90s per son."
    a = rules.analyse(text)
    by_text = {(t.text, t.start): (r, u) for t, r, u in zip(a.tokens, a.reasons, a.unsafe, strict=True)}
    assert by_text[("90", text.index("90"))] == ("clinical:analyte", False)
    # the patient in the nineties stays an age
    assert by_text[("90s", text.rindex("90s"))][1]


@pytest.mark.parametrize(("text", "pair"), [("10:55 98/59 59 16 Sitting", "98/59"),
                                            ("pressure dropped, 187/95 then", "187/95"), ("was 140 / 90", "140 / 90")])
def test_a_blood_pressure_pair_needs_no_cue(evidence: ClinicalEvidence, text: str, pair: str) -> None:
    assert (pair, "analyte") in spans(evidence, text)


@pytest.mark.parametrize("text", ["seen 12/25", "on 10/30/2020", "ratio 60/80", "code 99/3", "dose 1/2",
                                  "ref 270/95", "v2.98/59", "on 98/59/12"])
def test_no_blood_pressure_where_a_date_or_other_ratio_may_be(evidence: ClinicalEvidence, text: str) -> None:
    assert not any("/" in t and kind == "analyte" for t, kind in spans(evidence, text))


@pytest.mark.parametrize("text", ["I live at Studio 19k, Elizabeth Dam", "STRETFORD KA0 7BS. THE PATIENT"])
def test_a_short_analyte_glued_to_a_number_is_a_code(evidence: ClinicalEvidence, text: str) -> None:
    assert not any(any(ch.isdigit() for ch in t) for t, _ in spans(evidence, text))


@pytest.mark.parametrize(("text", "value"), [
    ("her troponin came back at 5.2 and", "5.2"), ("keep sbp<130. pain", "130"), ("maintain maps >60.", "60"),
    ("bp btwn 120-130. ok", "120-130"), ("GLUCOSES 170'S TO 190'S", "170"), ("HCT down from 30 > 28", "30"),
    ("5 peep and 40% FiO2", "5"),
])
def test_more_ways_to_give_an_analyte_its_value(evidence: ClinicalEvidence, text: str, value: str) -> None:
    assert any(value in t for t, kind in spans(evidence, text) if kind == "analyte")


@pytest.mark.parametrize(("text", "value"), [
    ("SBP in the 150s to 190s", "150s"), ("HR in the 100s overnight", "100s"), ("RR in the 20s", "20s"),
    ("Glucose in the 200's", "200"), ("BP has been in the 90s", "90s"), ("BP stable in the 90s", "90s"),
    ("HR mostly in the 100s", "100s"), ("sbp still in the 150s", "150s"),
    # a position within the decade ("mid", "upper"; hyphenated or not)
    ("SATs in the mid 90s today", "90s"), ("sats in the mid-90s", "90s"), ("HR in the upper 80s", "80s"),
    ("HR in the low-100s", "100s"),
])
def test_a_decade_after_a_measurement_is_its_value_not_an_age(rules: RuleDeidentifier, text: str, value: str) -> None:
    # "in the 100s" after a vital sign is its range: shown, not read as an age over 89 and replaced
    unsafe, reason = _verdict(rules, text)[value]
    assert not unsafe and reason.startswith("clinical:")


@pytest.mark.parametrize(("text", "value"), [
    ("A woman in her 90s fell", "90s"), ("Pt in the 90s, lives alone", "90s"), ("HR stable. He is in his 100s", "100s"),
    ("a patient in the nineties", "nineties"), ("She has been in the 90s", "90s"),
    ("Pt stable in the 90s", "90s"), ("He is mostly in the 90s", "90s"),
    ("a woman in her mid 90s", "90s"), ("Pt in the mid 90s", "90s"), ("she is in the mid-90s", "90s"),
])
def test_a_decade_without_its_measurement_stays_an_age(rules: RuleDeidentifier, text: str, value: str) -> None:
    # a person's decade, "Pt" (prothrombin time, or the patient), or no measurement linked before it
    unsafe, reason = _verdict(rules, text)[value]
    assert unsafe and reason == "pattern:AGE"


@pytest.mark.parametrize(("text", "values"), [
    ("K remained 3.2 today", ["3", "2"]), ("HR running 110-120", ["110", "120"]),
    ("sats ranging 88-92%", ["88", "92"]), ("Na has been at 129", ["129"]),
])
def test_an_analyte_keeps_its_value_across_a_verb_of_duration(rules: RuleDeidentifier, text: str,
                                                              values: list[str]) -> None:
    v = _verdict(rules, text)
    for value in values:
        assert v[value] == (False, "clinical:analyte"), value
    # a date after the same verbs is still a date, and a titled name is no analyte
    assert _verdict(rules, "HR has been 3/4 since")["3"][0] is True


@pytest.mark.parametrize(("text", "values"), [
    ("CO 3.7, CI 2.42 this am", ["3", "42"]), ("PCWP 22, CVP 21", ["22", "21"]), ("ICP 12 with clear CSF", ["12"]),
    ("metab: gluc 162 on admission", ["162"]), ("SvO2 64%", ["64"]), ("wedge 18", ["18"]),
])
def test_haemodynamic_and_neurological_values_are_kept(rules: RuleDeidentifier, text: str, values: list[str]) -> None:
    v = _verdict(rules, text)
    for value in values:
        assert v[value] == (False, "clinical:analyte"), value
    # a range that reads as a date ("ICP 6-7": June 7?) is still not trusted as a value
    assert _verdict(rules, "ICP 6-7 with clear CSF")["6"][0] is True


@pytest.mark.parametrize(("text", "expected"), [
    ("developed a fever of 39.2 C.", "39.2 C"), ("T 38.5C on arrival", "38.5C"), ("peaked at 101.3 F", "101.3 F"),
    ("fever 39 C overnight", "39 C"), ("temp rose to 38 C", "38 C"),
])
def test_body_temperatures_with_a_bare_scale_letter(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    assert (expected, "quantity") in spans(evidence, text)


@pytest.mark.parametrize("text", [
    "Room 40 C",          # no decimal and no temperature word: a room and a letter
    "bed 12 C",           # outside a body's range
    "fever of 55.0 C",    # outside a body's range
    "T 120.5 F",          # outside a body's range in Fahrenheit
])
def test_a_scale_letter_needs_a_body_temperature(evidence: ClinicalEvidence, text: str) -> None:
    assert not {s for s in spans(evidence, text) if s[0].endswith(("C", "F"))}


@pytest.mark.parametrize(("text", "expected", "kind"), [
    ("The Naranjo score was 7.", "score was 7", "score"),
    ("PHQ-9 score 22, anticholinergic burden score of 9", "score of 9", "score"),
    ("type 1 diabetes", "type 1", "score"), ("CKD 3b", "CKD 3b", "score"), ("NYHA class III", "class III", "score"),
    ("Grade 3 hepatitis", "Grade 3", "score"),
    ("capecitabine (days 1-14 of a 21-day cycle)", "days 1-14", "timing"),
    ("infliximab at weeks 0, 2 and 6", "weeks 0, 2 and 6", "timing"),
    ("HbA1c 48 mmol/mol (was 36)", "(was 36)", "analyte"),
    ("INR 8.4 (target range 2.0-3.0)", "(target range 2.0-3.0)", "analyte"),
    ("creatinine 2.1 mg/dL (baseline 1.6 mg/dL)", "(baseline 1.6 mg/dL)", "analyte"),
    ("TG 3.6, HDL 0.8", "HDL 0.8", "analyte"), ("Apgars 8/9", "Apgars 8/9", "analyte"),
    ("visual acuity fell from 20/40", "visual acuity fell from 20/40", "analyte"),
    ("I lost 22 lbs", "22 lbs", "quantity"),
])
def test_scores_stages_schedules_and_reference_values(evidence: ClinicalEvidence, text: str, expected: str,
                                                       kind: str) -> None:
    assert (expected, kind) in spans(evidence, text)


@pytest.mark.parametrize("text", [
    # a slash after a score, a date in a reference value, a capitalised plural, a word after the value
    "score 3/14", "(from 3/14)", "(prev 2019)", "Weeks 3, 4", "(was 36 Smith)", "Apgars 8/14",
])
def test_no_score_or_reference_value_where_a_date_or_name_may_be(evidence: ClinicalEvidence, text: str) -> None:
    found = spans(evidence, text)
    assert not any(k in ("score", "timing") and "/" in t for t, k in found)
    assert not any(t.startswith("(") for t, _ in found)
    assert ("Weeks 3, 4", "timing") not in found and ("Apgars 8/14", "analyte") not in found


@pytest.mark.parametrize(("text", "numbers"), [
    ("co-codamol 30/500 and Allegra 180", {"180"}),
    ("losartan 2.5, lisinopril 20, metformin 1000", {"2", "5", "20", "1000"}),
])
def test_a_bare_number_after_a_drug_name_is_its_strength(rules: RuleDeidentifier, text: str, numbers: set[str]) -> None:
    v = _verdict(rules, text)
    assert {t for t, (masked, reason) in v.items() if reason == "clinical:strength" and not masked} == numbers


@pytest.mark.parametrize("text", ["lisinopril 4471298", "aspirin 3/14", "lisinopril\n20 patients", "aspirin. 20"])
def test_no_strength_for_long_numbers_dates_or_across_lines(rules: RuleDeidentifier, text: str) -> None:
    assert all(reason != "clinical:strength" for _, reason in _verdict(rules, text).values())


def test_an_unknown_word_before_a_dose_is_a_product(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "She took Microgynon 30 mcg daily and Zorvex 2.5 mg at night.")
    assert v["Microgynon"] == (False, "clinical:product") and v["Zorvex"] == (False, "clinical:product")


@pytest.mark.parametrize(("text", "word"), [
    ("Seen by Dr Smith 40 mg given", "Smith"),       # a name (title, name list) stays masked
    ("Zorvex 5 miles from home", "Zorvex"),          # no dose unit: no product
    ("Zorvex, 30 mg later", "Zorvex"),               # not straight before the dose
])
def test_no_product_without_a_dose_right_after_an_unknown_word(rules: RuleDeidentifier, text: str, word: str) -> None:
    assert _verdict(rules, text)[word][1] != "clinical:product"


@pytest.mark.parametrize(("text", "scheme"), [
    ("metformin 500 mg 1-0-1 since January", "1-0-1"),
    ("Novaminsulfon 500 mg 1-1-1-1, Torasemid 10 mg 1-0-0", "1-1-1-1"),
    ("citalopram 20 mg 0-0-1", "0-0-1"),
])
def test_dosing_schemes(evidence: ClinicalEvidence, text: str, scheme: str) -> None:
    assert (scheme, "timing") in spans(evidence, text)


@pytest.mark.parametrize(("text", "duration"), [
    ("Presenting complaint: 2/52 history of rash", "2/52"),
    ("the fever settled 3/7 later", "3/7"),
    ("cough for 2/52, no fever", "2/52"),
    ("symptoms 6/12 ago", "6/12"),
])
def test_british_duration_shorthand_is_no_date(rules: RuleDeidentifier, text: str, duration: str) -> None:
    a = rules.analyse(text)
    parts = duration.split("/")
    verdicts = {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens) if t.text in parts}
    assert verdicts and all(v == (False, "clinical:timing") for v in verdicts.values()), verdicts


@pytest.mark.parametrize("text", ["seen in clinic on 3/7 at noon", "admitted 6/12, discharged 6/14", "DOB 2/52"])
def test_the_same_shapes_elsewhere_stay_dates(rules: RuleDeidentifier, text: str) -> None:
    a = rules.analyse(text)
    assert "pattern:DATE" in a.reasons


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("June 2022: started Remicade (infliximab) 5 mg/kg at the clinic.", {"Remicade", "infliximab"}),
        ("Immunizing agent: Beyfortus (nirsevimab) 50 mg IM.", {"Beyfortus"}),
        ("Had taken dexrazoxane (Savene) 1000 mg/m2.", {"Savene"}),
        ("I'm on Lialda 4.8 g daily.", {"Lialda"}),
    ],
)
def test_a_drug_named_by_its_dose_or_its_other_name_is_a_product(
        rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    a = rules.analyse(text)
    assert {t.text for i, t in enumerate(a.tokens) if a.reasons[i] == "clinical:product"} >= names
    assert not any(a.unsafe[i] for i, t in enumerate(a.tokens) if t.text in names)


@pytest.mark.parametrize("text", ["Lyrica Fontaine (her daughter) called.", "Mr Okonkwo (warfarin user) fell.",
                                  "Dr Smith (Lasix) was paged."])
def test_a_name_beside_brackets_without_a_drug_name_in_them_is_no_product(rules: RuleDeidentifier, text: str) -> None:
    a = rules.analyse(text)
    assert "clinical:product" not in {a.reasons[i] for i, t in enumerate(a.tokens) if t.text in ("Fontaine", "Okonkwo", "Smith")}


@pytest.mark.parametrize(("text", "expected"), [
    ("delivered by SVD at 38+5 at the hospital", "38+5"), ("GA 27+3, birth weight 980 g", "27+3"),
])
def test_a_gestational_age_after_its_cue(evidence: ClinicalEvidence, text: str, expected: str) -> None:
    assert (expected, "timing") in spans(evidence, text)


def test_a_reference_range_of_decimals_after_a_value(evidence: ClinicalEvidence) -> None:
    found = spans(evidence, "WBC 1.1 (4.0-10.0) x10^9/L, Hb 9.8 (13.0-17.0) g/dL")
    assert ("(4.0-10.0)", "analyte") in found and ("(13.0-17.0)", "analyte") in found


@pytest.mark.parametrize(("text", "names"), [
    ("decades on lithium carbonate (Priadel) 400 mg nocte", {"Priadel"}),
    ("PATIENT BOUGHT COARTEM (ARTEMETHER/LUMEFANTRINE 80/480 MG) FROM A SHOP", {"COARTEM"}),
])
def test_a_brand_beside_a_drug_and_its_salt_or_a_combination_is_a_product(
        rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    a = rules.analyse(text)
    assert {t.text for i, t in enumerate(a.tokens) if a.reasons[i] == "clinical:product"} >= names


@pytest.mark.parametrize(("text", "names"), [
    ("She has no history of Bell's palsy or Graves' disease.", {"Bell", "Graves"}),
    ("Diagnosis: Stevens-Johnson syndrome. Dx Guillain-Barré syndrome.", {"Stevens", "Johnson", "Guillain", "Barré"}),
    ("direct Coombs test positive; no vesicles to suggest Ramsay Hunt syndrome", {"Coombs", "Ramsay", "Hunt"}),
    ("BLISTERS, NIKOLSKY SIGN POSITIVE", {"NIKOLSKY"}),
    # a device named after its maker: a catheter, a valve, a line, a drain
    ("cultures drawn by resident from Quinton cath. If negative", {"Quinton"}),
    ("Passy Muir valve not attempted today", {"Passy", "Muir"}),
    ("THICK WHITE.  PASSY MUIR VALVE TOLERATED FOR 30 MIN", {"PASSY", "MUIR"}),
    ("plan picc or Hickman line placement", {"Hickman"}),
    ("GU: FOLEY CATHETER DRAINING CLEAR URINE", {"FOLEY"}),
])
def test_an_eponym_before_its_condition_or_test_is_no_name(rules: RuleDeidentifier, text: str, names: set[str]) -> None:
    a = rules.analyse(text)
    verdicts = {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens) if t.text in names}
    assert set(verdicts) == names and all(v == (False, "clinical:eponym") for v in verdicts.values()), verdicts


@pytest.mark.parametrize(("text", "name"), [
    ("Mrs Bell's palsy worsened overnight.", "Bell"), ("John Parkinson's disease progressed.", "Parkinson"),
    ("Smith's test results came back.", "Smith"), ("Maria's disease has progressed.", "Maria"),
    ("John Smith test results were normal.", "John"), ("Her sister Mary's reaction was worse.", "Mary"),
    # capitals before an everyday head word ("lines", "pump", "port") stay names or places
    ("UTION CO IS HIGHER. NP CAROL ORDERED LINES D/C'D", "CAROL"), ("Martin Health Center, Short Pump, VA", "Short"),
])
def test_a_person_before_a_condition_keeps_the_name_masked(rules: RuleDeidentifier, text: str, name: str) -> None:
    a = rules.analyse(text)
    assert [a.unsafe[i] for i, t in enumerate(a.tokens) if t.text == name] == [True]


def test_an_investigational_code_named_as_a_product_is_one_in_every_mention(rules: RuleDeidentifier) -> None:
    text = ("Study of KTR-2291 in solid tumours. The subject received KTR-2291 240 mg PO BID; KTR-2291 was "
            "stopped. Blinded BRX-7710/placebo. Subject ZA-0071 at site 1042.")
    a = rules.analyse(text)
    by = {}
    for i, t in enumerate(a.tokens):
        by.setdefault(t.text, set()).add((a.unsafe[i], a.reasons[i]))
    for part in ("KTR", "2291", "BRX", "7710"):
        assert by[part] == {(False, "clinical:product")}, (part, by[part])
    assert all(u for u, _ in by["0071"]) and all(u for u, _ in by["1042"])


@pytest.mark.parametrize(("text", "word"), [
    ("carbimazole 20 mg OD for Graves' disease", "OD"), ("nitrofurantoin 50 mg nocte", "nocte"),
    ("bedaquiline 200 mg TIW", "TIW"), ("metformin 500 mg mane", "mane"),
])
def test_a_frequency_after_a_dose(rules: RuleDeidentifier, text: str, word: str) -> None:
    a = rules.analyse(text)
    assert [(a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens) if t.text == word] == [(False, "clinical:timing")]


def test_od_alone_is_no_frequency(rules: RuleDeidentifier) -> None:
    a = rules.analyse("Seen by OD yesterday")
    assert [a.reasons[i] for i, t in enumerate(a.tokens) if t.text == "OD"] != ["clinical:timing"]


@pytest.mark.parametrize(("text", "expected", "kind"), [
    # a range after a word naming a reference or target is that range, not a date
    ("INR 6.2 (target 2-3) on warfarin", "(target 2-3)", "analyte"),
    ("trough 22.4 mg/L (goal 15-20)", "(goal 15-20)", "analyte"),
    ("valproate 87 mg/L (therapeutic 50-100)", "(therapeutic 50-100)", "analyte"),
    ("potassium 6.4 mmol/L (reference 3.5-5.1)", "(reference 3.5-5.1)", "analyte"),
    # HLA alleles, the microbe's abbreviated genus, letters that name a thing
    ("HLA-B*58:01 positive", "HLA-B*58:01", "designation"), ("HLA-A*31:01 positiv", "HLA-A*31:01", "designation"),
    ("urine grew E. coli", "E. coli", "designation"), ("H. pylori eradication", "H. pylori", "designation"),
    ("Chest X-ray clear", "X-ray", "designation"), ("CHEST X-RAY NEG", "X-RAY", "designation"),
    ("given vitamin K 10 mg", "vitamin K", "designation"), ("Hep B, Hep C", "Hep B", "designation"),
    ("inferior T wave inversions", "T wave", "designation"), ("CAR-T infusion", "CAR-T", "designation"),
    ("St John's wort 300 mg", "St John's wort", "designation"), ("PCV20 and PD-L1", "PD-L1", "designation"),
    # Snellen acuity with the eye or an acuity word, titres, a change of pain score
    ("eye clinic: 20/60 OD, 20/80 OS", "20/80 OS", "analyte"),
    ("reduced visual acuity (20/60 OD, 20/80 OS)", "acuity (20/60 OD, 20/80 OS", "analyte"),
    ("Visual acuity 6/9 in both eyes", "acuity 6/9", "analyte"),
    ("ANA 1:80. Liver biopsy", "ANA 1:80", "analyte"), ("epinephrine 1:100,000", "epinephrine 1:100,000", "analyte"),
    ("Pain score 6/10 -> 3/10 after paracetamol", "Pain score 6/10 -> 3/10", "score"),
])
def test_reference_ranges_markers_letter_designations_and_acuity(evidence: ClinicalEvidence, text: str,
                                                                   expected: str, kind: str) -> None:
    assert (expected, kind) in spans(evidence, text)


@pytest.mark.parametrize("text", [
    "(target 8/10)",       # a slash: may be a date
    "(was 3-12)",          # no reference word before a date-like range
    "seen on 6/9 in clinic",  # no acuity word, no eye
    "J. Smith called",     # an initial and a name: no species
    "A. patient notes",    # a lower-case word that names no microbe
    "Mr X Ray",            # no hyphen: a name
    "type J",              # no blood or disease type letter
])
def test_no_designation_or_reference_where_a_date_or_person_may_be(evidence: ClinicalEvidence, text: str) -> None:
    assert not {(t, k) for t, k in spans(evidence, text) if k in ("designation", "analyte", "score")}


def test_a_titled_name_or_date_still_wins_over_the_new_evidence(rules: RuleDeidentifier) -> None:
    v = _verdict(rules, "Mr X Ray saw St John on 6/9. Dr T. Wave agreed.")
    assert all(v[w][0] for w in ("X", "Ray", "St", "John", "6", "9", "T", "Wave"))
