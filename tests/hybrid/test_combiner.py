from __future__ import annotations

import numpy as np
import pytest

from deid_core.hybrid.combiner import Combiner, NeverRelease, released
from deid_core.thresholds import Thresholds

CLASSES = ["SAFE", "NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER"]


def probs_for(n: int, p_safe: float, phi: str = "NAME") -> np.ndarray:
    p = np.zeros((n, len(CLASSES)), dtype=np.float32)
    p[:, 0] = p_safe
    p[:, CLASSES.index(phi)] = 1 - p_safe
    return p


def test_adaptive_threshold_table() -> None:
    t = Thresholds(low=0.3, high=0.9)
    unsafe = np.array([False, False, True, True, True])
    never = np.array([False, False, False, False, True])
    p = np.array([0.31, 0.30, 0.91, 0.90, 1.0])
    assert released(unsafe, never, p, t).tolist() == [True, False, True, False, False]
    # NaN never releases
    assert not released(np.array([False]), np.array([False]), np.array([np.nan]), t)[0]


def test_network_catches_what_rules_missed_and_releases_false_alarms(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("The rash resolved after attempt 3 there.")
    assert a.unsafe[[t.text for t in a.tokens].index("3")]
    comb = Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease())
    p = probs_for(len(a.tokens), 0.99)
    assert comb.combine(a, p) == []  # confident network: the digit comes back
    p[1] = probs_for(1, 0.2, "NAME")[0]  # the network doubts "rash", a rules-safe word
    masked = comb.combine(a, p)
    assert [(m.start, m.label) for m in masked] == [(a.tokens[1].start, "NAME")]
    p = probs_for(len(a.tokens), 0.9)  # between low and high: rules decide
    masked = comb.combine(a, p)
    assert {a.text[m.start:m.end] for m in masked} == {a.tokens[i].text for i in range(len(a.tokens)) if a.unsafe[i]}


def test_weekdays_and_months_never_come_back(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("Seen on Monday in January at 5 Main Street; sat 98%, may improve, one dose.")
    words = [t.text for t in a.tokens]
    strict = Combiner(CLASSES, Thresholds(0.5, 0.5), NeverRelease())
    kept_masked = {a.text[m.start:m.end] for m in strict.combine(a, probs_for(len(words), 1.0))}
    assert {"Monday", "January", "Street"} <= kept_masked
    lenient = Combiner(CLASSES, Thresholds(0.5, 0.5), NeverRelease(["weekday", "month", "written_number"]))
    lenient_masked = {a.text[m.start:m.end] for m in lenient.combine(a, probs_for(len(words), 1.0))}
    assert {"Monday", "January", "Street"} <= lenient_masked
    # ambiguous words that are also everyday words go to the high threshold instead
    for w in ("sat", "may", "one"):
        if a.unsafe[words.index(w)]:
            assert w in kept_masked and w not in lenient_masked


def test_labels_prefer_rule_categories(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("Call 555-123-4567 today.")
    comb = Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease())
    masked = comb.combine(a, probs_for(len(a.tokens), 0.0, "NAME"))
    labels = {a.text[m.start:m.end]: m.label for m in masked}
    assert labels["555"] == "PHONE"  # the pattern's category wins over the network's
    assert labels["Call"] == "NAME"  # rules-safe token masked by the network: its class
    assert all(0 <= m.score <= 1 for m in masked)


def test_shape_mismatch_raises(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("two tokens")
    with pytest.raises(ValueError):
        Combiner(CLASSES, Thresholds(0.5, 0.9), NeverRelease()).combine(a, probs_for(3, 1.0))


def test_ages_over_89_never_come_back(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("A 93 yo man and a 45 yo woman.")
    words = [t.text for t in a.tokens]
    assert a.reasons[words.index("93")] == "pattern:AGE"
    never = NeverRelease(age_min=90).mask(a)
    assert never[words.index("93")] and not never[words.index("45")]
    # without a limit no age is known to be safe: every one stays masked (fail closed)
    assert NeverRelease().mask(a)[words.index("93")] and NeverRelease().mask(a)[words.index("45")]
    comb = Combiner(CLASSES, Thresholds(0.5, 0.5), NeverRelease(age_min=90))
    masked = {a.text[m.start:m.end] for m in comb.combine(a, probs_for(len(words), 1.0))}
    assert masked == {"93"}


def test_a_date_is_released_whole_or_not_at_all(rules) -> None:  # type: ignore[no-untyped-def]
    from deid_core.hybrid.combiner import group_min

    a = rules.analyse("Placed 6/21 and seen by Dr. Halverson.")
    words = [t.text for t in a.tokens]
    i8, i14 = words.index("6"), words.index("21")
    assert a.groups[i8] == a.groups[i14] >= 0
    p = probs_for(len(words), 0.999)
    p[i14] = probs_for(1, 0.2, "DATE")[0]  # the network doubts only the day
    masked = {a.text[m.start:m.end] for m in Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease()).combine(a, p)}
    assert {"6", "21"} <= masked
    np.testing.assert_allclose(group_min(np.array([0.9, 0.2, 0.7, np.nan]), [0, 0, -1, 1]), [0.2, 0.2, 0.7, 0.0])


def test_policy_forced_detector_categories_are_never_released(rules) -> None:  # type: ignore[no-untyped-def]
    """A profile that counts every age as PHI keeps "45" masked however sure the network is."""
    a = rules.analyse("A 45 yo man, rash since 3 days.")
    p = probs_for(len(a.tokens), 0.999999)
    free = Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease(age_min=90))
    forced = Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease(age_min=90, patterns=["AGE"]))
    assert free.combine(a, p) == []
    masked = forced.combine(a, p)
    assert [(a.text[m.start:m.end], m.label) for m in masked] == [("45", "AGE")]
    assert masked[0].group >= 0  # the detector's match id travels to the replacement step


