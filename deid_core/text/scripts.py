"""Which tokens are written in a script the engine was never trained or tuned on.

Why: the network, the word lists and the thresholds all come from English
text. A word in Han, Cyrillic, Arabic or Devanagari letters inside an English
narrative is most often a name, a place or an institution written as the
reporter knows it ("王芳", "Москва"), and the network's verdict on it is an
extrapolation: a network trained with heavy word dropout called such tokens
safe with P(safe) above 0.998 (docs/measurements.md, issue 14, 2026-12-02).
The combiner therefore never lets such a token back in once the rules masked
it (`deid_core.hybrid.combiner.NeverRelease`): fail closed where the model
has no evidence.

Latin letters are the script of the corpora, and single Greek letters are
clinical notation ("β-hCG", "α1-antitrypsin", "μg"); letters of the Common
script (the micro sign) count with them. A word of three Greek letters or
more ("Αθήνα") is Greek text, not notation, and counts as another script.
The script of a letter comes from the Unicode Character Database through
the `regex` library's script properties, not from a hand-kept table of
code-point ranges.
"""

from __future__ import annotations

import regex

#: a letter of any script but Latin, Greek or Common (combining marks and digits are not letters)
_OTHER_SCRIPT_LETTER = regex.compile(r"(?=\p{L})[^\p{Script=Latin}\p{Script=Greek}\p{Script=Common}]")
_GREEK_LETTER = regex.compile(r"(?=\p{L})\p{Script=Greek}")
#: this many Greek letters in one token make it Greek text rather than notation ("μmol" has one)
GREEK_WORD_LETTERS = 3


def has_other_script(text: str) -> bool:
    """True when `text` holds a letter outside the Latin, Greek and Common scripts, or is a Greek word.

    "Łódź", "β" and "μmol" are False; "王芳", "Москва" and "Αθήνα" are True.
    """
    if text.isascii():  # most narratives: no letter of any other script, decided without a regex
        return False
    if _OTHER_SCRIPT_LETTER.search(text) is not None:
        return True
    return len(_GREEK_LETTER.findall(text, overlapped=False)) >= GREEK_WORD_LETTERS
