"""Letter case as evidence (deid_core/rules/case_profile.py): the mark, and where the rules set it."""

from __future__ import annotations

import pytest

from deid_core.config import CaseProfileConfig, DeidConfig
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.rules.case_profile import case_is_evidence, listed_reason, lower_case_reason, upper_case_reason
from deid_core.rules.deidentifier import RuleDeidentifier
from deid_core.text.tokenize import tokenize
from deid_core.thresholds import reason_family

PROFILE = CaseProfileConfig()
MIXED = "Pt was trnsfrd to the unit after Dr. Halverson saw her. Brown sputum, afebrile, plan reviewed."


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        (MIXED, True),
        (MIXED.upper(), False),  # all capitals: a name looks like every other word
        (MIXED.lower(), False),  # all lower case: the same
        ("", False),
        ("40 mg 2 x 3", False),  # no words
    ],
)
def test_case_is_evidence_only_in_mixed_case(text: str, evidence: bool) -> None:
    assert case_is_evidence(tokenize(text), PROFILE) is evidence


def test_thresholds_of_the_profile_decide() -> None:
    toks = tokenize(MIXED)
    assert not case_is_evidence(toks, CaseProfileConfig(min_title_share=0.9))
    assert not case_is_evidence(toks, CaseProfileConfig(min_lower_share=0.99))


@pytest.mark.parametrize(
    ("reason", "word", "marked"),
    [
        ("unknown", "trnsfrd", "unknown:lower_case"),
        ("unsafe_list", "brown", "unsafe_list:lower_case"),
        ("single_letter", "s", "single_letter:lower_case"),
        ("unsafe_list", "Brown", "unsafe_list"),  # capitalised: no mark
        ("context:titled_name", "halverson", "context:titled_name"),  # context is evidence of its own
        ("pattern:DATE", "march", "pattern:DATE"),
    ],
)
def test_mark_only_for_lower_case_words_masked_for_themselves(reason: str, word: str, marked: str) -> None:
    assert lower_case_reason(reason, tokenize(word)[0]) == marked


def test_marked_reasons_form_their_own_family() -> None:
    assert reason_family("unknown:lower_case", True) == "lower_case"
    assert reason_family("single_letter:lower_case", True) == "lower_case"
    assert reason_family("unknown", True) == "unknown"


def _reasons(rules: RuleDeidentifier, text: str) -> dict[str, str]:
    a = rules.analyse(text)
    return {t.text: a.reasons[i] for i, t in enumerate(a.tokens) if a.unsafe[i]}


def test_rules_mark_lower_case_words_of_a_mixed_case_note(rules: RuleDeidentifier) -> None:
    r = _reasons(rules, MIXED)
    assert r["trnsfrd"] == "unknown:lower_case"
    # still masked by the rules, and a titled name keeps its context reason
    assert r["Halverson"].startswith("context:")
    r_caps = _reasons(rules, MIXED.upper())
    assert r_caps["TRNSFRD"] == "unknown"


def test_switched_off_by_configuration(cfg: DeidConfig, artifact: DictionaryArtifact) -> None:
    plain = RuleDeidentifier(artifact, cfg.rules.model_copy(update={"case_profile": None}))
    assert _reasons(plain, MIXED)["trnsfrd"] == "unknown"


def test_network_inputs_do_not_change(cfg: DeidConfig, artifact: DictionaryArtifact, rules: RuleDeidentifier) -> None:
    """The mark is for the threshold search only: the network reads the reason before the colon."""
    import numpy as np

    from deid_core.deep.features import extra_features

    plain = RuleDeidentifier(artifact, cfg.rules.model_copy(update={"case_profile": None}))
    marked, unmarked = rules.analyse(MIXED), plain.analyse(MIXED)
    assert marked.reasons != unmarked.reasons
    for categories in (False, True):
        np.testing.assert_array_equal(
            extra_features(marked, frozenset({"dr"}), rules=True, categories=categories),
            extra_features(unmarked, frozenset({"dr"}), rules=True, categories=categories),
        )


@pytest.mark.parametrize(
    ("base", "word", "evidence", "reason"),
    [
        ("medical", "melanoma", True, "medical:lower_case"),
        ("medical", "Melanoma", True, "medical"),  # capitalised: could open an organisation's name
        ("medical", "ank", True, "medical"),  # short words include initials and names ("ank" was PHI on PhysioNet dev)
        ("medical", "melanoma", False, "medical"),  # case says nothing in this note
        ("drug", "sacubitril", True, "drug:lower_case"),
        ("drug", "Lyrica", True, "drug"),  # a brand, and a first name
        ("drug", "sacubitril", False, "drug"),
    ],
)
def test_long_lower_case_listed_words_of_a_mixed_case_note(base: str, word: str, evidence: bool, reason: str) -> None:
    assert listed_reason(base, tokenize(word)[0], evidence) == reason


