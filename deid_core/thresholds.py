"""The (low, high) pair of the adaptive-threshold combiner, as used and as stored.

The combiner (`deid_core.hybrid`) applies the pair; a model's manifest
(`deid_core.deep.manifest`) stores a tuned one together with where it was
tuned and how it did. One type serves both, so a manifest's thresholds are
handed to the combiner as they are. It lives below both packages because
the network and the combiner must not import each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

#: the mark of a pattern match read from its place alone ("pattern:AGE:place_only": a number between commas
#: after a name, "Irma, 58,"): not in `PATTERN_FAMILIES`, so it takes the never-released "pattern" family
PLACE_ONLY_SUFFIX = ":place_only"
#: pattern detectors whose matches form a family of their own: a date, an age, a phone number and an ID
#: are not equally often right (a ventilator setting "10/5" reads as a date, an age under 90 is no PHI)
PATTERN_FAMILIES: tuple[str, ...] = ("pattern:DATE", "pattern:AGE", "pattern:PHONE", "pattern:ID")
#: the family of a word masked only for its shape or a list but written in lower case in a mixed-case
#: document ("unknown:lower_case"; `deid_core.rules.case_profile`): rarely a name, so it gets its own threshold
LOWER_CASE_FAMILY = "lower_case"
LOWER_CASE_SUFFIX = ":" + LOWER_CASE_FAMILY
#: the family of a short word in capitals in a mixed-case document that a name or place list holds and a safe
#: list too ("ED", "MI", "OSH", "GERD", "SAE"; reason "unsafe_list:upper_case", `deid_core.rules.case_profile`):
#: where capitals mark names by their first letter only, a word written all in capitals is an abbreviation
#: far more often than a name (a European report's surname in capitals, "SMITH Carl", the exception)
UPPER_CASE_FAMILY = "upper_case"
UPPER_CASE_SUFFIX = ":" + UPPER_CASE_FAMILY
#: the family of an unknown word one typing slip from a safe dictionary word ("PENUMONIA", "udated";
#: reason "unknown:near_word", `deid_core.rules.spelling`): a misspelling far more often than a name
NEAR_WORD_FAMILY = "near_word"
NEAR_WORD_SUFFIX = ":" + NEAR_WORD_FAMILY
#: the family of a letter of a dotted two-letter abbreviation that spells a safe-list word ("H.O.", "a.m.",
#: "O.R."; reason "single_letter:dotted_pair"): such a pair is also written for a person's initials
DOTTED_PAIR_FAMILY = "dotted_pair"
DOTTED_PAIR_SUFFIX = ":" + DOTTED_PAIR_FAMILY
#: the family of a medical-list word of five letters or more written in lower case in a mixed-case document
#: ("medical:lower_case"): in a note whose capitals mark names, such a word ("melanoma", "spondylitis")
#: is vocabulary, and a reviewer needs it; the family lets policy hold it to a lower bar than "medical"
MEDICAL_LOWER_CASE_FAMILY = "medical_lower_case"
#: the same for a complete drug name ("drug:lower_case": "sacubitril", "nirsevimab"): generic names are
#: written in lower case, and the network, trained on nursing notes, doubts the newer ones
DRUG_LOWER_CASE_FAMILY = "drug_lower_case"
#: safe reason -> its lower-case family (the reason "medical:lower_case" -> "medical_lower_case")
LOWER_CASE_SAFE_FAMILIES: dict[str, str] = {"medical": MEDICAL_LOWER_CASE_FAMILY, "drug": DRUG_LOWER_CASE_FAMILY}
#: why the rules masked a token (`RuleAnalysis.reasons`, the part before ":"; a pattern's category
#: for `PATTERN_FAMILIES`, with "pattern" for the other detectors and as their fallback)
#: a masked reason's mark -> the family it takes ("unknown:lower_case" -> "lower_case")
MASKED_MARK_FAMILIES: dict[str, str] = {
    LOWER_CASE_SUFFIX: LOWER_CASE_FAMILY, NEAR_WORD_SUFFIX: NEAR_WORD_FAMILY, DOTTED_PAIR_SUFFIX: DOTTED_PAIR_FAMILY,
    UPPER_CASE_SUFFIX: UPPER_CASE_FAMILY,
}
MASKED_REASONS: tuple[str, ...] = ("pattern", "context", "unsafe_list", "digit", "single_letter", "unknown",
                                   *PATTERN_FAMILIES, *MASKED_MARK_FAMILIES.values())
#: why the rules call a token safe: a safe list, a medical/MedDRA list, a complete drug name, clinical-value
#: evidence ("40 mg"), the article before a number or a safe word ("A 45-year-old"), or a word for a
#: relative ("son", "AUNTS", "grandson")
SAFE_REASONS: tuple[str, ...] = ("safe", "medical", "drug", "clinical", "article", "relation",
                                 *LOWER_CASE_SAFE_FAMILIES.values())


def reason_family(reason: str, rules_unsafe: bool) -> str:
    """The family a token's threshold is looked up by ("digit", "pattern:DATE", "pattern" for "pattern:EMAIL",
    "lower_case" for "unknown:lower_case", "upper_case" for "unsafe_list:upper_case", "near_word" for "unknown:near_word", "dotted_pair" for
    "single_letter:dotted_pair", "medical_lower_case" for the safe "medical:lower_case",
    "drug_lower_case" for "drug:lower_case").

    One definition for the combiner at run time and the threshold search, so
    a threshold is applied to exactly the tokens it was tuned on. A reason
    outside the known families counts as "unknown" (masked) or "safe".
    """
    if rules_unsafe and reason in PATTERN_FAMILIES:
        return reason
    if rules_unsafe and ":" in reason:
        family = MASKED_MARK_FAMILIES.get(reason[reason.rindex(":"):])
        if family is not None:
            return family
    if not rules_unsafe and reason.endswith(LOWER_CASE_SUFFIX):
        base = reason.removesuffix(LOWER_CASE_SUFFIX)
        if base in LOWER_CASE_SAFE_FAMILIES:
            return LOWER_CASE_SAFE_FAMILIES[base]
    family = reason.split(":", 1)[0]
    if rules_unsafe:
        return family if family in MASKED_REASONS else "unknown"
    return family if family in SAFE_REASONS else "safe"


class Thresholds(BaseModel):
    """P(safe) must exceed `low` to release a token the rules call safe, `high` for one they masked.

    `by_reason` generalises the pair: a threshold for the tokens of one rule
    reason (a masked reason such as "digit", or a safe one such as
    "clinical"); reasons it does not name use `low` or `high`. The optional
    fields record a tuned pair's provenance in the manifest (target recall,
    dev set, the recall and precision reached there).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    target_recall: float | None = None
    tuned_on: str | None = None
    recall: float | None = None
    precision: float | None = None
    #: left out of the JSON when empty, so that manifests written before it existed round-trip unchanged
    by_reason: dict[str, float] = Field(default_factory=dict, exclude_if=lambda v: not v)

    @field_validator("by_reason")
    @classmethod
    def _known_reasons(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(v) - set(MASKED_REASONS) - set(SAFE_REASONS))
        if unknown:
            raise ValueError(f"unknown rule reasons {unknown} (known: {', '.join(MASKED_REASONS + SAFE_REASONS)})")
        if any(not 0.0 <= t <= 1.0 for t in v.values()):
            raise ValueError("a threshold is a probability, between 0 and 1")
        return v

    def per_token(self, rules_unsafe: np.ndarray, reasons: Sequence[str]) -> np.ndarray:
        """The threshold each token's P(safe) must exceed: its reason's, else `high` (masked) or `low` (safe)."""
        out = np.where(rules_unsafe, self.high, self.low).astype(float)
        if self.by_reason:
            # one lookup per distinct (reason, verdict), not per token: a report repeats a handful
            unsafe = np.asarray(rules_unsafe, dtype=bool)
            keys = list(zip(reasons, unsafe.tolist(), strict=True))
            family = {k: self._lookup(reason_family(*k)) for k in set(keys)}
            for i, key in enumerate(keys):
                t = family[key]
                if t is not None:
                    out[i] = t
        return out

    def _lookup(self, family: str) -> float | None:
        """A family's threshold; a pattern kind without its own (a manifest tuned before the split) uses "pattern"'s."""
        t = self.by_reason.get(family)
        if t is None and family in PATTERN_FAMILIES:
            t = self.by_reason.get("pattern")
        return t

    def __init__(self, low: float, high: float, **provenance: Any) -> None:
        """`Thresholds(0.9, 0.95)` reads like the pair it is; provenance goes by keyword."""
        super().__init__(low=low, high=high, **provenance)
