"""Joint threshold search with one threshold per rule reason (generalising the thesis's pair).

The thesis's combiner has two thresholds: `low` for tokens the rules call
safe, `high` for tokens they mask. But the rules mask for very different
reasons, and the network's reliability differs with them: a token masked
because it is an unknown word ("sxn", "trach") is almost never PHI, one
masked by a date pattern often is. One threshold per reason family
(:data:`deid_core.thresholds.MASKED_REASONS` and
:data:`~deid_core.thresholds.SAFE_REASONS`) releases far more of the first
at the same recall.

The search is exact on its grid. A token is masked iff P(safe) <= its
family's threshold, so each family contributes a missed-PHI count and a
false-alarm count that depend on its own threshold only. "Best precision at
recall >= r" is then "fewest false alarms with at most B missed PHI tokens"
(B = the PHI the recall target allows to miss), a multiple-choice knapsack
solved by dynamic programming over the missed-PHI budget. The same table
gives the whole frontier: one optimum per budget.

Candidate thresholds sit just below a non-PHI token's P(safe): at a given
number of false alarms this is the highest threshold, so PHI near the
boundary has the widest margin on unseen data. Tokens the combiner never
releases (`never_release`) are a constant masked part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deid_core.thresholds import reason_family

__all__ = ["reason_family", "search", "cross_validate", "masked_by"]

#: candidates per family; quantiles of its non-PHI P(safe) when it has more
MAX_CANDIDATES = 400


@dataclass(frozen=True)
class FamilyCurve:
    """Missed PHI and false alarms of one family at each candidate threshold (ascending)."""

    family: str
    tokens: int
    gold: int
    thresholds: np.ndarray
    missed: np.ndarray
    false_alarms: np.ndarray
    masked: np.ndarray


def family_curve(family: str, gold: np.ndarray, p_safe: np.ndarray, weight: np.ndarray,
                 ceiling: float = 1.0) -> FamilyCurve:
    """The family's candidates; with a `ceiling`, none above it (the ceiling itself is one)."""
    p = np.clip(np.nan_to_num(p_safe.astype(np.float64), nan=0.0), 0.0, 1.0)
    non = np.unique(p[~gold])
    if non.size > MAX_CANDIDATES:
        non = np.unique(np.quantile(non, np.linspace(0.0, 1.0, MAX_CANDIDATES)))
    # just below each non-PHI value (that token is released) and 1.0 (mask all)
    cands = np.unique(np.concatenate([np.nextafter(non, -np.inf).clip(0.0, 1.0), [0.0, 1.0]]))
    if ceiling < 1.0:
        cands = np.unique(np.concatenate([cands[cands <= ceiling], [ceiling]]))
    order = np.argsort(p, kind="stable")
    ps, gs, ws = p[order], gold[order], weight[order]
    upto = np.searchsorted(ps, cands, side="right")  # tokens with p <= t are masked
    gold_cum = np.concatenate([[0], np.cumsum(ws * gs)])
    non_cum = np.concatenate([[0], np.cumsum(ws * ~gs)])
    total_gold = int(gold_cum[-1])
    masked_gold = gold_cum[upto]
    return FamilyCurve(
        family=family,
        tokens=int(ws.sum()),
        gold=total_gold,
        thresholds=cands,
        missed=(total_gold - masked_gold).astype(np.int64),
        false_alarms=non_cum[upto].astype(np.int64),
        masked=(masked_gold + non_cum[upto]).astype(np.int64),
    )


@dataclass(frozen=True)
class ReasonPoint:
    """One operating point: a threshold per family and what it gives on the tuning set.

    `expected_recall` is the recall the choice was made for: the same as
    `recall` without smoothing, lower when small families were smoothed
    towards the pooled PHI distribution (see :func:`search`).
    """

    thresholds: dict[str, float]
    recall: float
    precision: float
    masked: int
    missed: int
    false_alarms: int
    expected_recall: float