@pytest.mark.parametrize(("reason", "family"), [("medical:lower_case", "medical_lower_case"),
                                                 ("drug:lower_case", "drug_lower_case")])
def test_lower_case_listed_words_have_a_safe_family_with_a_policy_threshold(
        cfg: DeidConfig, reason: str, family: str) -> None:
    assert reason_family(reason, False) == family
    assert reason_family(reason.split(":")[0], False) == reason.split(":")[0]
    # released unless the network is fairly sure of PHI (conf/deid.yaml: policy, not tuned)
    assert cfg.deep.combiner.by_reason[family] == 0.2
    assert reason_family("unknown:lower_case", True) == "lower_case"  # a masked reason keeps its own family


def test_rules_give_the_lower_case_mark_to_safe_medical_words(rules: RuleDeidentifier) -> None:
    text = "Mr. Halverson has metastatic melanoma and was seen in Clinic today. Melanoma stable."
    a = rules.analyse(text)
    r = {t.text: a.reasons[i] for i, t in enumerate(a.tokens)}
    assert r["melanoma"] == "medical:lower_case"
    assert r["Melanoma"] == "medical"
    caps = rules.analyse(text.upper())
    assert "medical:lower_case" not in caps.reasons


def test_rules_give_the_lower_case_mark_to_safe_drug_names(rules: RuleDeidentifier) -> None:
    text = "Mrs. Okafor was started on sacubitril/valsartan by Dr. Patel; Entresto was stopped."
    a = rules.analyse(text)
    r = {t.text: a.reasons[i] for i, t in enumerate(a.tokens)}
    assert r["sacubitril"] == "drug:lower_case" and r["valsartan"] == "drug:lower_case"
    assert r["Entresto"] == "drug"


@pytest.mark.parametrize(
    ("reason", "word", "safe_listed", "marked"),
    [
        ("unsafe_list", "ED", True, "unsafe_list:upper_case"),
        ("unsafe_list", "GERD", True, "unsafe_list:upper_case"),
        ("unsafe_list", "ED", False, "unsafe_list"),  # a name or place no safe list has: no evidence
        ("unsafe_list", "Ed", True, "unsafe_list"),  # title case is how names are written
        ("unsafe_list", "WILLIAMS", True, "unsafe_list"),  # longer than an abbreviation
        ("unsafe_list", "O", True, "unsafe_list"),  # a lone letter
        ("unknown", "OSH", True, "unknown"),  # only list words: an unknown word has no safe reading
        ("context:titled_name", "ED", True, "context:titled_name"),  # a context match keeps its reason
    ],
)
def test_upper_case_mark_only_for_short_capital_words_both_lists_hold(
    reason: str, word: str, safe_listed: bool, marked: str
) -> None:
    assert upper_case_reason(reason, tokenize(word)[0], safe_listed) == marked


def test_rules_mark_capital_abbreviations_of_a_mixed_case_note(rules: RuleDeidentifier) -> None:
    text = "Patient went to the ED with chest pain. History of MI, transferred from OSH. Seen by Dr. Halverson."
    r = _reasons(rules, text)
    assert r["ED"] == r["OSH"] == "unsafe_list:upper_case"
    # "History of MI": the infarction after a history word, safe in any case (tests/rules/test_deidentifier.py)
    assert "MI" not in r
    assert reason_family("unsafe_list:upper_case", True) == "upper_case"
    # in a note written all in capitals the capitals say nothing
    assert _reasons(rules, text.upper())["ED"] == "unsafe_list"
    # a month's or weekday's name keeps the list words' family, though "DEC" is also "decreased"
    calendar = _reasons(rules, "Plan reviewed in DEC with the family and Dr. Halverson, seen in the ED.")
    assert calendar["DEC"] == "unsafe_list" and calendar["ED"] == "unsafe_list:upper_case"


def test_the_upper_case_family_has_a_ceiling_below_the_list_words(cfg: DeidConfig) -> None:
    from deid_core.detectors import thresholds_for
    from deid_core.thresholds import Thresholds

    t = thresholds_for(cfg, Thresholds(low=0.9, high=0.99, by_reason={"unsafe_list": 0.993}))
    assert t.by_reason["upper_case"] == cfg.deep.combiner.by_reason_ceiling["upper_case"] < 0.993
