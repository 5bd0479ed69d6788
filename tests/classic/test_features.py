"""Window features: the layout, the text's edges, and no PHI-only word in a model's lexicon."""

from __future__ import annotations

import json
from pathlib import Path

from deid_core.classic.features import UNKNOWN_WORD, Lexicon, WindowFeatures, gap_code, numeric_type
from deid_core.classic.manifest import LEXICON_FILE
from deid_core.deep.vocabulary import normalise_word
from deid_core.text.tokenize import tokenize

from .conftest import tiny_corpus


def features(words: set[str] = frozenset(), affixes: set[str] = frozenset(), radius: int = 2) -> WindowFeatures:
    return WindowFeatures(Lexicon(frozenset(words), frozenset(affixes)), frozenset({"dr"}), radius=radius,
                          affix_lengths=[2, 3])


def test_one_list_per_token_with_neighbours_and_edges(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("Seen by Dr. Smith on 12/03/2019.")
    seq = features({"seen", "by", "dr", "on"}, {"se", "ee"}).sequence(a)
    assert len(seq) == len(a.tokens)
    first, smith = seq[0], seq[3]
    assert "w=seen" in first and "p2=se" in first and "p3=see" not in first  # only affixes of the lexicon
    assert "-1|edge" in first and "-2|edge" not in first and "+1|w=by" in first
    assert f"w={UNKNOWN_WORD}" in smith and "-1|w=dr" in smith and "x=after_salutation" in smith
    assert "why=context" in smith and "lab=NAME" in smith and "x=rules_unsafe" in smith
    assert "lex=SURNAME" in smith
    date = seq[5]
    assert "num=digits" in date and "ps=/" in date and "why=pattern:DATE" in date
    assert "+1|edge" in seq[-1] and "+2|edge" not in seq[-1]


def test_numbers_are_never_stored_as_values(rules) -> None:  # type: ignore[no-untyped-def]
    a = rules.analyse("MRN 4471923 seen 2019.")
    seq = features({"0000000", "mrn"}, {"44", "00"}).sequence(a)
    assert "w=0000000" in seq[1] and not any("4471923" in f or "p2=44" in f for f in seq[1])
    assert numeric_type("2019") == "year" and numeric_type("4471923") == "digits"
    assert numeric_type("A12") == "alnum" and numeric_type("XIV") == "roman" and numeric_type("mg") == "none"
    assert gap_code(". \n") == "._n"


def test_layout_names_change_with_the_window() -> None:
    assert features(radius=2).names != features(radius=3).names
    assert "+3|w" in features(radius=3).names and "+3|w" not in features(radius=2).names


def test_a_trained_lexicon_lists_no_phi_only_word(crf_dir: Path) -> None:
    lexicon = Lexicon.from_json((crf_dir / LEXICON_FILE).read_text(encoding="utf-8"))
    inside, outside = set(), set()
    for d in tiny_corpus():
        for t in tokenize(d.text):
            # ages under 90 are trained as SAFE (age_phi_min), so only other PHI counts here
            hit = any(s.start < t.end and t.start < s.end for s in d.spans if s.label != "AGE")
            (inside if hit else outside).add(normalise_word(t.lower))
    only_phi = inside - outside
    assert len(only_phi) > 20 and not only_phi & lexicon.words
    assert json.loads((crf_dir / LEXICON_FILE).read_text())["words"]