@dataclass(frozen=True)
class ReasonSearch:
    curves: list[FamilyCurve]
    gold: int
    constant_masked: int
    constant_gold: int
    #: best[b] = fewest false alarms with b units of expected missed PHI (inf: impossible)
    best: np.ndarray
    #: the candidate index per family for each b
    choice: np.ndarray
    #: units per missed PHI token in `best` (1 without smoothing)
    units: int = 1

    def point(self, b: int) -> ReasonPoint | None:
        if b < 0 or b >= len(self.best) or not np.isfinite(self.best[b]):
            return None
        ch = self.choice[b]
        thresholds = {c.family: float(c.thresholds[ch[k]]) for k, c in enumerate(self.curves)}
        missed = int(sum(int(c.missed[ch[k]]) for k, c in enumerate(self.curves)))
        fa = int(sum(int(c.false_alarms[ch[k]]) for k, c in enumerate(self.curves)))
        fa += self.constant_masked - self.constant_gold
        tp = self.gold - missed
        masked = tp + fa
        recall = 1.0 if self.gold == 0 else tp / self.gold
        precision = 1.0 if masked == 0 else tp / masked
        expected = 1.0 if self.gold == 0 else 1.0 - b / (self.units * self.gold)
        return ReasonPoint(thresholds, recall, precision, masked, missed, fa, expected)

    def best_at_recall(self, target: float) -> ReasonPoint | None:
        """Highest precision with (expected and actual) recall >= target."""
        best: ReasonPoint | None = None
        for b in range(len(self.best)):
            pt = self.point(b)
            if pt is None or pt.recall < target or pt.expected_recall < target - 1e-12:
                continue
            if best is None or pt.precision > best.precision + 1e-12:
                best = pt
        return best

    def frontier(self) -> list[ReasonPoint]:
        """The optimum of every budget, by recall descending; dominated points left out."""
        pts = [p for b in range(len(self.best)) if (p := self.point(b)) is not None]
        out: list[ReasonPoint] = []
        for p in sorted(pts, key=lambda q: (-q.recall, -q.precision)):
            if not out or p.precision > out[-1].precision:
                out.append(p)
        return out


def _fixed_curve(curve: FamilyCurve, t: float, gold: np.ndarray, p: np.ndarray, w: np.ndarray) -> FamilyCurve:
    masked = np.nan_to_num(p, nan=0.0) <= t
    return FamilyCurve(
        curve.family, curve.tokens, curve.gold, np.array([t]),
        np.array([int((w * (gold & ~masked)).sum())]), np.array([int((w * (~gold & masked)).sum())]),
        np.array([int((w * masked).sum())]),
    )


def search(
    gold: np.ndarray,
    families: Sequence[str],
    never_release: np.ndarray,
    p_safe: np.ndarray,
    weight: np.ndarray | None = None,
    *,
    min_recall: float = 0.9,
    fixed: dict[str, float] | None = None,
    ceilings: dict[str, float] | None = None,
    prior_strength: float = 0.0,
    units: int = 10,
) -> ReasonSearch:
    """Solve every missed-PHI budget down to `min_recall`; `fixed` families keep a given threshold,
    `ceilings` families are searched below a given one.

    Smoothing (`prior_strength` k > 0): a family with few PHI tokens on the
    tuning set says little about where its unseen PHI lies; a threshold just
    above its highest PHI score misses far more on new text. Its expected
    missed PHI at a threshold is then its own count shrunk towards the
    pooled rate of all PHI above that threshold, as if k pooled PHI tokens
    were added to the family (n_f (m_f + k r(t)) / (n_f + k)). Large
    families keep their own curve; small ones behave like the thesis's
    shared `high`. Costs are counted in 1/`units` of a token.
    """
    gold = np.asarray(gold, dtype=bool)
    never = np.asarray(never_release, dtype=bool)
    fam = np.asarray(families, dtype=object)
    p = np.asarray(p_safe, dtype=np.float64)
    w = np.ones(len(gold), dtype=np.int64) if weight is None else np.asarray(weight, dtype=np.int64)
    if not (len(gold) == len(fam) == len(never) == len(p) == len(w)):
        raise ValueError("token arrays differ in length")
    if prior_strength < 0:
        raise ValueError("prior_strength must be >= 0")
    scale = units if prior_strength > 0 else 1
    total_gold = int((w * gold).sum())
    budget = int(np.floor(total_gold * (1.0 - min_recall) * scale + 1e-9))
    pool = ~never & gold
    pooled_p = np.sort(np.clip(np.nan_to_num(p[pool], nan=0.0), 0.0, 1.0))
    pooled_w = w[pool][np.argsort(np.clip(np.nan_to_num(p[pool], nan=0.0), 0.0, 1.0), kind="stable")]
    pooled_total = max(1, int(pooled_w.sum()))
    pooled_above = np.concatenate([[0], np.cumsum(pooled_w[::-1])])[::-1]  # weight of PHI at index >= i
    curves: list[FamilyCurve] = []
    costs: list[np.ndarray] = []
    for name in sorted(set(fam[~never].tolist())):
        sel = (fam == name) & ~never
        curve = family_curve(str(name), gold[sel], p[sel], w[sel], (ceilings or {}).get(str(name), 1.0))
        if fixed and name in fixed:
            curve = _fixed_curve(curve, float(fixed[name]), gold[sel], p[sel], w[sel])
        curves.append(curve)
        if prior_strength > 0 and curve.gold > 0:
            rate = pooled_above[np.searchsorted(pooled_p, curve.thresholds, side="right")] / pooled_total
            n_f = curve.gold
            expected = n_f * (curve.missed + prior_strength * rate) / (n_f + prior_strength)
            costs.append(np.ceil(expected * scale - 1e-9).astype(np.int64))
        else:
            costs.append(curve.missed.astype(np.int64) * scale)
    inf = np.inf
    best = np.full(budget + 1, inf)
    best[0] = 0.0
    choices: list[np.ndarray] = []
    for curve, cost in zip(curves, costs, strict=True):
        new = np.full(budget + 1, inf)
        pick = np.zeros(budget + 1, dtype=np.int64)
        # for each cost, the candidate with the fewest false alarms (highest threshold on ties)
        for j in range(len(curve.thresholds)):
            m = int(cost[j])
            if m > budget:
                continue
            fa = float(curve.false_alarms[j])
            shifted = np.full(budget + 1, inf)
            shifted[m:] = best[: budget + 1 - m] + fa
            better = shifted <= new
            new = np.where(better, shifted, new)
            pick = np.where(better, j, pick)
        choices.append(pick)
        best = new
    n = len(curves)
    choice = np.zeros((budget + 1, n), dtype=np.int64)
    for b in range(budget + 1):
        if not np.isfinite(best[b]):
            continue
        rem = b
        for k in range(n - 1, -1, -1):
            j = int(choices[k][rem])
            choice[b, k] = j
            rem -= int(costs[k][j])
    const_masked = int(w[never].sum())
    const_gold = int((w * gold)[never].sum())
    return ReasonSearch(curves, total_gold, const_masked, const_gold, best, choice, scale)

