"""The clause around a position: the stretch of text between the sentence or line ends on either side.

Why: a few rules ask whether a word occurs in the same clause as a match ("trialed on 5/5" is a
ventilator setting only in a sentence that names the ventilator). A clause here ends at a full stop,
a semicolon or a line break, searched within a window on either side, so the answer stays local and
costs the same on a one-line note as on a 1 MB narrative. A full stop inside a decimal ("0.5") also
ends it; rules that need better take tokens instead.
"""

from __future__ import annotations

#: the characters that end a clause
CLAUSE_END = ".;\n"


def clause_around(text: str, start: int, end: int, window: int = 80) -> tuple[int, int]:
    """[start, end) of the clause holding text[start:end], looked for at most `window` characters out."""
    lo = max(0, start - window)
    hi = min(len(text), end + window)
    cut = max(text.rfind(c, lo, start) for c in CLAUSE_END)
    first = cut + 1 if cut >= 0 else lo
    ends = [i for i in (text.find(c, end, hi) for c in CLAUSE_END) if i >= 0]
    return first, (min(ends) if ends else hi)
