"""The rule-based inverse de-identifier: what comes back and what stays masked."""

from __future__ import annotations

import pytest

from deid_core.categories import SAFE_LABEL
from deid_core.detectors import FailClosed, RulesDetector
from deid_core.dictionaries.flags import Lex
from deid_core.render import render_masked
from deid_core.results import mask_everything
from deid_core.rules.deidentifier import RuleDeidentifier
from deid_core.rules.features import FEATURE_NAMES
from deid_core.thresholds import reason_family


def verdict(rules: RuleDeidentifier, text: str) -> dict[str, tuple[bool, str]]:
    a = rules.analyse(text)
    return {t.text: (a.unsafe[i], a.labels[i]) for i, t in enumerate(a.tokens)}


NARRATIVE = (
    "Patient J.S., a 67-year-old man from Baltimore, was seen by Dr. Tyro at Sacred Heart Hospital "
    "on 12-JAN-2014. He received ibuprofen 400 mg for the urticaria."
)


def test_inverse_rules_on_a_case_narrative(rules: RuleDeidentifier) -> None:
    v = verdict(rules, NARRATIVE)
    for masked, label in [
        ("J", None), ("S", None), ("67", "AGE"), ("Baltimore", "LOCATION"), ("Tyro", "NAME"),
        ("Sacred", "LOCATION"), ("Heart", "LOCATION"), ("12", "DATE"), ("JAN", "DATE"), ("2014", "DATE"),
    ]:
        assert v[masked][0], masked
        if label:
            assert v[masked][1] == label, masked
    for kept in ["Patient", "a", "year", "old", "from", "was", "seen", "by", "at", "Hospital",
                 "on", "He", "received", "ibuprofen", "mg", "for", "the", "urticaria"]:
        assert v[kept] == (False, SAFE_LABEL), kept
    # a dose is a clinical value (deid_core/rules/clinical.py), not an identifier
    assert v["400"] == (False, SAFE_LABEL)


def test_unsafe_lists_overrule_safe_lists(rules: RuleDeidentifier) -> None:
    # "May" and "Monday" are English words and a month/weekday; "Smith" is a word and a surname
    v = verdict(rules, "On Monday, May 5, Smith called.")
    assert v["Monday"] == (True, "DATE")
    assert v["May"][0] and v["Smith"] == (True, "NAME")
    assert v["called"] == (False, SAFE_LABEL)


def test_unknown_words_and_digits_are_masked(rules: RuleDeidentifier) -> None:
    a = rules.analyse("xqzvbl took 5b")
    reasons = dict(zip([t.text for t in a.tokens], a.reasons))
    assert reasons == {"xqzvbl": "unknown", "took": "safe", "5b": "digit"}
    # with a unit, the same shape is a dose (deid_core/rules/clinical.py)
    assert rules.analyse("took 5mg").reasons == ["safe", "clinical:quantity"]
    # a word a medical, drug or MedDRA list knows has its own threshold family
    assert rules.analyse("took aspirin for nausea").reasons == ["safe", "drug", "safe", "medical"]


def test_single_letters_are_initials_except_the_article(rules: RuleDeidentifier) -> None:
    v = verdict(rules, "a patient K reported")
    assert v["a"] == (False, SAFE_LABEL)
    assert v["K"][0]


@pytest.mark.parametrize(("text", "index"), [
    ("A 45-year-old woman received", 0), ("An 80-year-old man", 0), ("reported by a pharmacist", 2),
    ("PT IS A 69 YR OLD FEMALE", 2), ("AN ELDERLY MAN", 0), ("a rash appeared", 0),
])
def test_the_article_before_a_number_or_a_safe_word_has_its_own_reason(
        rules: RuleDeidentifier, text: str, index: int) -> None:
    a = rules.analyse(text)
    assert (a.reasons[index], a.unsafe[index]) == ("article", False)
    assert reason_family("article", False) == "article"


@pytest.mark.parametrize(("text", "index"), [
    ("follow up with benjamin a seiler", 3),  # a middle initial before a surname: no article
    ("josé a madeira called", 1),             # before a place-list word
    ("Saunders A and colleagues", 1),         # before a conjunction
    ("seen by A. Lee", 2),                    # an initial with its full stop
])
def test_initials_that_look_like_articles_keep_the_network_check(rules: RuleDeidentifier, text: str, index: int) -> None:
    assert rules.analyse(text).reasons[index] != "article"


