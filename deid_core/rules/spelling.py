"""Misspelt words: an unknown word one typing slip away from a word the dictionaries call safe.

Why this module exists: nursing notes and lay reports are typed fast, and
every misspelling ("PENUMONIA", "udated", "INUTBATED", "gradully") is a word
no list knows, so the rules mask it as "unknown". That family's threshold has
to stay near 1 because rare names are unknown words too, and so a third of
PhysioNet dev's unknown-word false alarms were misspellings the network was
already sure of (P(safe) 0.95-0.996). A word one edit (a letter dropped,
added, changed, or two swapped: Damerau's four slips) from a common, medical
or drug word, of at least `MIN_LETTERS` letters, gets a reason of its own
("unknown:near_word") so that policy can hold it to a lower threshold than
other unknown words (`conf/deid.yaml`, `by_reason.near_word`). It stays
masked by the rules: the network still decides, and names that look like
misspellings ("Lerato", "Asare", "Sione") score low there.

Written here rather than with a spelling library (pyspellchecker,
symspellpy): those correct against their own frequency lists, which hold
names and places; the question here is only whether the project's own
dictionary artifact knows a safe word one edit away, a set lookup per
candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from deid_core.dictionaries.flags import Lex

#: shorter words are too often a name one letter from a word ("Asare"/"aware" is five)
MIN_LETTERS = 5
#: what the near word must be: a word a list calls safe for what it means
_SAFE_WORD = int(Lex.COMMON_WORD | Lex.MEDICAL | Lex.DRUG_NAME | Lex.MEDDRA | Lex.WHODRUG)
#: ... and must not also be: a name, a place or a date word ("Browne" is one slip from "brown", a surname)
_NOT_SAFE = int(Lex.FIRST_NAME | Lex.SURNAME | Lex.CITY | Lex.STATE | Lex.COUNTRY | Lex.STREET
                | Lex.INSTITUTION | Lex.WEEKDAY | Lex.MONTH | Lex.HOLIDAY | Lex.USER_DENY)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _one_edit(word: str) -> Iterator[str]:
    """Every string one Damerau edit from `word` (lower-case ASCII letters), the shortest first."""
    n = len(word)
    for i in range(n):
        yield word[:i] + word[i + 1:]
    for i in range(n - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2:]
    for i in range(n):
        for c in _LETTERS:
            if c != word[i]:
                yield word[:i] + c + word[i + 1:]
    for i in range(n + 1):
        for c in _LETTERS:
            yield word[:i] + c + word[i:]


def near_safe_word(word: str, flags: Callable[[str], int]) -> bool:
    """True when `word` is one slip from a safe dictionary word of at least `MIN_LETTERS` - 1 letters.

    `flags`: the dictionary artifact's lookup of a lower-case word. Only plain
    ASCII words of `MIN_LETTERS` letters or more are judged; the caller has
    already found `word` itself on no list.
    """
    low = word.lower()
    if len(low) < MIN_LETTERS or not (low.isascii() and low.isalpha()):
        return False
    for candidate in _one_edit(low):
        if len(candidate) < MIN_LETTERS - 1:
            continue
        f = flags(candidate)
        if f & _SAFE_WORD and not f & _NOT_SAFE:
            return True
    return False
