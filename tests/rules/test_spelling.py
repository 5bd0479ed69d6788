"""Misspelt words one slip from a safe dictionary word get their own reason (deid_core.rules.spelling)."""

from __future__ import annotations

import pytest

from deid_core.dictionaries.flags import Lex
from deid_core.rules.spelling import near_safe_word
from deid_core.thresholds import NEAR_WORD_FAMILY, reason_family

_WORDS = {"pneumonia": int(Lex.MEDICAL), "updated": int(Lex.COMMON_WORD), "brown": int(Lex.COMMON_WORD | Lex.SURNAME),
          "aware": int(Lex.COMMON_WORD), "agree": int(Lex.COMMON_WORD), "gradually": int(Lex.COMMON_WORD), "monday": int(Lex.WEEKDAY)}


def flags(word: str) -> int:
    return _WORDS.get(word, 0)


@pytest.mark.parametrize(
    ("word", "near"),
    [
        ("PENUMONIA", True),   # two letters swapped
        ("udated", True),      # a letter dropped
        ("gradully", True),
        ("updatted", True),    # a letter added
        ("pneumonix", True),   # a letter changed
        ("Browne", False),     # one slip from "brown", but "brown" is also a surname
        ("Asare", True),       # a name one slip from "aware": judged near, the network decides (it scores such names low)
        ("Agre", False),       # under MIN_LETTERS letters: not judged
        ("mondays", False),    # a date word is no safe word
        ("xyzzyq", False),     # nothing near
        ("pnumonia1", False),  # not a plain word
    ],
)
def test_near_safe_word(word: str, near: bool) -> None:
    assert near_safe_word(word, flags) is near


def test_near_word_reason_has_its_own_family() -> None:
    assert reason_family("unknown:near_word", True) == NEAR_WORD_FAMILY
    assert reason_family("unknown", True) == "unknown"


def test_rules_mark_a_misspelling_and_keep_it_masked(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("Remains on ceftriaxone for r/o PENUMONIA; family udated by Quokkabrandt.")
    by_text = {t.text: (u, r) for t, u, r in zip(a.tokens, a.unsafe, a.reasons, strict=True)}
    assert by_text["PENUMONIA"] == (True, "unknown:near_word")
    # in lower case in a mixed-case note a misspelling keeps the lower-case family, which already lets it go
    assert by_text["udated"] == (True, "unknown:lower_case")
    assert by_text["Quokkabrandt"] == (True, "unknown")  # far from every word: an unknown word as before
    caps = rules.analyse("FAMILY UDATED BY QUOKKABRANDT.")
    assert dict(zip([t.text for t in caps.tokens], caps.reasons, strict=True))["UDATED"] == "unknown:near_word"


def test_the_verdict_is_kept_per_word_and_the_rules_still_pickle(rules) -> None:  # type: ignore[no-untyped-def]
    """A misspelling recurs across reports: the look-ups run once per word; Spark may still pickle the rules."""
    import pickle

    first = rules.analyse("FAMILY UDATED TODAY.")
    again = rules.analyse("SON UDATED BY PHONE.")
    assert "unknown:near_word" in first.reasons and "unknown:near_word" in again.reasons
    assert rules._near_words.get("UDATED") is True
    assert pickle.loads(pickle.dumps(rules)).analyse("FAMILY UDATED TODAY.").reasons == first.reasons