@pytest.mark.parametrize(("text", "letters"), [
    ("O: 58 YEAR OLD FEMALE", ["O"]), ("Plan. P: continue", ["P"]), ("I&O even, A&O x3", ["I", "O", "A", "O"]),
    ("A-line placed, T-cell count", ["A", "T"]), ("K+ 3.5 and Mg+ given", ["K"]),
    # a SOAP header with a hyphen at a line's start; sides compared; "A & O" with spaces
    ("S- resting quietly\nO- afebrile", ["S", "O"]), ('S-"help me out of here"', ["S"]),
    ("breath sounds R>L, weakness L TO R", ["R", "L", "L", "R"]), ("pt A & O x3, I & O even", ["A", "O", "I", "O"]),
    # potassium beside another electrolyte or before its repletion; "w" for "with" before its word
    ("REPLACE K & CA", ["K"]), ("given Mg, Ca and K", ["K"]), ("monitor K level", ["K"]), ("k repletion", ["k"]),
    ("RETURNED W IABP", ["W"]), ("pt w/crackles", ["w"]), ("PT W/ACUTE MI", ["W"]),
])
def test_letters_of_clinical_notation_are_no_initials(rules: RuleDeidentifier, text: str, letters: list[str]) -> None:
    a = rules.analyse(text)
    got = [t.text for t, u in zip(a.tokens, a.unsafe, strict=True) if len(t.text) == 1 and t.text.isalpha() and not u]
    assert got == letters


@pytest.mark.parametrize(("text", "letter"), [
    ("MET S. DOMINICO", "S"), ("J SMITH ORDERED", "J"), ("AT&T called", "T"), ("B&SR shop", "B"),
    ("CARAFATE-W. HALVERSON AWARE", "W"), ("per d halverson", "d"), ("U Nebraska", "U"),
    # hyphenated patient initials, a letter before a name, an initial before a conjunction
    ("PT J-G 83 M. STARTED", "J"), ("PT J-G 83 M. STARTED", "G"), ("The patient, B-R, was treated", "B"),
    ("seen by J-Smith", "J"), ("Saunders A and colleagues", "A"), ("the A Neuro Group", "A"), ("R Foley placed", "R"),
    # a hyphen after a letter mid-line, "w" before a name, "K" before a name or with a full stop
    ("seen by S- Lee", "S"), ("spoke W Baker", "W"), ("PER K. HALVERSON", "K"), ("per K Smith", "K"),
    ("per W. Jones re: meds", "W"), ("J & O called", "J"), ("per PT K. Smith", "K"),
])
def test_initials_stay_unsafe(rules: RuleDeidentifier, text: str, letter: str) -> None:
    a = rules.analyse(text)
    assert all(u for t, u in zip(a.tokens, a.unsafe, strict=True) if t.text == letter)


def test_multi_word_places_match_only_as_phrases(rules: RuleDeidentifier) -> None:
    text = "She moved to Broken Arrow after a broken arm."
    a = rules.analyse(text)
    words = [t.text for t in a.tokens]
    assert a.unsafe[words.index("Broken")] and a.unsafe[words.index("Arrow")]
    assert a.labels[words.index("Arrow")] == "LOCATION"
    assert not a.unsafe[words.index("broken")] and not a.unsafe[words.index("arm")]


def test_holiday_phrases(rules: RuleDeidentifier) -> None:
    a = rules.analyse("Rash began on Labor Day; her labor was induced.")
    words = [t.text for t in a.tokens]
    assert a.unsafe[words.index("Labor")] and a.unsafe[words.index("Day")]
    assert a.labels[words.index("Labor")] == "DATE"
    assert not a.unsafe[words.index("labor")] and not a.unsafe[words.index("induced")]


def test_institution_names_made_of_everyday_words(rules: RuleDeidentifier) -> None:
    a = rules.analyse("She went to Sacred Heart, then to Memorial; her heart rate was a sacred ritual.")
    words = [t.text for t in a.tokens]
    assert a.unsafe[words.index("Sacred")] and a.unsafe[words.index("Heart")]
    assert a.labels[words.index("Sacred")] == "LOCATION"
    assert a.unsafe[words.index("Memorial")]
    assert not a.unsafe[words.index("heart")] and not a.unsafe[words.index("sacred")]


def test_state_codes_only_in_place_context(rules: RuleDeidentifier) -> None:
    a = rules.analyse("Moved from Towson, MD last year. MD notified, taken to OR. Abdomen soft, CT clear.")
    w = [(t.text, a.unsafe[i]) for i, t in enumerate(a.tokens)]
    assert ("CT", False) in w  # the scan, not Connecticut
    assert w[[x for x, _ in w].index("MD")] == ("MD", True)  # "Towson, MD"
    assert ("OR", False) in w
    assert ("notified", False) in w
    second_md = [i for i, (x, _) in enumerate(w) if x == "MD"][1]
    assert w[second_md] == ("MD", False)  # the physician


