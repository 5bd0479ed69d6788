"""Cutting a very long text into pieces that can be de-identified apart, and putting the results back.

Why: a task de-identifies its texts one after another, so one 1 MB narrative
(a literature case with a full paper pasted in, a batch of follow-ups
concatenated) holds its task for minutes while the other cores idle, and
the job waits for it. Cut into pieces of at most `max_chars`, the text is
spread over every task like any other rows.

Where: the cut falls where the least context is lost, searched backwards
from the limit in its last half: a paragraph break, else a line break, else
a sentence end, else a space; only a text without any of those in half a
piece is cut mid-word. The pieces are the text's own characters, in order:
joined, they are the text. The rules and the network look at a few tokens
on either side of a word, so a cut at a paragraph or sentence end changes
nothing they see across it; the replacement is keyed per case, so a name in
two pieces gets the same surrogate in both.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[.!?;:][\"')\]]*\s")


def piece_bounds(text: str, max_chars: int) -> list[tuple[int, int]]:
    """(start, end) of the pieces of `text`, each at most `max_chars` long; one piece when it fits."""
    if max_chars < 2:
        raise ValueError("max_chars must be at least 2")
    n = len(text)
    if n <= max_chars:
        return [(0, n)]
    bounds: list[tuple[int, int]] = []
    start = 0
    while n - start > max_chars:
        end = _cut(text, start, start + max_chars)
        bounds.append((start, end))
        start = end
    bounds.append((start, n))
    return bounds


def _cut(text: str, start: int, limit: int) -> int:
    """The best end for a piece starting at `start`: in (start + half, limit], after a separator."""
    low = start + (limit - start) // 2
    window = text[low:limit]
    for sep in ("\n\n", "\n"):
        i = window.rfind(sep)
        if i >= 0:
            return low + i + len(sep)
    last = None
    for m in _SENTENCE_END.finditer(window):
        last = m
    if last is not None:
        return low + last.end()
    i = max(window.rfind(" "), window.rfind("\t"))
    if i >= 0:
        return low + i + 1
    # no separator in half a piece (a base64 blob, a run of symbols): cut there; Python
    # strings index code points, so a character is never split
    return limit


def pieces(text: str, max_chars: int) -> list[str]:
    """The pieces themselves: ``"".join(pieces(t, m)) == t``."""
    return [text[a:b] for a, b in piece_bounds(text, max_chars)]
