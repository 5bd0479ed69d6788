"""Tokeniser shared by the de-identifiers and the evaluation.

The evaluation counts PHI per token, so detection and scoring must cut text
the same way; this module is the single definition of a token. As in the
i2b2 evaluation tokeniser, a token is a maximal run of letters or digits and
every other character separates tokens. Unicode-aware: letters and digits of
any script count, and combining marks stay attached to their base letter so
that decomposed accents ("e" + U+0301) do not split a name in two.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

# \p{L} letters, \p{N} digits/numbers, \p{M} combining marks. Underscore and
# punctuation are separators, as in the i2b2 tokeniser.
_TOKEN_RE = regex.compile(r"[\p{L}\p{N}\p{M}]+")

#: How many characters of the gap after a token are kept as "post-space".
POST_SPACE_CHARS = 3
#: Runs of one shape class longer than this are collapsed in `token_shape`.
_SHAPE_RUN = 4


@dataclass(frozen=True, slots=True)
class Token:
    """One token with its position in the original text.

    `post_space` is what stands between this token and the next one (up to
    three characters), which the deep model uses to tell "Dr." from "Dr" or
    "12/03" from "12 03" without a separate punctuation token.
    """

    text: str
    start: int
    end: int
    index: int
    post_space: str
    #: lower-cased text, computed once: every dictionary look-up uses it
    lower: str = ""

    @property
    def shape(self) -> str:
        return token_shape(self.text)


def token_shape(text: str) -> str:
    """Character-class shape: X upper, x lower, d digit, o other letter-like.

    Runs are capped so that long words and numbers share a shape
    ("Smith" -> "Xxxxx", "Johnston" -> "Xxxxx", "20140112" -> "dddd").
    """
    out: list[str] = []
    run_char = ""
    run_len = 0
    for ch in text:
        if ch.isdigit():
            c = "d"
        elif ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        else:
            c = "o"
        if c == run_char:
            run_len += 1
            if run_len > _SHAPE_RUN:
                continue
        else:
            run_char, run_len = c, 1
        out.append(c)
    return "".join(out)


def tokenize(text: str) -> list[Token]:
    """Split `text` into tokens carrying offsets and post-space characters."""
    spans = [(m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]
    tokens: list[Token] = []
    n = len(spans)
    for i, (start, end) in enumerate(spans):
        gap_end = spans[i + 1][0] if i + 1 < n else len(text)
        tokens.append(
            Token(
                text=text[start:end],
                start=start,
                end=end,
                index=i,
                post_space=text[end:min(gap_end, end + POST_SPACE_CHARS)],
                lower=text[start:end].lower(),
            )
        )
    return tokens


def token_spans(text: str) -> list[tuple[int, int]]:
    """Offsets only; cheaper when the evaluation needs just positions."""
    return [(m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]
