"""Extra per-token inputs of the deep model (variants c and d).

Case shape and a preceding salutation are the thesis's additional inputs;
with `rule_features` the rules' 15 features and their verdict (masked or
not, and why) are appended, so the network learns where the dictionaries
are wrong instead of re-learning what they already know. With
`rule_categories` the verdict's threshold family joins them too (which
pattern matched: a date, an age, a phone number, an ID; and why a safe token
is safe): "a pattern matched" alone lets the network treat "placed 8/14"
like an age under 90, which trains as safe.
"""

from __future__ import annotations

import numpy as np

from deid_core.config import ArchitectureConfig, DeidConfig, read_word_list
from deid_core.rules.deidentifier import RuleAnalysis
from deid_core.rules.features import FEATURE_NAMES
from deid_core.thresholds import LOWER_CASE_SAFE_FAMILIES, PATTERN_FAMILIES, reason_family

CASE_FEATURES: tuple[str, ...] = ("case_lower", "case_upper", "case_title", "case_mixed", "case_no_letters")
REASON_FEATURES: tuple[str, ...] = (
    "rules_unsafe",
    "reason_pattern",
    "reason_context",
    "reason_unsafe_list",
    "reason_digit",
    "reason_single_letter",
    "reason_unknown",
)
_REASON_INDEX = {name.removeprefix("reason_"): i for i, name in enumerate(REASON_FEATURES) if i}
#: with `rule_categories`: the threshold family (`deid_core.thresholds.reason_family`) of a
#: pattern-masked token and of a token the rules call safe for a reason of their own
FAMILY_FEATURES: tuple[str, ...] = tuple(f"family_{f}" for f in (*PATTERN_FAMILIES, "medical", "drug", "clinical"))
_FAMILY_INDEX = {name.removeprefix("family_"): i for i, name in enumerate(FAMILY_FEATURES)}
#: a lower-case family -> the list it splits ("medical_lower_case" -> "medical")
_LIST_OF_FAMILY = {family: base for base, family in LOWER_CASE_SAFE_FAMILIES.items()}


def feature_names(*, extra: bool, rules: bool, categories: bool = False) -> tuple[str, ...]:
    """The feature-vector layout for a configuration; stored in the manifest.

    `categories` adds `FAMILY_FEATURES` after the rules' verdict (only with `rules`).
    """
    if not extra:
        return ()
    names = CASE_FEATURES + ("after_salutation",)
    if rules:
        names += tuple(f"rule_{n}" for n in FEATURE_NAMES) + REASON_FEATURES
        if categories:
            names += FAMILY_FEATURES
    return names


def arch_feature_names(arch: ArchitectureConfig) -> tuple[str, ...]:
    """`feature_names` of an architecture: the one place its three switches are read together."""
    return feature_names(extra=arch.extra_features, rules=arch.rule_features, categories=arch.rule_categories)


def load_salutations(cfg: DeidConfig) -> frozenset[str]:
    """The salutation words ("dr", "mrs") whose next token gets `after_salutation`, lower case, no full stop."""
    return frozenset(w.lower().rstrip(".") for w in read_word_list(cfg.rules.salutations))


def case_index(text: str) -> int:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 4
    if all(c.islower() for c in letters):
        return 0
    if all(c.isupper() for c in letters):
        return 1 if len(letters) > 1 else 2
    if letters[0].isupper() and all(c.islower() for c in letters[1:]):
        return 2
    return 3


def extra_features(
    analysis: RuleAnalysis, salutations: frozenset[str], *, rules: bool, categories: bool = False
) -> np.ndarray:
    """Float32 (n_tokens, n_features) in `feature_names(extra=True, rules=rules, categories=categories)` order."""
    tokens = analysis.tokens
    n_feat = len(feature_names(extra=True, rules=rules, categories=categories))
    out = np.zeros((len(tokens), n_feat), dtype=np.float32)
    if not tokens:
        return out
    base = len(CASE_FEATURES)
    for i, tok in enumerate(tokens):
        out[i, case_index(tok.text)] = 1.0
        if i and tokens[i - 1].lower in salutations:
            out[i, base] = 1.0
    if rules:
        off = base + 1
        out[:, off : off + len(FEATURE_NAMES)] = np.asarray(analysis.features(), dtype=np.float32)
        off += len(FEATURE_NAMES)
        for i, reason in enumerate(analysis.reasons):
            if analysis.unsafe[i]:
                out[i, off] = 1.0
                out[i, off + _REASON_INDEX[reason.split(":", 1)[0]]] = 1.0
        if categories:
            off += len(REASON_FEATURES)
            for i, reason in enumerate(analysis.reasons):
                family = reason_family(reason, analysis.unsafe[i])
                # the network reads a word's list, not the threshold policy's split of it
                k = _FAMILY_INDEX.get(_LIST_OF_FAMILY.get(family, family))
                if k is not None:
                    out[i, off + k] = 1.0
    return out