def masked_by(thresholds: dict[str, float], families: Sequence[str], never_release: np.ndarray,
              p_safe: np.ndarray) -> np.ndarray:
    """Which tokens a choice of per-family thresholds masks (a family it does not name: masked)."""
    fam = np.asarray(families, dtype=object)
    thr = np.ones(len(fam), dtype=np.float64)
    for name, t in thresholds.items():
        thr[fam == name] = t
    p = np.nan_to_num(np.asarray(p_safe, dtype=np.float64), nan=0.0)
    return np.asarray(never_release, dtype=bool) | (p <= thr)  # p <= 1.0 always: unnamed families masked


@dataclass(frozen=True)
class CrossValidated:
    """Thresholds chosen on the other folds, counted on the held-out one, summed over folds."""

    prior_strength: float
    target: float
    recall: float
    precision: float
    missed: int
    masked: int


def cross_validate(folds: Sequence[tuple[np.ndarray, Sequence[str], np.ndarray, np.ndarray]],
                   prior_strengths: Sequence[float], targets: Sequence[float],
                   fixed: dict[str, float] | None = None,
                   ceilings: dict[str, float] | None = None) -> list[CrossValidated]:
    """How each (smoothing, target) choice does on text it was not tuned on.

    `folds` are (gold, families, never_release, p_safe) per fold, split by
    patient or report so that one person's PHI is never on both sides.
    This is how the smoothing and the tuning target are chosen on dev
    without looking at a test split.
    """
    out: list[CrossValidated] = []
    for k in prior_strengths:
        for target in targets:
            tp = fn = masked_total = 0
            for i, (g, f, nv, p) in enumerate(folds):
                rest = [x for j, x in enumerate(folds) if j != i]
                pt = search(np.concatenate([x[0] for x in rest]),
                            np.concatenate([np.asarray(x[1], dtype=object) for x in rest]),
                            np.concatenate([x[2] for x in rest]), np.concatenate([x[3] for x in rest]),
                            min_recall=min(target, 0.9), prior_strength=k, fixed=fixed,
                            ceilings=ceilings).best_at_recall(target)
                m = np.ones(len(g), dtype=bool) if pt is None else masked_by(pt.thresholds, f, nv, p)
                gb = np.asarray(g, dtype=bool)
                tp += int((m & gb).sum())
                fn += int((~m & gb).sum())
                masked_total += int(m.sum())
            gold = tp + fn
            out.append(CrossValidated(k, target, 1.0 if gold == 0 else tp / gold,
                                      1.0 if masked_total == 0 else tp / masked_total, fn, masked_total))
    return out
