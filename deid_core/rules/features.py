"""The method's 15 per-token rule features.

They are computed from the same dictionary flags the rules decide with, and
feed the deep model (variants c and d) so that it learns when the
dictionaries are wrong. Order matters: it is the feature-vector layout.
"""

from __future__ import annotations

from collections.abc import Sequence

from deid_core.dictionaries.flags import Bits
from deid_core.text.tokenize import Token

FEATURE_NAMES: tuple[str, ...] = (
    "is_possibly_city",
    "has_capital_beginning",
    "is_sentence_beginning",
    "is_possibly_name",
    "is_common_word",
    "is_digit",
    "contains_digit",
    "is_medical_term",
    "is_weekday",
    "is_month",
    "is_top_level_domain",
    "is_street",
    "is_holiday",
    "is_single_letter",
    "is_written_out_number",
)

_SENTENCE_END = frozenset(".!?\n")


def is_sentence_beginning(tokens: Sequence[Token], i: int) -> bool:
    """First token, or the gap before it holds sentence-final punctuation or a line break."""
    if i == 0:
        return True
    return any(ch in _SENTENCE_END for ch in tokens[i - 1].post_space)


def preceded_by_dot(text: str, tok: Token) -> bool:
    return tok.start > 0 and text[tok.start - 1] == "."


def token_features(text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[tuple[bool, ...]]:
    """One boolean tuple per token, in `FEATURE_NAMES` order.

    `flags` are the effective dictionary flags (phrase matches included).
    """
    out: list[tuple[bool, ...]] = []
    for i, tok in enumerate(tokens):
        f = flags[i]
        s = tok.text
        out.append(
            (
                bool(f & Bits.CITY),
                s[:1].isupper(),
                is_sentence_beginning(tokens, i),
                bool(f & Bits.NAME),
                bool(f & (Bits.STOPWORD | Bits.COMMON_WORD)),
                s.isdigit(),
                any(ch.isdigit() for ch in s),
                bool(f & Bits.MEDICAL),
                bool(f & Bits.WEEKDAY),
                bool(f & Bits.MONTH),
                bool(f & Bits.TLD) and preceded_by_dot(text, tok),
                bool(f & Bits.STREET),
                bool(f & Bits.HOLIDAY),
                len(s) == 1 and s.isalpha(),
                bool(f & Bits.WRITTEN_NUMBER),
            )
        )
    return out
