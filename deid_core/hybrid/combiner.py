"""The adaptive-threshold rule that joins the rules and the network (thesis 4.3.5).

A token is let back in only when the network is confident it is safe:
P(safe) > `low` where the rules call it safe (a rare miss of the rules is
still caught), P(safe) > `high` where the rules masked it (their many false
alarms are undone only on strong evidence). Tokens the rules masked that
carry a weekday, month, street, holiday or written-out-number flag never
come back: their threshold is infinite.

The thesis's lists hold unambiguous date and street words. Ours also hold
abbreviations that are everyday clinical words ("sat" for saturation,
"dec" for decreased, the modal "may", "one"). For the flag kinds listed in
`CombinerConfig.ambiguous_never_release_use_high`, a word that is also on
a safe list goes to the high threshold instead; an unambiguous one
("Monday", "January", "Street") is still never released.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from deid_core.categories import SAFE_LABEL
from deid_core.config import DeidConfig
from deid_core.dictionaries.flags import Lex
from deid_core.hybrid.categories import infer_categories
from deid_core.results import MaskedToken
from deid_core.rules.deidentifier import RuleAnalysis
from deid_core.rules.patterns.ages import age_upper_bound
from deid_core.text.scripts import has_other_script
from deid_core.thresholds import Thresholds

NEVER_RELEASE_KINDS: dict[str, int] = {
    "weekday": int(Lex.WEEKDAY),
    "month": int(Lex.MONTH),
    "street": int(Lex.STREET),
    "holiday": int(Lex.HOLIDAY),
    "written_number": int(Lex.WRITTEN_NUMBER),
}
_ALL_NEVER = 0
for _bit in NEVER_RELEASE_KINDS.values():
    _ALL_NEVER |= _bit
_SAFE_WORD = int(Lex.STOPWORD | Lex.COMMON_WORD | Lex.MEDICAL | Lex.DRUG | Lex.DRUG_NAME | Lex.MEDDRA | Lex.WHODRUG)
#: the rules' reason of a token the AGE detector found (one read from its place alone has a longer one)
AGE_REASON = "pattern:AGE"


def _group_of(analysis: RuleAnalysis, i: int) -> int:
    """The token's match group, or a key of its own (-(i + 1)) when it has none."""
    g = analysis.groups[i] if analysis.groups else -1
    return g if g >= 0 else -(i + 1)


class NeverRelease:
    """Decides which rule-masked tokens keep an infinite threshold.

    Besides the thesis's word kinds, an age the AGE detector found is never
    released when it is `age_min` or more, or when its value cannot be read
    (`age_upper_bound`: "nineties", a range judged by its upper end): ages over
    89 are HIPAA identifiers whatever the network thinks, and they are too
    rare in training data for it to learn that from examples. Without
    `age_min` every age is never released. The tokens of one age match are
    judged together ("ninety-two" is 92, not "ninety" and "two").

    With `other_scripts`, a masked word written in a script the engine was
    never trained on (Han, Cyrillic, Arabic, ..., or a Greek word:
    `deid_core.text.scripts`) is never released either: the network's P(safe)
    for it is an extrapolation, not evidence.
    """

    def __init__(
        self,
        ambiguous_use_high: Iterable[str] = (),
        age_min: int | None = None,
        patterns: Iterable[str] = (),
        other_scripts: bool = False,
        word_kinds: bool = True,
    ) -> None:
        #: False: the word kinds (weekday, month, street, ...) are left to the network (the deep
        #: method without a rendering policy); ages, `patterns` and other scripts still apply
        self.word_kinds = word_kinds
        self.exempt_bits = 0
        for kind in ambiguous_use_high:
            self.exempt_bits |= NEVER_RELEASE_KINDS[kind]
        self.age_min = age_min
        #: detector categories a policy wants masked whatever the network says
        self.pattern_reasons = frozenset(f"pattern:{c}" for c in patterns)
        self.other_scripts = other_scripts

    def mask(self, analysis: RuleAnalysis) -> np.ndarray:
        """Rule-masked tokens that keep an infinite threshold (the hybrid's view)."""
        return self._decide(analysis, want_shown=False)[0]

    def decide(self, analysis: RuleAnalysis) -> tuple[np.ndarray, np.ndarray]:
        """The deep method's view: (tokens always masked, ages always shown), ages read once.

        The second mask holds the tokens of an age the AGE detector found that
        is under `age_min` (not PHI: "a 45-year-old"). The deep method shows
        these whatever the network's most likely class, as the hybrid does
        through its ``pattern:AGE`` threshold of 0: the network is trained to
        call them SAFE (`age_phi_min`) but reads a number's value from its
        characters: the committed one still calls 14 of the 141 such ages of
        PhysioNet train and dev PHI. It is empty without `age_min`, or when a
        policy masks every age (``pattern:AGE`` among `patterns`).
        """
        return self._decide(analysis, want_shown=True)

    def _decide(self, analysis: RuleAnalysis, want_shown: bool) -> tuple[np.ndarray, np.ndarray]:
        out = np.zeros(len(analysis.tokens), dtype=bool)
        shown = np.zeros(len(analysis.tokens), dtype=bool)
        never_ages: dict[int, bool] | None = None
        # one look at the whole text: a text of ASCII characters holds no word of another script
        scripts = self.other_scripts and has_other_script(analysis.text)
        for i, f in enumerate(analysis.flags):
            if not analysis.unsafe[i]:
                continue
            if analysis.reasons[i] in self.pattern_reasons:
                out[i] = True
                continue
            if analysis.reasons[i] == AGE_REASON:
                if never_ages is None:
                    never_ages = self._ages_never_released(analysis)
                never = never_ages.get(_group_of(analysis, i), True)
                out[i] = never
                shown[i] = want_shown and not never
                continue
            if scripts:
                tok = analysis.tokens[i]
                if has_other_script(analysis.text[tok.start:tok.end]):
                    out[i] = True
                    continue
            kinds = f & _ALL_NEVER if self.word_kinds else 0
            if not kinds:
                continue
            ambiguous = bool(f & _SAFE_WORD) and not (kinds & ~self.exempt_bits)
            out[i] = not ambiguous
        return out, shown

    def _ages_never_released(self, analysis: RuleAnalysis) -> dict[int, bool]:
        """Per age match (its group id; -(i + 1) for a lone token): is it never released?"""
        spans: dict[int, tuple[int, int]] = {}
        for i, reason in enumerate(analysis.reasons):
            if reason == AGE_REASON and analysis.unsafe[i]:
                g = _group_of(analysis, i)
                tok = analysis.tokens[i]
                s, e = spans.get(g, (tok.start, tok.end))
                spans[g] = (min(s, tok.start), max(e, tok.end))
        out: dict[int, bool] = {}
        for g, (s, e) in spans.items():
            value = age_upper_bound(analysis.text[s:e])
            out[g] = self.age_min is None or value is None or value >= self.age_min
        return out


