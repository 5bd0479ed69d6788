"""The clause around a match: bounded by full stops, semicolons and line breaks, and by the window."""

from __future__ import annotations

from deid_core.text.clauses import clause_around


def test_clause_ends_at_sentence_and_line_ends() -> None:
    text = "Extubated yesterday. RESP: trialed on 5/5; ABG ok\nNeuro: alert"
    start = text.index("5/5")
    lo, hi = clause_around(text, start, start + 3)
    assert text[lo:hi] == " RESP: trialed on 5/5"


def test_clause_is_cut_by_the_window_where_no_end_is_near() -> None:
    text = "a" * 200 + "5/5" + "b" * 200
    lo, hi = clause_around(text, 200, 203, window=10)
    assert (lo, hi) == (190, 213)


def test_clause_at_the_edges_of_the_text() -> None:
    assert clause_around("5/5", 0, 3) == (0, 3)
