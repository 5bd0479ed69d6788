"""The method's evaluation: masking recall, the mid-token overlap rule, entities, retention."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts, Span, evaluate_document, gold_tokens
from deid_core.text.tokenize import token_spans

HIPAA = HipaaMap({"DOCTOR": None, "NAME": "NAME", "AGE": "AGE_OVER_89"}, age_threshold=90)


def mask(text: str, *words: str) -> list[Span]:
    """Predicted spans for every token whose text is in `words`."""
    return [Span(s, e) for s, e in token_spans(text) if text[s:e] in words]


def test_basic_counts() -> None:
    text = "Seen by Dr Ann Lee on 12/03 for rash."
    gold = [Span(11, 18, "NAME"), Span(22, 27, "DATE")]  # "Ann Lee", "12/03"
    pred = mask(text, "Ann", "Lee", "12", "Dr", "rash")  # misses "03"
    c = evaluate_document(text, gold, pred, HIPAA)
    assert (c.gold_tokens, c.caught, c.false_positives) == (4, 3, 2)
    assert c.recall == pytest.approx(0.75)
    assert c.precision == pytest.approx(3 / 5)
    assert c.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert c.label_recall() == {"DATE": (1, 2, 0.5), "NAME": (2, 2, 1.0)}
    assert c.missed == {"DATE": 1}


def test_token_covering_mid_token_gold_is_hit_and_false_positive() -> None:
    text = "DrSmith came"
    gold = [Span(2, 7, "NAME")]  # "Smith" inside the text token "DrSmith"
    c = evaluate_document(text, gold, mask(text, "DrSmith"), HIPAA)
    assert (c.caught, c.false_positives) == (1, 1)
    assert c.recall == 1.0 and c.precision == 0.5


def test_aligned_hit_is_not_a_false_positive() -> None:
    text = "Smith came"
    c = evaluate_document(text, [Span(0, 5, "NAME")], mask(text, "Smith"), HIPAA)
    assert (c.caught, c.false_positives) == (1, 0)


def test_one_token_covering_two_gold_tokens_counts_two_hits_one_fp() -> None:
    text = "AnnLee x"
    gold = [Span(0, 3, "NAME"), Span(3, 6, "NAME")]
    c = evaluate_document(text, gold, mask(text, "AnnLee"), HIPAA)
    assert (c.gold_tokens, c.caught, c.false_positives) == (2, 2, 1)


def test_partly_covered_token_is_not_masked() -> None:
    text = "Smith came"
    c = evaluate_document(text, [Span(0, 5, "NAME")], [Span(0, 3)], HIPAA)
    assert c.caught == 0 and c.predicted_tokens == 0


def test_gold_tokens_come_from_span_text_and_are_deduplicated() -> None:
    text = "Mary-Ann O'Hara"
    toks = gold_tokens(text, [Span(0, 15, "NAME"), Span(0, 8, "NAME")])
    assert [(t.start, t.end) for t in toks] == [(0, 4), (5, 8), (9, 10), (11, 15)]


def test_hipaa_recall_excludes_non_hipaa_labels_and_young_ages() -> None:
    text = "Dr House saw a 45 and a 93 year old, Ann."
    gold = [Span(3, 8, "DOCTOR"), Span(15, 17, "AGE"), Span(24, 26, "AGE"), Span(37, 40, "NAME")]
    c = evaluate_document(text, gold, mask(text, "93"), HIPAA)
    assert c.hipaa_gold == 2  # "93" and "Ann"
    assert c.hipaa_caught == 1
    assert c.hipaa_recall == 0.5
    assert c.recall == 0.25


def test_unknown_labels_count_as_hipaa() -> None:
    text = "code ZX9"
    c = evaluate_document(text, [Span(5, 8, "SOMETHING_NEW")], [], HIPAA)
    assert c.hipaa_gold == 1


def test_entities_exact_and_overlap() -> None:
    text = "Ann Lee on January 24, 2014 and Bo, Cy."
    gold = [Span(0, 7, "NAME"), Span(11, 27, "DATE"), Span(32, 34, "NAME"), Span(36, 38, "NAME")]
    pred = mask(text, "Ann", "Lee", "January", "24", "Bo", "Cy", "on")
    c = evaluate_document(text, gold, pred, HIPAA)
    # predicted entities: "Ann Lee on January 24" (joined), "Bo", "Cy"
    d = c.as_dict()["entity"]
    assert c.pred_entities == 3 and c.gold_entities == 4
    assert d["exact_recall"] == pytest.approx(2 / 4)
    assert d["overlap_recall"] == pytest.approx(4 / 4)
    assert d["exact_precision"] == pytest.approx(2 / 3)
    assert d["overlap_precision"] == 1.0


def test_date_with_comma_is_one_entity_but_names_with_comma_are_two() -> None:
    text = "January 24, 2014. Smith, Jones"
    pred = mask(text, "January", "24", "2014", "Smith", "Jones")
    gold = [Span(0, 16, "DATE"), Span(18, 23, "NAME"), Span(25, 30, "NAME")]
    c = evaluate_document(text, gold, pred, HIPAA)
    assert c.gold_exact == 3 and c.pred_entities == 3


def test_trailing_punctuation_in_gold_does_not_break_exact_match() -> None:
    text = "Call 410-555-9876."
    c = evaluate_document(text, [Span(5, 18, "PHONE")], mask(text, "410", "555", "9876"), HIPAA)
    assert c.gold_exact == 1


def test_retention_of_numbers_and_drugs() -> None:
    text = "Ann took 500 mg ibuprofen and 2 tabs aspirin on 3/4"
    gold = [Span(0, 3, "NAME"), Span(48, 51, "DATE")]
    pred = mask(text, "Ann", "500", "aspirin", "3", "4")
    c = evaluate_document(text, gold, pred, HIPAA, is_drug=lambda w: w in {"ibuprofen", "aspirin"})
    assert (c.numeric_total, c.numeric_kept) == (2, 1)  # "500" masked, "2" kept; date digits are PHI
    assert (c.drug_total, c.drug_kept) == (2, 1)


def test_merge_is_additive() -> None:
    a = evaluate_document("Ann x", [Span(0, 3, "NAME")], [Span(0, 3)], HIPAA)
    b = evaluate_document("Bo y", [Span(0, 2, "NAME")], [], HIPAA)
    m = a.merge(b)
    assert (m.docs, m.gold_tokens, m.caught) == (2, 2, 1)
    assert m.gold_by_label == {"NAME": 2}
    assert Counts().recall == 0.0 and Counts().precision == 0.0


def test_label_map_file_loads(tmp_path: Path) -> None:
    p = tmp_path / "labels.yaml"
    p.write_text("hipaa:\n  DOCTOR: null\n  PATIENT: NAME\n")
    m = HipaaMap.load(p)
    assert not m.is_hipaa("DOCTOR", "House")
    assert m.is_hipaa("PATIENT", "Ann")


@pytest.mark.parametrize(
    ("token", "hipaa"),
    [("45", False), ("51M", False), ("80Y", False), ("30s", False), ("89", False),
     ("90", True), ("93yo", True), ("100s", True), ("ninety", True), ("yo", True)],
)
def test_an_age_is_hipaa_from_90_read_from_its_leading_number(token: str, hipaa: bool) -> None:
    """A token that glues the number to a sex or unit letter is the age it starts with; none: fail safe."""
    assert HipaaMap({}, 90).is_hipaa("AGE", token) is hipaa


@st.composite
def annotated(draw: st.DrawFn) -> tuple[str, list[Span]]:
    text = draw(st.text(alphabet=st.sampled_from("ab1 .-/\nÄ"), min_size=1, max_size=80))
    spans = []
    for _ in range(draw(st.integers(0, 5))):
        a = draw(st.integers(0, len(text) - 1))
        b = draw(st.integers(a + 1, len(text)))
        spans.append(Span(a, b, draw(st.sampled_from(["NAME", "DATE"]))))
    return text, spans


@settings(max_examples=300, deadline=None)
@given(annotated())
def test_masking_everything_gives_recall_one(doc: tuple[str, list[Span]]) -> None:
    text, gold = doc
    c = evaluate_document(text, gold, [Span(0, len(text))], HIPAA)
    assert c.caught == c.gold_tokens
    if c.gold_tokens:
        assert c.recall == 1.0


@settings(max_examples=300, deadline=None)
@given(annotated())
def test_masking_nothing_gives_recall_zero(doc: tuple[str, list[Span]]) -> None:
    text, gold = doc
    c = evaluate_document(text, gold, [], HIPAA)
    assert c.caught == 0 and c.false_positives == 0 and c.predicted_tokens == 0
    assert c.recall == 0.0


@settings(max_examples=300, deadline=None)
@given(annotated(), st.data())
def test_metrics_are_bounded_and_consistent(doc: tuple[str, list[Span]], data: st.DataObject) -> None:
    text, gold = doc
    toks = token_spans(text)
    chosen = data.draw(st.lists(st.sampled_from(toks), unique=True) if toks else st.just([]))
    c = evaluate_document(text, gold, [Span(s, e) for s, e in chosen], HIPAA)
    assert 0 <= c.caught <= c.gold_tokens
    assert 0.0 <= c.recall <= 1.0 and 0.0 <= c.precision <= 1.0
    assert c.false_positives <= c.predicted_tokens
    assert sum(c.missed.values()) == c.gold_tokens - c.caught


def test_precision_under_the_i2b2_reading_forgives_ages_and_years() -> None:
    text = "Ann, 45, seen in 2014 and '95 for rash"
    pred = [Span(0, 3, "NAME"), Span(5, 7, "AGE"), Span(17, 21, "DATE"), Span(27, 29, "DATE"), Span(34, 38, "PHI")]
    c = evaluate_document(text, [Span(0, 3, "NAME")], pred, HIPAA)
    assert c.false_positives == 4 and c.false_positives_age_year == 3
    assert c.precision == pytest.approx(1 / 5)
    assert c.precision_i2b2_reading == pytest.approx(1 / 2)


# --- keep spans ---------------------------------------------------------------------

KEEP_TEXT = "Ann took aspirin 500 mg for 3 days; rash."
KEEP = [Span(9, 16, "DRUG"), Span(17, 23, "DOSE"), Span(28, 34, "DURATION"), Span(36, 40, "REACTION")]


def test_keep_retention_counts_tokens_no_mask_overlaps() -> None:
    c = evaluate_document(KEEP_TEXT, [Span(0, 3, "NAME")], mask(KEEP_TEXT, "Ann", "500"), HIPAA, keep=KEEP)
    assert (c.keep_tokens, c.keep_kept) == (6, 5)  # aspirin | 500 mg | 3 days | rash
    assert c.keep_retention == pytest.approx(5 / 6)
    assert c.keep_label_retention() == {
        "DRUG": (1, 1, 1.0), "DOSE": (1, 2, 0.5), "DURATION": (2, 2, 1.0), "REACTION": (1, 1, 1.0)}
    d = c.as_dict()["keep"]
    assert d["tokens"] == 6 and d["kept"] == 5
    assert list(d["per_label"]) == ["DRUG", "DOSE", "DURATION", "REACTION"]  # KEEP_LABELS order
    assert d["per_label"]["DOSE"] == {"kept": 1, "tokens": 2, "retention": 0.5}


def test_a_partial_overlap_destroys_a_keep_token() -> None:
    # masking only "sp" of "aspirin" still loses the drug name
    c = evaluate_document(KEEP_TEXT, [], [Span(10, 12)], HIPAA, keep=KEEP)
    assert c.keep_label_retention()["DRUG"] == (0, 1, 0.0)
    # a mask ending just before a keep token, or starting right after it, does not touch it
    c = evaluate_document(KEEP_TEXT, [], [Span(0, 9), Span(16, 17)], HIPAA, keep=KEEP)
    assert c.keep_kept == c.keep_tokens == 6


def test_keep_counts_merge_and_are_absent_without_keep_spans() -> None:
    a = evaluate_document(KEEP_TEXT, [], mask(KEEP_TEXT, "mg"), HIPAA, keep=KEEP)
    b = evaluate_document(KEEP_TEXT, [], mask(KEEP_TEXT, "rash", "days"), HIPAA, keep=KEEP)
    m = a.merge(b)
    assert (m.keep_tokens, m.keep_kept) == (12, 9)
    assert m.keep_label_retention()["DOSE"] == (3, 4, 0.75)
    assert m.keep_label_retention()["REACTION"] == (1, 2, 0.5)
    none = evaluate_document(KEEP_TEXT, [], mask(KEEP_TEXT, "mg"), HIPAA)
    assert none.keep_tokens == 0 and none.keep_retention == 0.0 and none.as_dict()["keep"]["per_label"] == {}
