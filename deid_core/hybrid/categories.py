"""Which category a masked token belongs to, from every source of evidence.

The category decides the replacement (a shifted date, a pseudonym, a tag),
so a wrong one is visible in the output: "[DATE]" where a name stood, or a
surname turned into a city. The sources differ in how much they know:

* a regex or context detector matched a shape ("12-JAN-2014", "Dr. X"):
  its category is the most specific evidence there is and always wins;
* the network was trained on categories in context, so when it considers
  the token PHI at all, its most likely PHI class is the best guess;
* a dictionary only knows that a word *can* be a name or a place; it
  decides when the network thinks the token is safe (the token is masked
  only because the rules were cautious), when the network gives its
  category a fair share of the PHI probability, or when there is no network;
* a token the rules cannot name and the network thinks safe stays of
  unknown category ("[PHI]"): inventing one would put "[AGE>89]" on a dose.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deid_core.categories import UNKNOWN_LABEL
from deid_core.rules.deidentifier import RuleAnalysis

#: Reasons whose label comes from a detector that matched a shape or context.
_AUTHORITATIVE = ("pattern:", "context:")
#: P(safe) from which the network's PHI classes are not used to name a category.
SAFE_ENOUGH = 0.5
#: Share of the network's PHI probability that lets a dictionary label stand.
DICTIONARY_SHARE = 0.2


def infer_categories(
    analysis: RuleAnalysis, probs: np.ndarray | None, classes: Sequence[str]
) -> list[str]:
    """One category per token (meaningful for masked tokens only)."""
    n = len(analysis.tokens)
    if probs is None or n == 0:
        return list(analysis.labels)
    phi_best = probs[:, 1:].argmax(axis=1) + 1
    phi_mass = np.maximum(probs[:, 1:].sum(axis=1), 1e-9)
    index = {c: k for k, c in enumerate(classes)}
    out: list[str] = []
    for i in range(n):
        rule_label = analysis.labels[i] if analysis.unsafe[i] else UNKNOWN_LABEL
        if analysis.reasons[i].startswith(_AUTHORITATIVE):
            out.append(rule_label)
        elif probs[i, 0] >= SAFE_ENOUGH:
            # masked out of caution only: the network's PHI classes are noise here
            out.append(rule_label)
        elif rule_label in index and probs[i, index[rule_label]] / phi_mass[i] >= DICTIONARY_SHARE:
            # the network does not rule out what the dictionary says ("from France")
            out.append(rule_label)
        else:
            out.append(classes[int(phi_best[i])])
    return out
