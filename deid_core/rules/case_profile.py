"""Letter case as evidence: a lower-case word in a mixed-case document is rarely a name.

Why: the rules mask every word no safe list knows, every word a name or place
list has, and every lone letter. In a note written in ordinary mixed case,
names are capitalised; the masked words written in lower case there are mostly
misspellings, abbreviations and everyday words that a name list also holds
("transfered", "micu", "brown sputum"): on the out-of-fold folds of PhysioNet
train 12 of 5,095 such tokens are PHI (one in 425; one in 63 for the words
masked for themselves as a whole), and with one threshold for all of them they
made 390 false alarms. Their reason keeps what the rules found and
gains ":lower_case" (`deid_core.thresholds.LOWER_CASE_SUFFIX`), so they form a
threshold family of their own and the threshold search, not this module,
decides how much network evidence releases them. The network's inputs are
unchanged (it reads the part before the colon).

The same evidence the other way round: a short word written all in capitals
there, that a name or place list holds and a safe list too ("ED", "MI", "OSH",
"GERD", "SAE"), is an abbreviation far more often than a name (the rules leave
out a weekday's, month's or holiday's name: "DEC", "MAR"). It gains
":upper_case" (`upper_case_reason`), its own threshold family. On PhysioNet
train and dev, VAERS dev, the five ICSR probes and 2,400 synthetic narratives
19 of 342 such tokens are PHI: surnames a European report writes in capitals
("SMITH Carl", "STONE Paul"), which the network scores P(safe) <= 0.02, and
"ED" ending a facility's name (0.68, 0.90); the non-PHI ones score above 0.95
in 268 of 323 cases.

A note written all in capitals or all in lower case carries no such evidence
(names are written like every other word there) and is left as it is; a
document counts as mixed case by the shares of its words in lower and in title
case (`CaseProfileConfig`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deid_core.config import CaseProfileConfig
from deid_core.text.tokenize import Token
from deid_core.thresholds import LOWER_CASE_SUFFIX, UPPER_CASE_SUFFIX

#: a medical-list word or a complete drug name this long or longer, in lower case in a mixed-case document,
#: is "medical:lower_case" or "drug:lower_case": on PhysioNet train and dev, VAERS dev and 2,000 synthetic
#: narratives none of about 34,000 such medical tokens is PHI, nor of the 3,532 such drug names; the
#: shorter ones include abbreviations that are also initials or names ("ank", "se")
MEDICAL_LOWER_CASE_MIN_LETTERS = 5
#: the longest word in capitals that `upper_case_reason` reads as an abbreviation ("GERD", "ELISA")
ABBREVIATION_MAX_LETTERS = 5
#: masking reasons that rest on the word alone (a list, its shape); context and pattern matches keep theirs
CASE_SENSITIVE_REASONS = frozenset({"unknown", "unsafe_list", "single_letter"})


@dataclass(frozen=True)
class CaseShares:
    """How a text's words (two letters or more, letters only) are written: counts by case."""

    words: int
    lower: int
    upper: int
    title: int


def case_shares(tokens: Sequence[Token]) -> CaseShares:
    """Count the text's words by case; the one scan behind every "does case say anything here" test."""
    words = lower = upper = title = 0
    for tok in tokens:
        s = tok.text
        if len(s) < 2 or not s.isalpha():
            continue
        words += 1
        lower += s.islower()
        upper += s.isupper()
        title += s.istitle()
    return CaseShares(words, lower, upper, title)


def case_is_evidence(tokens: Sequence[Token], profile: CaseProfileConfig) -> bool:
    """True when the document is written in mixed case, judged on its words of two letters or more."""
    c = case_shares(tokens)
    return bool(c.words) and c.lower >= profile.min_lower_share * c.words and c.title >= profile.min_title_share * c.words


def lower_case_reason(reason: str, tok: Token) -> str:
    """`reason` with the lower-case mark when it rests on the word alone and the word is in lower case."""
    if reason in CASE_SENSITIVE_REASONS and tok.text.islower():
        return reason + LOWER_CASE_SUFFIX
    return reason


def upper_case_reason(reason: str, tok: Token, safe_listed: bool) -> str:
    """`reason` with the upper-case mark for a short word in capitals masked only for a list that a safe list
    also holds (`safe_listed`); call it only where case is evidence."""
    s = tok.text
    if (reason == "unsafe_list" and safe_listed and 2 <= len(s) <= ABBREVIATION_MAX_LETTERS and s.isalpha()
            and s.isupper()):
        return reason + UPPER_CASE_SUFFIX
    return reason


def listed_reason(base: str, tok: Token, case_evidence: bool) -> str:
    """`base` ("medical" or "drug"), with ":lower_case" for a long lower-case word where case is evidence."""
    s = tok.text
    if case_evidence and len(s) >= MEDICAL_LOWER_CASE_MIN_LETTERS and s.isalpha() and s.islower():
        return base + LOWER_CASE_SUFFIX
    return base
