"""Cutting long texts: pieces join back to the text, stay within the limit, and cut where least is lost."""

from __future__ import annotations

import random

import pytest

from deid_core.text.pieces import piece_bounds, pieces


def test_a_text_that_fits_is_one_piece() -> None:
    assert piece_bounds("", 100) == [(0, 0)]
    assert piece_bounds("x" * 100, 100) == [(0, 100)]


@pytest.mark.parametrize("seed", range(20))
def test_pieces_join_back_and_respect_the_limit(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = ["word", "Smith", " ", " ", "\n", "\n\n", ". ", "12/03/2019", "é", "\u200b", "🙂"]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4000)))
    limit = rng.randint(2, 500)
    bounds = piece_bounds(text, limit)
    assert "".join(pieces(text, limit)) == text
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    assert all(a < b or len(text) == 0 for a, b in bounds)
    assert all(b - a <= limit for a, b in bounds)
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))


def test_cuts_prefer_paragraphs_then_lines_then_sentences_then_spaces() -> None:
    para = "The patient John Smith took 40 mg. He recovered.\n\n"
    bounds = piece_bounds(para * 40, 300)
    assert all((para * 40)[b - 2 : b] == "\n\n" for _, b in bounds[:-1])
    lines = "Dose 40 mg daily since 12/03/2019 by Dr Jones\n" * 40
    assert all(lines[b - 1] == "\n" for _, b in piece_bounds(lines, 300)[:-1])
    sentences = "Dose was 40 mg. Seen by Dr Jones. " * 40
    assert all(sentences[b - 2 : b] == ". " for _, b in piece_bounds(sentences, 300)[:-1])
    words = "alpha beta gamma delta " * 60
    assert all(words[b - 1] == " " for _, b in piece_bounds(words, 300)[:-1])


def test_a_word_is_cut_only_when_half_a_piece_has_no_separator() -> None:
    blob = "A" * 1000
    assert piece_bounds(blob, 300) == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    # a space in the first half of the window is not used: the piece would be too short
    text = "ab " + "x" * 997
    assert piece_bounds(text, 300)[0] == (0, 300)


def test_a_megabyte_narrative_is_cut_quickly_into_bounded_pieces() -> None:
    text = ("On 12/03/2019 the patient Jane Roe, 54, received 40 mg of drug X. " * 16_000)[:1_000_000]
    bounds = piece_bounds(text, 20_000)
    assert 50 <= len(bounds) <= 100 and max(b - a for a, b in bounds) <= 20_000


def test_the_limit_must_allow_a_piece() -> None:
    with pytest.raises(ValueError):
        piece_bounds("abc", 1)
