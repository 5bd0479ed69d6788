"""Words that name lists share with everyday words, read by their use (deid_core/rules/word_use.py)."""

from __future__ import annotations

import pytest

from deid_core.rules.deidentifier import RuleDeidentifier
from deid_core.thresholds import reason_family


def why(rules: RuleDeidentifier, text: str) -> dict[str, tuple[bool, str]]:
    a = rules.analyse(text)
    return {t.text: (a.unsafe[i], a.reasons[i]) for i, t in enumerate(a.tokens)}


@pytest.mark.parametrize(("text", "word"), [
    # relatives in a list, before "in law", after a preposition, in capitals or lower case
    ("SOCIAL=SON & DAUGHTER. VISITED", "SON"),
    ("SOCIAL- WIFE AND NEICE IN TO VISIT TODAY.", "NEICE"),
    ("FAMILY (WIFE/DAUGHTER/SON) IS PRESENT", "SON"),
    ("Son in law called last night", "Son"),
    ("SON-IN-LAW VISITED", "LAW"),
    ("REMAINS FULL CODE (PER SON). PT", "SON"),
    ("DISP: GRAND DAUGHTER AND HUSBAND WILL CALL", "GRAND"),
    # a credential after a name or after a word that introduces a person
    ("Muriele William RN", "RN"),
    ("Joyce Jacobson, RN", "RN"),
    ("updated by RN and Sub I.", "RN"),
    ("being followed by Dorothy Joy, MSW. Wife called", "MSW"),
    # a contraction, the modal "may", the infarction, colours, race and sex words, the time of day
    ("I DON'T WANT TO LAY IN THE BED.", "DON"),
    ("PT MAY BE TRANSFERED WHEN BED AVAILABLE", "MAY"),
    ("PMH: CAD, S/P MI 1992; LCX PTCA", "MI"),
    ("SOCIAL:RESIDES NH SINCE RECENT MI. WIDOWER", "MI"),
    ("SX-THICK WHITE SECRETIONS.", "WHITE"),
    ("89 YO BLACK FEMALE ADMITTED FROM THE EW", "BLACK"),
    ("THIS IS A 74 YR OLD MALE TX'D FROM", "MALE"),
    ("VENT WEANING DEFERRED UNTIL A.M.", "M"),
    ("will reeval. in a.m. then", "m"),
])
def test_words_the_name_lists_share_that_are_released_by_their_use(rules: RuleDeidentifier, text: str, word: str) -> None:
    masked, reason = why(rules, text)[word]
    assert not masked, (text, reason)


@pytest.mark.parametrize(("text", "word"), [
    ("Son Nguyen called the unit", "Son"),             # a surname before a given name... or a given name's
    ("Don Smith came in", "Don"),                      # no contraction
    ("in May 2020 she", "May"),                        # the month
    ("KIM MI CALLED THE UNIT", "MI"),                  # a name after a given name
    ("LINDSEY WHITE CALLED TO BEDSIDE", "WHITE"),      # a surname after a given name
    ("Pharmacy (Arnold, Long and Brown) informed", "Brown"),
    ("Patient A.M., 45 y, developed a rash", "M"),     # initials, no time of day
    ("Patient RN developed a rash", "RN"),             # initials after no name and no such word
])
def test_the_same_words_stay_masked_as_names(rules: RuleDeidentifier, text: str, word: str) -> None:
    assert why(rules, text)[word][0], text


@pytest.mark.parametrize(("text", "word", "reason"), [
    ("son and grandson in to visit.", "grandson", "relation"),
    ("SOCIAL: MOTHER, AUNTS IN TO VISIT", "AUNTS", "relation"),
    # beside a name the word keeps the common safe family and the network's judgement
    ("RPTR COUSIN JACQUES TEL 0173108146", "COUSIN", "safe"),
    ("My pharmacist at Thomas and Sons said", "Sons", "safe"),
])
def test_relatives_take_their_own_family(rules: RuleDeidentifier, text: str, word: str, reason: str) -> None:
    assert why(rules, text)[word] == (False, reason)
    assert reason_family(reason, False) == reason


