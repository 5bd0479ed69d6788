"""The deep method's decoding: the network's most likely class, with the engine's age policy on top."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deid_core.detectors import NetworkDetector
from deid_core.hybrid.combiner import NeverRelease
from deid_core.rules.deidentifier import RuleAnalysis

CLASSES = ["SAFE", "NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER"]


class _Stub:
    """A model that gives every token the same class."""

    classes = CLASSES
    manifest = None

    def __init__(self, label: str) -> None:
        self.label = label

    @property
    def version(self) -> str:
        return "stub"

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        out = []
        for a in analyses:
            p = np.zeros((len(a.tokens), len(CLASSES)), dtype=np.float32)
            p[:, CLASSES.index(self.label)] = 1.0
            out.append(p)
        return out


def _masked(rules, label: str, text: str, forced: NeverRelease | None) -> set[str]:  # type: ignore[no-untyped-def]
    det = NetworkDetector(rules, _Stub(label), None, forced)  # type: ignore[arg-type]
    return {text[m.start:m.end] for m in det.detect([text])[0]}


TEXT = "A 93 yo man and a 45 yo woman, seen on Monday."


def test_the_deep_method_shows_young_ages_and_masks_old_ones_whatever_the_network_says(rules) -> None:  # type: ignore[no-untyped-def]
    ages = NeverRelease(age_min=90, word_kinds=False)
    # a network that calls every token AGE: the young age is shown all the same
    assert {"93", "45"} <= _masked(rules, "AGE", TEXT, None)
    assert "45" not in _masked(rules, "AGE", TEXT, ages) and "93" in _masked(rules, "AGE", TEXT, ages)
    # a network that calls every token SAFE: the old age stays masked, the weekday is the network's call
    assert _masked(rules, "SAFE", TEXT, ages) == {"93"}


def test_a_policy_that_masks_every_age_and_the_word_kinds_keeps_them(rules) -> None:  # type: ignore[no-untyped-def]
    policy = NeverRelease(age_min=90, patterns=["AGE"], word_kinds=True)
    assert _masked(rules, "SAFE", TEXT, policy) == {"93", "45", "Monday"}
    assert not NeverRelease(age_min=90, patterns=["AGE"]).decide(rules.analyse(TEXT))[1].any()
    # without a limit no age is known to be young: none is shown
    assert not NeverRelease().decide(rules.analyse(TEXT))[1].any()


def test_the_deep_methods_masked_tokens_are_the_hybrids_never_released_ones(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse(TEXT)
    for never in (NeverRelease(age_min=90), NeverRelease(age_min=90, word_kinds=False), NeverRelease()):
        masked, shown = never.decide(a)
        assert (masked == never.mask(a)).all()
        assert not (masked & shown).any()
    masked, shown = NeverRelease(age_min=90).decide(a)
    words = [TEXT[t.start:t.end] for t in a.tokens]
    assert [w for w, m in zip(words, masked) if m] == ["93", "Monday"]
    assert [w for w, s in zip(words, shown) if s] == ["45"]


def test_build_detector_gives_the_deep_method_the_configured_age_limit(cfg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from deid_core.detectors import Method, build_detector

    det = build_detector(Method.deep, cfg).inner
    assert det.deep_policy is not None and det.deep_policy.age_min == cfg.deep.combiner.never_release_ages_from
    assert det.deep_policy.word_kinds is False
    with_policy = build_detector(Method.deep, cfg, force_mask=["AGE"]).inner
    assert with_policy.deep_policy.word_kinds is True and "pattern:AGE" in with_policy.deep_policy.pattern_reasons
