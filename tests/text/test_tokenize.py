"""Tokeniser: i2b2-style runs of letters/digits with offsets and post-space."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.text.tokenize import POST_SPACE_CHARS, token_shape, token_spans, tokenize


def texts(text: str) -> list[str]:
    return [t.text for t in tokenize(text)]


def test_splits_at_everything_but_letters_and_digits() -> None:
    assert texts("Dr. O'Brien saw pt on 12-JAN-2014 (t=38.5C).") == [
        "Dr", "O", "Brien", "saw", "pt", "on", "12", "JAN", "2014", "t", "38", "5C",
    ]


def test_underscore_and_symbols_separate() -> None:
    assert texts("a_b c@d.com 5mg/kg") == ["a", "b", "c", "d", "com", "5mg", "kg"]


def test_unicode_letters_and_combining_marks_stay_in_one_token() -> None:
    decomposed = "Mu\u0308ller"  # "Müller" with a combining diaeresis
    assert texts(f"Björn {decomposed} São Łódź 東京") == ["Björn", decomposed, "São", "Łódź", "東京"]


def test_offsets_index_and_post_space() -> None:
    toks = tokenize("Mr.  Smith, 45 yrs")
    assert [(t.start, t.end, t.index) for t in toks] == [(0, 2, 0), (5, 10, 1), (12, 14, 2), (15, 18, 3)]
    assert [t.post_space for t in toks] == [".  ", ", ", " ", ""]


def test_post_space_is_capped() -> None:
    toks = tokenize("end.....next")
    assert toks[0].post_space == "." * POST_SPACE_CHARS


def test_lower_and_shape() -> None:
    t = tokenize("McDonald")[0]
    assert t.lower == "mcdonald"
    assert t.shape == "XxXxxxx"
    assert token_shape("20140112") == "dddd"
    assert token_shape("AB12") == "XXdd"
    assert token_shape("Ωmega") == "Xxxxx"


def test_empty_and_separator_only_text() -> None:
    assert tokenize("") == []
    assert tokenize(" \n\t-/.") == []


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_offsets_always_slice_the_text(text: str) -> None:
    toks = tokenize(text)
    prev_end = 0
    for i, t in enumerate(toks):
        assert text[t.start:t.end] == t.text
        assert t.start >= prev_end and t.end > t.start
        assert t.index == i
        gap_end = toks[i + 1].start if i + 1 < len(toks) else len(text)
        assert t.post_space == text[t.end:min(gap_end, t.end + POST_SPACE_CHARS)]
        prev_end = t.end
    assert [(t.start, t.end) for t in toks] == token_spans(text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_tokens_are_maximal(text: str) -> None:
    """No two tokens touch, and no letter or decimal digit is left outside a token."""
    toks = tokenize(text)
    for a, b in zip(toks, toks[1:]):
        assert a.end < b.start
    covered = {i for t in toks for i in range(t.start, t.end)}
    for i, ch in enumerate(text):
        if i not in covered:
            assert not ch.isalpha() and not ch.isdecimal()