def test_thresholds_by_rule_reason() -> None:
    t = Thresholds(0.5, 0.99, by_reason={"clinical": 0.0, "digit": 0.7})
    unsafe = np.array([False, False, True, True, True])
    never = np.array([False, False, False, False, True])
    reasons = ["safe", "clinical:quantity", "digit", "unknown", "digit"]
    p = np.array([0.4, 0.01, 0.8, 0.8, 1.0])
    # safe by list: low; clinical: 0.0; digit: 0.7; unknown: high; never-release stays masked
    assert released(unsafe, never, p, t, reasons).tolist() == [False, True, True, False, False]
    # without reasons the pair alone applies, as in the thesis
    assert released(unsafe, never, p, t).tolist() == [False, False, False, False, False]
    assert not released(np.array([False]), np.array([False]), np.array([np.nan]), t, ["clinical:quantity"])[0]


def test_unknown_reasons_and_bad_values_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown rule reasons"):
        Thresholds(0.5, 0.9, by_reason={"clinicl": 0.0})
    with pytest.raises(ValueError, match="between 0 and 1"):
        Thresholds(0.5, 0.9, by_reason={"digit": 1.5})


def test_a_manifest_without_reasons_round_trips_unchanged() -> None:
    plain = Thresholds(0.5, 0.9, target_recall=0.995)
    assert "by_reason" not in plain.model_dump(mode="json")
    tuned = Thresholds(0.5, 0.9, by_reason={"clinical": 0.0})
    assert Thresholds.model_validate(tuned.model_dump(mode="json")) == tuned


def test_config_families_are_policy_over_the_manifest(cfg) -> None:  # type: ignore[no-untyped-def]
    """A family the config sets is policy (the search keeps it fixed): a later change of it applies at
    once, not the value a manifest copied when it was tuned; the manifest's tuned families fill in."""
    from deid_core.detectors import thresholds_for

    comb = cfg.deep.combiner.model_copy(update={"by_reason": {"clinical": 0.0, "digit": 0.8}, "by_reason_ceiling": {}})
    conf = cfg.model_copy(update={"deep": cfg.deep.model_copy(update={"combiner": comb})})
    chosen = thresholds_for(conf, Thresholds(0.4, 0.97, by_reason={"digit": 0.9, "unknown": 0.99}))
    assert (chosen.low, chosen.high, chosen.by_reason) == (0.4, 0.97, {"clinical": 0.0, "digit": 0.8, "unknown": 0.99})
    assert thresholds_for(conf, None).by_reason == {"clinical": 0.0, "digit": 0.8}