def test_top_level_domain_only_after_a_dot(rules: RuleDeidentifier) -> None:
    a = rules.analyse("see the.org site; org chart")
    words = [t.text for t in a.tokens]
    assert a.unsafe[words.index("org")]
    assert not a.unsafe[len(words) - 2]  # "org" in "org chart"


def test_stopwords_are_never_names_or_places(rules: RuleDeidentifier) -> None:
    # census and GeoNames list "To", "On" and "Of" as surnames and a city
    v = verdict(rules, "Sent to the unit on arrival of the team.")
    assert all(not masked for masked, _ in v.values())


def test_scores_follow_the_reason(rules: RuleDeidentifier, cfg) -> None:
    a = rules.analyse("Seen by Dr. Tyro on 12-JAN-2014 xqzvbl")
    by_word = {t.text: (a.reasons[i], a.scores[i]) for i, t in enumerate(a.tokens)}
    assert by_word["Tyro"] == ("context:titled_name", cfg.rules.scores.context)
    assert by_word["2014"] == ("pattern:DATE", cfg.rules.scores.pattern)
    assert by_word["xqzvbl"] == ("unknown", cfg.rules.scores.unknown)
    assert by_word["Seen"] == ("safe", 0.0)


def test_fifteen_features_in_order(rules: RuleDeidentifier) -> None:
    a = rules.analyse("Went to Boston on Monday. See www.x.com or 5th Street, 12 three")
    feats = {t.text: dict(zip(FEATURE_NAMES, a.features()[i])) for i, t in enumerate(a.tokens)}
    assert len(FEATURE_NAMES) == 15
    assert feats["Boston"]["is_possibly_city"] and feats["Boston"]["has_capital_beginning"]
    assert feats["Went"]["is_sentence_beginning"] and feats["See"]["is_sentence_beginning"]
    assert not feats["to"]["is_sentence_beginning"]
    assert feats["Monday"]["is_weekday"] and feats["Street"]["is_street"]
    assert feats["com"]["is_top_level_domain"] and not feats["or"]["is_top_level_domain"]
    assert feats["12"]["is_digit"] and feats["5th"]["contains_digit"] and not feats["5th"]["is_digit"]
    assert feats["three"]["is_written_out_number"] and feats["x"]["is_single_letter"]
    assert feats["to"]["is_common_word"]


def test_medical_and_name_features(rules: RuleDeidentifier) -> None:
    a = rules.analyse("Smith took ibuprofen at Christmas")
    f = {t.text: dict(zip(FEATURE_NAMES, a.features()[i])) for i, t in enumerate(a.tokens)}
    assert f["Smith"]["is_possibly_name"]
    assert f["ibuprofen"]["is_medical_term"]
    assert f["Christmas"]["is_holiday"]


def test_effective_flags_include_phrase_flags(rules: RuleDeidentifier) -> None:
    a = rules.analyse("in New York")
    assert a.flags[1] & Lex.STATE and a.flags[2] & Lex.STATE  # New York (state) is a phrase


def test_render_uses_tags_and_placeholder(rules: RuleDeidentifier, cfg) -> None:
    text = "Dr. Tyro saw xqzvbl on 12-JAN-2014."
    out = render_masked(text, rules.analyse(text).masked(), cfg.output)
    assert "Tyro" not in out and "xqzvbl" not in out and "2014" not in out
    assert "[NAME]" in out and "[PHI]" in out and "[DATE]-[DATE]-[DATE]" in out


def test_fail_closed_masks_everything_on_error(rules: RuleDeidentifier) -> None:
    class Boom(RulesDetector):
        def detect(self, texts):
            if any("boom" in t for t in texts):
                raise RuntimeError("model exploded on Mrs Quackenbush")
            return super().detect(texts)

    det = FailClosed(Boom(rules))
    texts = ["Ann took aspirin", "boom Quackenbush aspirin"]
    out = det.detect(texts)
    assert det.failures == 1
    assert out[1] == mask_everything(texts[1])
    assert all(m.label == "PHI" for m in out[1]) and len(out[1]) == 3
    assert out[0] == rules.analyse(texts[0]).masked()  # the good text is unaffected


def test_empty_text(rules: RuleDeidentifier) -> None:
    a = rules.analyse("")
    assert a.tokens == [] and a.masked() == [] and a.features() == []