def group_min(p_safe: np.ndarray, groups: Sequence[int]) -> np.ndarray:
    """P(safe) of each grouped token replaced by the least safe of its group.

    Tokens of one date, phone number or titled name are released together
    or not at all: a half-masked "8/[DATE]" still narrows the date. Grouped
    tokens are all rules-unsafe, so "every token above the high threshold"
    equals "the group's minimum above it", and the threshold search stays exact.
    """
    out = np.clip(np.nan_to_num(np.asarray(p_safe, dtype=np.float64), nan=0.0), 0.0, 1.0)
    g = np.asarray(groups, dtype=np.int64)
    if g.size == 0 or g.max(initial=-1) < 0:
        return out
    sel = g >= 0
    ids = g[sel]
    mins = np.full(ids.max() + 1, np.inf)
    np.minimum.at(mins, ids, out[sel])
    out[sel] = mins[ids]
    return out


def released(rules_unsafe: np.ndarray, never: np.ndarray, p_safe: np.ndarray, t: Thresholds,
             reasons: Sequence[str] = (), groups: Sequence[int] = ()) -> np.ndarray:
    """True where the token may be shown; NaN probabilities are never released (fail closed).

    Without `reasons` the thesis's pair applies; with them, `t.by_reason` too.
    A group (a date, a titled name, an initial and its surname) is shown only
    when every token of it may be: with a threshold per reason its tokens can
    face different thresholds, and half a name still narrows who it is.
    """
    p = np.nan_to_num(p_safe, nan=0.0)
    if reasons and t.by_reason:
        keep = (~(rules_unsafe & never)) & (p > t.per_token(rules_unsafe, reasons))
    else:
        keep = np.where(rules_unsafe, (~never) & (p > t.high), p > t.low)
    g = np.asarray(groups, dtype=np.int64)
    if g.size and g.max(initial=-1) >= 0:
        sel = g >= 0
        ids = g[sel]
        blocked = np.zeros(ids.max() + 1, dtype=bool)
        np.logical_or.at(blocked, ids, ~keep[sel])
        keep[sel] &= ~blocked[ids]
    return keep


class Combiner:
    def __init__(self, classes: Sequence[str], thresholds: Thresholds, never_release: NeverRelease) -> None:
        if classes[0] != SAFE_LABEL:
            raise ValueError("class 0 must be SAFE")
        self.classes = list(classes)
        self.thresholds = thresholds
        self.never_release = never_release

    def combine(self, analysis: RuleAnalysis, probs: np.ndarray) -> list[MaskedToken]:
        """Masked tokens with a category and score (P(PHI) by the network, at least the rules' score)."""
        n = len(analysis.tokens)
        if probs.shape != (n, len(self.classes)):
            raise ValueError("probabilities do not match the tokens")
        rules_unsafe = np.asarray(analysis.unsafe, dtype=bool)
        never = self.never_release.mask(analysis)
        keep = released(rules_unsafe, never, group_min(probs[:, 0], analysis.groups), self.thresholds,
                        analysis.reasons, analysis.groups)
        out: list[MaskedToken] = []
        labels = infer_categories(analysis, probs, self.classes)
        groups = analysis.groups or [-1] * n
        for i in np.flatnonzero(~keep):
            tok = analysis.tokens[i]
            score = max(float(1.0 - probs[i, 0]), analysis.scores[i])
            out.append(MaskedToken(tok.start, tok.end, labels[i], round(min(1.0, max(0.0, score)), 6), groups[i]))
        return out


def never_release_from(cfg: DeidConfig, force_mask: Iterable[str] = ()) -> NeverRelease:
    comb = cfg.deep.combiner
    return NeverRelease(comb.ambiguous_never_release_use_high, comb.never_release_ages_from, force_mask,
                        other_scripts=comb.never_release_other_scripts)