def test_a_ceiling_caps_the_manifest_and_fills_in_for_it(cfg) -> None:  # type: ignore[no-untyped-def]
    """A family with a ceiling takes the manifest's tuned value up to the ceiling, the ceiling without one."""
    from deid_core.detectors import thresholds_for

    comb = cfg.deep.combiner.model_copy(update={"by_reason": {"clinical": 0.0},
                                                "by_reason_ceiling": {"near_word": 0.98, "dotted_pair": 0.9}})
    conf = cfg.model_copy(update={"deep": cfg.deep.model_copy(update={"combiner": comb})})
    chosen = thresholds_for(conf, Thresholds(0.4, 0.97, by_reason={"near_word": 0.3, "dotted_pair": 0.95}))
    assert chosen.by_reason == {"clinical": 0.0, "near_word": 0.3, "dotted_pair": 0.9}
    assert thresholds_for(conf, Thresholds(0.4, 0.97)).by_reason == {"clinical": 0.0, "near_word": 0.98, "dotted_pair": 0.9}
    assert thresholds_for(conf, None).by_reason == {"clinical": 0.0, "near_word": 0.98, "dotted_pair": 0.9}


def test_clinical_values_come_back_even_when_the_network_doubts_them(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("Started warfarin 5 mg; INR 2.3 on day 5.")
    p = probs_for(len(a.tokens), 0.3)  # an unsure network
    strict = Combiner(CLASSES, Thresholds(0.5, 0.99), NeverRelease())
    assert {a.text[m.start:m.end] for m in strict.combine(a, p)} >= {"5", "mg", "2", "3"}
    lenient = Combiner(CLASSES, Thresholds(0.5, 0.99, by_reason={"clinical": 0.0}), NeverRelease())
    kept = {a.text[m.start:m.end] for m in lenient.combine(a, p)}
    assert kept.isdisjoint({"5", "mg", "INR", "2", "3", "day"})


def test_a_group_is_released_whole_or_not_at_all() -> None:
    """With per-reason thresholds the tokens of one group can face different thresholds."""
    t = Thresholds(0.5, 0.9, by_reason={"single_letter": 0.5, "unsafe_list": 0.99})
    unsafe = np.array([True, True, True])
    never = np.zeros(3, dtype=bool)
    p = np.array([0.95, 0.95, 0.95])
    reasons = ["single_letter", "unsafe_list", "single_letter"]
    # alone, the initial would be shown and the surname masked: "W. [NAME]"
    assert released(unsafe, never, p, t, reasons).tolist() == [True, False, True]
    assert released(unsafe, never, p, t, reasons, [0, 0, -1]).tolist() == [False, False, True]


def test_an_initial_and_its_surname_are_one_group(rules) -> None:  # type: ignore[no-untyped-def]
    for text, initial, surname in (("Per W. Halverson aware.", "W", "Halverson"),
                                   ("by MARTHA C. LINDQVIST, RRT", "C", "LINDQVIST"),
                                   ("per U Nebraska scale", "U", "Nebraska")):
        a = rules.analyse(text)
        idx = {tok.text: i for i, tok in enumerate(a.tokens)}
        i, j = idx[initial], idx[surname]
        assert a.unsafe[i] and a.unsafe[j], text
        assert a.groups[i] >= 0 and a.groups[i] == a.groups[j], text
    # a lower-case letter or a safe word after it is not a name
    a = rules.analyse("pt on 2 L NC, s/p fall")
    assert all(g < 0 for tok, g in zip(a.tokens, a.groups) if tok.text == "L")


def test_run_time_families_are_the_search_families() -> None:
    """The combiner looks thresholds up by the same family the search tuned them for."""
    from deid_core.thresholds import reason_family

    t = Thresholds(0.5, 0.9, by_reason={"unknown": 0.2, "drug": 0.1, "safe": 0.6})
    reasons = ["odd-masked-reason", "drug", "odd-safe-reason", "pattern:DATE"]
    unsafe = np.array([True, False, False, True])
    assert t.per_token(unsafe, reasons).tolist() == [0.2, 0.1, 0.6, 0.9]
    assert [reason_family(r, bool(u)) for r, u in zip(reasons, unsafe)] == ["unknown", "drug", "safe", "pattern:DATE"]


def test_pattern_kinds_have_their_own_threshold_and_fall_back_to_the_pattern_one() -> None:
    reasons = ["pattern:DATE", "pattern:AGE", "pattern:EMAIL"]
    unsafe = np.array([True, True, True])
    split = Thresholds(0.5, 0.9, by_reason={"pattern:DATE": 0.99, "pattern:AGE": 0.4, "pattern": 0.999})
    assert split.per_token(unsafe, reasons).tolist() == [0.99, 0.4, 0.999]
    # a manifest tuned before the split has one "pattern" threshold for every kind
    old = Thresholds(0.5, 0.9, by_reason={"pattern": 0.999})
    assert old.per_token(unsafe, reasons).tolist() == [0.999, 0.999, 0.999]



@pytest.mark.parametrize(
    ("text", "age", "shown"),
    [
        ("A 45 yo man with a rash.", "45", True),
        ("She is a ninety-two-year-old widow.", "ninety", False),
        ("A seventy-two-year-old widow.", "seventy", True),
        ("In the cohort, a 85-95 yo group.", "85", False),
        ("A woman in her nineties fell.", "nineties", False),
        ("A woman in her 100s fell.", "100s", False),
        ("A man in his 70's fell.", "70", True),
    ],
)
def test_an_age_under_the_limit_is_shown_whole_and_an_old_or_unreadable_one_never(
    rules, text: str, age: str, shown: bool  # type: ignore[no-untyped-def]
) -> None:
    """The tokens of one age match are judged together: "ninety-two" is 92, not "ninety" and "two"."""
    a = rules.analyse(text)
    idx = [i for i, t in enumerate(a.tokens) if a.reasons[i] == "pattern:AGE"]
    assert idx and any(a.tokens[i].text == age or age.startswith(a.tokens[i].text) for i in idx)
    comb = Combiner(CLASSES, Thresholds(0.5, 0.5, by_reason={"pattern:AGE": 0.0}), NeverRelease(age_min=90))
    masked = {(m.start, m.end) for m in comb.combine(a, probs_for(len(a.tokens), 1.0))}
    age_masked = [(a.tokens[i].start, a.tokens[i].end) in masked for i in idx]
    assert age_masked == [not shown] * len(idx)


def test_an_age_read_from_its_place_alone_is_never_shown(rules) -> None:  # type: ignore[no-untyped-def]
    """"Irma, 58," may be a house number: an age without an age word stays masked whatever its value."""
    a = rules.analyse("The reporter's address was updated to Piazza Irma, 58, 34126 Bassano.")
    i = [t.text for t in a.tokens].index("58")
    assert a.unsafe[i] and a.reasons[i] == "pattern:AGE:place_only"
    thresholds = Thresholds(0.5, 0.5, by_reason={"pattern:AGE": 0.0, "pattern": 1.0})
    comb = Combiner(CLASSES, thresholds, NeverRelease(age_min=90))
    masked = {a.text[m.start:m.end]: m.label for m in comb.combine(a, probs_for(len(a.tokens), 1.0))}
    assert masked.get("58") == "PHI"  # no AGE: the policy would show it as an age under 90


def test_words_of_other_scripts_never_come_back(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("Reported by 王芳 from Москва after 40 mg of drug Xyzzq.")
    words = [t.text for t in a.tokens]
    p = probs_for(len(words), 1.0)  # a network sure that every token is safe
    plain = Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease())
    guarded = Combiner(CLASSES, Thresholds(0.5, 0.95), NeverRelease(other_scripts=True))
    assert {a.text[m.start:m.end] for m in plain.combine(a, p)} == set()
    foreign = {w for i, w in enumerate(words) if a.unsafe[i] and w in ("王芳", "Москва")}
    assert foreign == {"王芳", "Москва"}  # the rules mask them; only the guard keeps them masked
    assert {a.text[m.start:m.end] for m in guarded.combine(a, p)} == foreign


def test_the_configured_never_release_guards_other_scripts(rules, cfg) -> None:  # type: ignore[no-untyped-def]
    from deid_core.hybrid.combiner import never_release_from

    assert cfg.deep.combiner.never_release_other_scripts
    a = rules.analyse("Seen by Dr 李明 today.")
    never = never_release_from(cfg).mask(a)
    assert never[[t.text for t in a.tokens].index("李明")]


def test_relatives_come_back_even_when_the_network_doubts_them(rules, cfg) -> None:  # type: ignore[no-untyped-def]
    """The configured "relation" family is policy: a word for a relative is never masked on the network's
    word alone ("son and grandson in to visit"); beside a name it is judged as any safe word."""
    from deid_core.detectors import thresholds_for

    a = rules.analyse("social: son and grandson in to visit. Niece Patricia called.")
    p = probs_for(len(a.tokens), 0.05)  # a network sure that everything is PHI
    combiner = Combiner(CLASSES, thresholds_for(cfg, Thresholds(0.5, 0.99)), NeverRelease())
    masked = {a.text[m.start:m.end] for m in combiner.combine(a, p)}
    assert masked.isdisjoint({"son", "grandson"}) and "Patricia" in masked
    # a relative's word before a name keeps the common safe family: the doubting network masks it
    assert "Niece" in masked
    assert cfg.deep.combiner.by_reason["relation"] == 0.0