def test_configured_phone_regions_reach_the_detector(rules: RuleDeidentifier, cfg) -> None:
    assert rules.patterns._phones.regions == tuple(r.upper() for r in cfg.rules.phone_regions)
    custom = RuleDeidentifier(rules.artifact, cfg.rules.model_copy(update={"phone_regions": ["NO"]}))
    assert custom.patterns._phones.regions == ("NO",)


@pytest.mark.parametrize(
    ("text", "letters", "reason"),
    [
        ("H.O. AWARE. RETURNED FROM O.R. AND A.M.", "HOORAM", "single_letter:dotted_pair"),
        ("seen by the m.d. this morning", "md", "single_letter:dotted_pair"),
        ("Initials C.S.L. recorded", "CSL", "single_letter"),  # three letters: a person's initials
        ("PT K.R 51M", "KR", "single_letter"),  # "kr" spells no safe-list word
    ],
)
def test_a_dotted_abbreviation_is_masked_with_its_own_family(
    rules: RuleDeidentifier, text: str, letters: str, reason: str
) -> None:
    """Two same-case letters joined by full stops that spell a safe-list word: masked, family "dotted_pair"."""
    a = rules.analyse(text)
    got = [(t.text, a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens) if len(t.text) == 1 and t.text.isalpha()]
    assert [g[0] for g in got] == list(letters)
    assert all(unsafe and r == reason for _, unsafe, r in got)
    if reason.endswith("dotted_pair"):
        assert reason_family(reason, True) == "dotted_pair"


def test_a_title_is_an_ordinary_word_and_its_name_stays_masked(rules: RuleDeidentifier) -> None:
    """A title is never inside the name it opens; "Mrs", "Drs", "Sra" no list knows are no unknown words."""
    a = rules.analyse("Mrs. Haas stated it; Drs Ferullo and Saeed in; Sra. Garcia called.")
    v = {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens)}
    assert v["Mrs"] == (False, "safe") and v["Drs"] == (False, "safe") and v["Sra"] == (False, "safe")
    assert v["Haas"][0] and v["Ferullo"][0] and v["Garcia"][0]


def test_a_kinship_word_after_a_possessive_is_a_relation_not_a_name(rules: RuleDeidentifier) -> None:
    """"Son" is on a name list; "HER SON", "PT'S SON", "a friend" are relations. Alone, or opening a name
    ("Son Nguyen"), it stays masked, and the relative's name after it stays masked."""
    a = rules.analyse("HER SON WILLIAM WENT BACK. PT'S SON CALLED. SON IN TO VISIT. Son Nguyen came.")
    got = [(t.text, a.unsafe[i]) for i, t in enumerate(a.tokens) if t.text in ("SON", "Son", "WILLIAM", "Nguyen")]
    assert got == [("SON", False), ("WILLIAM", True), ("SON", False), ("SON", True), ("Son", True), ("Nguyen", True)]
    # before the relative's name, not written as a name itself: "SON WILLIAM", "son tom"
    a = rules.analyse("SON WILLIAM WENT BACK; son tom baker called; Son William visited.")
    got = [(t.text, a.unsafe[i]) for i, t in enumerate(a.tokens) if t.lower in ("son", "william", "tom")]
    assert got == [("SON", False), ("WILLIAM", True), ("son", False), ("tom", True), ("Son", True), ("William", True)]


def why(rules: RuleDeidentifier, text: str) -> dict[str, tuple[bool, str]]:
    a = rules.analyse(text)
    return {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens)}


@pytest.mark.parametrize(("text", "values"), [
    ("CO/CI 4.6-5.2/2.45-2.77 SVR 954-1183; RECEIVED", ("954", "1183")),
    ("WIDE COMPLEX TACHYCARDIA, WITH HR 100-1112. EKG", ("100", "1112")),
    ("SETTINGS-PCV, FIO2 100%, TV 930-1000, RR 16", ("930", "1000")),
])
def test_a_range_after_a_measurement_is_no_phone_number(rules: RuleDeidentifier, text: str, values: tuple[str, str]) -> None:
    w = why(rules, text)
    for v in values:
        assert not w[v][1].startswith("pattern"), (text, w[v])


@pytest.mark.parametrize("text", ["cell 555-0131, wants a call", "Ca 555-1234 is her number", "call HR at 555-1234 today"])
def test_phone_numbers_after_other_words_stay(rules: RuleDeidentifier, text: str) -> None:
    assert "pattern:PHONE" in {r for _, r in why(rules, text).values()}, text
