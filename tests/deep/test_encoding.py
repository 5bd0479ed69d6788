from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.corpus.document import GoldSpan
from deid_core.deep.encoding import Encoder, stitch, token_labels, window_bounds
from deid_core.deep.features import CASE_FEATURES, FAMILY_FEATURES, case_index, feature_names
from deid_core.deep.vocabulary import PAD_ID, UNK_ID, Vocabulary, normalise_word
from deid_core.rules.features import FEATURE_NAMES
from deid_core.text.tokenize import tokenize

CLASSES = ["SAFE", "NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER"]
CI = {c: i for i, c in enumerate(CLASSES)}
LABEL_MAP = {c: c for c in CLASSES[1:]}


@given(st.integers(0, 1000), st.integers(8, 64), st.data())
@settings(max_examples=200, deadline=None)
def test_windows_cover_every_token_with_overlap(n: int, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size // 2 - 1))
    bounds = window_bounds(n, size, overlap)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    for (s1, e1), (s2, e2) in zip(bounds, bounds[1:]):
        assert e1 - s1 == size and e2 - s2 <= size
        assert s2 <= e1 - overlap  # consecutive windows share at least `overlap` tokens
        assert s2 > s1
    assert all(e - s <= size for s, e in bounds)


@given(st.integers(1, 300), st.integers(8, 40), st.data())
@settings(max_examples=100, deadline=None)
def test_stitch_takes_most_central_prediction(n: int, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size // 2 - 1))
    bounds = window_bounds(n, size, overlap)
    # each window predicts, for every token, its own distance to the window edge
    probs = []
    for s, e in bounds:
        pos = np.arange(s, e)
        margin = np.minimum(pos - s, e - 1 - pos).astype(np.float32)
        probs.append(np.stack([margin, np.full(e - s, s, dtype=np.float32)], axis=1))
    out = stitch(probs, bounds, n)
    for i in range(n):
        best = max(min(i - s, e - 1 - i) for s, e in bounds if s <= i < e)
        assert out[i, 0] == best


def test_vocabulary_orders_excludes_and_hashes() -> None:
    v = Vocabulary.from_counts(
        Counter({"the": 10, "smith": 5, "rash": 5, "itch": 5, "once": 1}), Counter("abc"), min_count=2,
        max_size=10, excluded={"smith"},
    )
    # by count, ties by spelling; PHI words and rare words left out
    assert v.words == ["<pad>", "<unk>", "the", "itch", "rash"]
    assert v.word_id("Smith".lower()) == UNK_ID
    assert v.word_id("rash") == 4
    again = Vocabulary.from_json(v.to_json())
    assert again.sha256 == v.sha256 and again.words == v.words
    other = Vocabulary.from_counts(Counter({"the": 10}), Counter("abc"), min_count=1, max_size=10)
    assert other.sha256 != v.sha256
    with pytest.raises(ValueError):
        Vocabulary(words=["x"], chars=["<pad>", "<unk>"])


def test_numbers_share_a_shape_key() -> None:
    assert normalise_word("12/03") == normalise_word("98/45") == "00/00"
    assert normalise_word("bp120") == "bp000"


def test_labels_follow_spans_and_age_rule() -> None:
    text = "John Smith, aged 92, and Mary, aged 45, on 12/03/2019."
    toks = tokenize(text)
    spans = [
        GoldSpan(0, 10, "NAME"),
        GoldSpan(17, 19, "AGE"),  # 92: PHI
        GoldSpan(25, 29, "NAME"),
        GoldSpan(36, 38, "AGE"),  # 45: trained as SAFE
        GoldSpan(43, 53, "DATE"),
        GoldSpan(36, 38, "WEIRD"),
    ]
    labels = token_labels(toks, text, spans[:5], CI, LABEL_MAP, 90)
    by_text = {t.text: CLASSES[labels[i]] for i, t in enumerate(toks)}
    assert by_text["John"] == by_text["Smith"] == by_text["Mary"] == "NAME"
    assert by_text["92"] == "AGE" and by_text["45"] == "SAFE"
    assert by_text["2019"] == "DATE" and by_text["aged"] == "SAFE"
    # an unknown corpus label becomes OTHER, never SAFE
    labels = token_labels(toks, text, [spans[5]], CI, LABEL_MAP, 90)
    assert CLASSES[labels[[t.text for t in toks].index("45")]] == "OTHER"


def test_partly_covered_token_is_phi() -> None:
    text = "SmithJones"
    labels = token_labels(tokenize(text), text, [GoldSpan(0, 5, "NAME")], CI, LABEL_MAP, 90)
    assert CLASSES[labels[0]] == "NAME"


def test_case_shapes() -> None:
    assert [case_index(s) for s in ("rash", "ASPIRIN", "Smith", "McDonald", "120", "A")] == [0, 1, 2, 3, 4, 2]


def test_feature_layout(cfg, rules) -> None:  # type: ignore[no-untyped-def]
    names = feature_names(extra=True, rules=True)
    assert names[: len(CASE_FEATURES)] == CASE_FEATURES
    assert len(names) == len(CASE_FEATURES) + 1 + len(FEATURE_NAMES) + 7
    assert feature_names(extra=False, rules=True) == ()
    vocab = Vocabulary.from_counts(Counter({"seen": 2, "by": 2}), Counter("abcdefghijklmnopqrstuvwxyzDS."), min_count=1,
                                   max_size=50)
    # the plain layout (the configured architecture may add the rules' categories: the test below)
    enc = Encoder(vocab, cfg.deep.architecture.model_copy(update={"rule_categories": False}), CLASSES, frozenset({"dr"}))
    a = rules.analyse("Seen by Dr. Smith.")
    doc = enc.encode(a)
    assert doc.features.shape == (4, len(names))
    sal = names.index("after_salutation")
    assert doc.features[3, sal] == 1.0 and doc.features[:3, sal].sum() == 0
    assert doc.features[3, names.index("rules_unsafe")] == 1.0
    assert doc.word_ids[1] == vocab.word_id("by") and doc.word_ids[3] == UNK_ID
    # post-space characters follow the token's own characters directly (variant d): "Dr. "
    dr = doc.char_ids[2]
    assert dr[:4].tolist() == [vocab.char_id(c) for c in "Dr. "] and dr[4:].sum() == 0
    assert PAD_ID == 0


def test_rule_categories_tell_a_date_from_an_age(cfg, rules) -> None:  # type: ignore[no-untyped-def]
    """With `rule_categories`, a pattern's category and a safe token's reason join the verdict."""
    plain = feature_names(extra=True, rules=True)
    names = feature_names(extra=True, rules=True, categories=True)
    assert names == plain + FAMILY_FEATURES
    assert feature_names(extra=True, rules=False, categories=True) == feature_names(extra=True, rules=False)
    vocab = Vocabulary.from_counts(Counter({"line": 2}), Counter("abcdefghijklmnopqrstuvwxyzA0123456789/ .,"), min_count=1,
                                   max_size=50)
    arch = cfg.deep.architecture.model_copy(update={"rule_categories": True})
    enc = Encoder(vocab, arch, CLASSES, frozenset())
    # (a drug right before its dose is a product, "clinical": the drug here stands apart from it)
    a = rules.analyse("A 45 yo with a line placed 8/14, aspirin daily at 81 mg.")
    doc = enc.encode(a)
    assert doc.features.shape == (len(a.tokens), len(names))
    texts = [t.text for t in a.tokens]
    row = {t: doc.features[texts.index(t)] for t in ("45", "14", "81", "aspirin", "with")}
    date, age, clinical, drug = (names.index(f"family_{f}") for f in ("pattern:DATE", "pattern:AGE", "clinical", "drug"))
    assert row["14"][date] == 1.0 and row["14"][age] == 0.0
    assert row["45"][age] == 1.0 and row["45"][date] == 0.0
    # both are "a pattern matched" in the plain layout: only the category tells them apart
    reason = names.index("reason_pattern")
    assert row["14"][reason] == row["45"][reason] == 1.0
    assert row["81"][clinical] == 1.0 and row["aspirin"][drug] == 1.0
    assert row["with"][len(plain):].sum() == 0.0
    # the plain layout is the old one, column for column
    old = Encoder(vocab, cfg.deep.architecture.model_copy(update={"rule_categories": False}), CLASSES,
                  frozenset()).encode(a)
    np.testing.assert_array_equal(doc.features[:, : len(plain)], old.features)
