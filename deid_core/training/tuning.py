"""Threshold search for the hybrid (rules + network) adaptive-threshold rule.

The hybrid de-identifier starts from the rule-based masker and lets a neural
network release tokens it is confident about.  Per token we know:

* ``rules_unsafe``  -- the rules would mask the token;
* ``never_release`` -- the rules flagged it *and* it carries a weekday, month,
  street, holiday or written-number flag; such a token is always masked (its
  threshold is infinite);
* ``p_safe``        -- the network's probability that the token is safe.

A token is **released** (left in clear) iff::

    (not rules_unsafe and p_safe > low) or
    (rules_unsafe and not never_release and p_safe > high)

and masked otherwise.  ``low`` governs tokens the rules already consider safe,
``high`` governs tokens the rules would mask; usually ``low < high`` (the
network must be more confident to overrule the rules) but nothing here assumes
it.

Why a dedicated module: the pair (low, high) is chosen on a development set as
"the highest precision that still reaches the target recall", and recall is the
privacy guarantee.  The search must therefore be exact (every decision the
thresholds can produce must be reachable) and cheap enough to run over the
whole development corpus (~1e6 tokens) for every pair of a 200 x 200 grid.

Because the masked set splits into a part that depends only on ``low``
(rules-safe tokens), a part that depends only on ``high`` (rules-unsafe,
releasable tokens) and a constant part (``never_release``), the counts of all
pairs are sums of two 1-D cumulative count vectors -- see :func:`sweep`.

Conventions (deliberate, and different from ``deid_core.evaluation.metrics``,
which reports 0.0 for an empty denominator):

* **No gold tokens -> recall 1.0.**  Nothing had to be caught, so nothing was
  missed; reporting 0 would make every pair fail a recall target on a
  PHI-free slice and the search would wrongly report "unreachable".
* **Nothing masked -> precision 1.0.**  Precision measures how many masks were
  wasted; with no masks there are no false positives.  (Recall, which is what
  protects privacy, still drops to 0 when there is gold PHI, so this cannot
  make "mask nothing" look attractive to :meth:`Sweep.best_at_recall`.)
* **NaN ``p_safe`` is read as 0.0.**  A missing or broken network score must
  fail closed: with any threshold >= 0 (every grid value is in [0, 1]) the
  token is masked, as if the network had been certain it is unsafe.
* **``never_release`` wins.**  By definition it implies ``rules_unsafe``; if
  inconsistent input ever sets it on a rules-safe token the token is still
  masked, again failing closed rather than releasing a flagged token.

Evaluation is at token level with an optional integer ``weight`` per token, so
a caller can count one token several times (e.g. a text token covering several
gold tokens).

This module needs numpy only; matplotlib is imported lazily inside
:func:`plot_precision_recall` so the scoring code can run on workers without
a plotting stack.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "OperatingPoint",
    "Sweep",
    "TokenScores",
    "apply_thresholds",
    "evaluate_pair",
    "plot_precision_recall",
    "sweep",
    "threshold_grid",
]


# --------------------------------------------------------------------------- #
# Input
# --------------------------------------------------------------------------- #


def _as_bool(name: str, values: object) -> np.ndarray:
    """Copy to a 1-D bool array; accept bools or 0/1 integers only.

    Plain ``astype(bool)`` would silently turn a float score or a label code of
    2 into ``True``; for flags that decide what gets masked that is a bug we
    want to see, not absorb.
    """
    arr = np.array(values, copy=True)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.size == 0:
        return arr.astype(bool)
    if np.issubdtype(arr.dtype, np.integer) and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise ValueError(f"{name} must be boolean (or 0/1 integers), got dtype {arr.dtype}")


def _as_p_safe(values: object) -> np.ndarray:
    """Copy to float64, map NaN to 0.0 (fail closed) and reject values outside [0, 1]."""
    arr = np.array(values, dtype=np.float64, copy=True)
    if arr.ndim != 1:
        raise ValueError(f"p_safe must be 1-D, got shape {arr.shape}")
    arr[np.isnan(arr)] = 0.0
    bad = (arr < 0.0) | (arr > 1.0)  # also catches +-inf
    if bad.any():
        raise ValueError(f"p_safe must lie in [0, 1] (or be NaN); {int(bad.sum())} value(s) do not")
    return arr


def _as_weight(values: object) -> np.ndarray:
    """Copy to int64; weights are counts, so they must be integral and >= 0."""
    arr = np.array(values, copy=True)
    if arr.ndim != 1:
        raise ValueError(f"weight must be 1-D, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.floating):
            raise ValueError(f"weight must be integer counts, got dtype {arr.dtype}")
        if not (np.isfinite(arr).all() and (arr == np.round(arr)).all()):
            raise ValueError("weight must be integer counts (got non-integral values)")
    arr = arr.astype(np.int64)
    if (arr < 0).any():
        raise ValueError("weight must be >= 0")
    return arr


@dataclass(frozen=True)
class TokenScores:
    """Per-token inputs of the threshold search, as parallel 1-D arrays.

    The arrays are copied, coerced (bool / float64 / int64) and made read-only
    on construction, so a ``TokenScores`` can be shared between sweeps without
    a caller's later in-place edit changing results behind its back.
    ``weight=None`` means every token counts once.
    """

    gold_phi: np.ndarray
    rules_unsafe: np.ndarray
    never_release: np.ndarray
    p_safe: np.ndarray
    weight: np.ndarray | None = None
    #: the threshold family of each token (see `reason_search.reason_family`); None: pair search only
    families: np.ndarray | None = None

    def __post_init__(self) -> None:
        coerced: dict[str, np.ndarray | None] = {
            "gold_phi": _as_bool("gold_phi", self.gold_phi),
            "rules_unsafe": _as_bool("rules_unsafe", self.rules_unsafe),
            "never_release": _as_bool("never_release", self.never_release),
            "p_safe": _as_p_safe(self.p_safe),
            "weight": None if self.weight is None else _as_weight(self.weight),
        }
        if self.families is not None:
            coerced["families"] = np.array(self.families, dtype=object).reshape(-1)
        lengths = {name: len(arr) for name, arr in coerced.items() if arr is not None}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"TokenScores arrays differ in length: {lengths}")
        for name, arr in coerced.items():
            if arr is not None:
                arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def __len__(self) -> int:
        return len(self.p_safe)

    @property
    def weights(self) -> np.ndarray:
        """The effective per-token weight (ones when ``weight`` is None)."""
        if self.weight is None:
            return np.ones(len(self), dtype=np.int64)
        return self.weight

    def save(self, path: Path) -> None:
        """Write the arrays to one compressed ``.npz`` (no pickles: families are stored as text).

        Out-of-fold scores cost an hour of training to make; they are kept so
        the threshold search can pool them without retraining.
        """
        arrays: dict[str, np.ndarray] = {
            "gold_phi": self.gold_phi, "rules_unsafe": self.rules_unsafe,
            "never_release": self.never_release, "p_safe": self.p_safe,
        }
        if self.weight is not None:
            arrays["weight"] = self.weight
        if self.families is not None:
            arrays["families"] = np.array([str(f) for f in self.families], dtype=np.str_)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            np.savez_compressed(fh, **arrays)

    @classmethod
    def load(cls, path: Path) -> TokenScores:
        """Read what :meth:`save` wrote; refuses object arrays (``allow_pickle=False``)."""
        with np.load(path, allow_pickle=False) as z:
            fams = z["families"] if "families" in z.files else None
            return cls(
                gold_phi=z["gold_phi"], rules_unsafe=z["rules_unsafe"], never_release=z["never_release"],
                p_safe=z["p_safe"], weight=z["weight"] if "weight" in z.files else None,
                families=None if fams is None else np.array(fams.tolist(), dtype=object),
            )

    @classmethod
    def concatenate(cls, parts: Sequence[TokenScores]) -> TokenScores:
        """Join per-document (or per-partition) scores into one set.

        If any part carries weights, parts without weights are given ones, so
        mixing weighted and unweighted parts keeps every token's count.
        An empty sequence gives an empty ``TokenScores``.
        """
        parts = list(parts)
        if not parts:
            empty_b = np.zeros(0, dtype=bool)
            return cls(empty_b, empty_b, empty_b, np.zeros(0, dtype=np.float64))
        weighted = any(p.weight is not None for p in parts)
        with_families = all(p.families is not None for p in parts)
        return cls(
            gold_phi=np.concatenate([p.gold_phi for p in parts]),
            rules_unsafe=np.concatenate([p.rules_unsafe for p in parts]),
            never_release=np.concatenate([p.never_release for p in parts]),
            p_safe=np.concatenate([p.p_safe for p in parts]),
            weight=np.concatenate([p.weights for p in parts]) if weighted else None,
            families=np.concatenate([p.families for p in parts]) if with_families else None,  # type: ignore[misc]
        )


# --------------------------------------------------------------------------- #
# One pair
# --------------------------------------------------------------------------- #


def _ratio_or_one(num: np.ndarray | int, den: np.ndarray | int) -> np.ndarray:
    """num / den, with 1.0 where den == 0 (see the module docstring for why)."""
    num_a = np.asarray(num, dtype=np.float64)
    den_a = np.asarray(den, dtype=np.float64)
    out = np.ones(np.broadcast(num_a, den_a).shape, dtype=np.float64)
    np.divide(num_a, den_a, out=out, where=den_a != 0)
    return out


def _check_threshold(name: str, value: float) -> float:
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"{name} threshold must not be NaN")
    return value


@dataclass(frozen=True)
class OperatingPoint:
    """The outcome of one (low, high) pair: counts are weighted token counts."""

    low: float
    high: float
    recall: float
    precision: float
    masked: int
    true_positives: int
    gold: int

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0.0 when both are 0)."""
        total = self.precision + self.recall
        return 2.0 * self.precision * self.recall / total if total > 0 else 0.0


def apply_thresholds(scores: TokenScores, low: float, high: float) -> np.ndarray:
    """The hybrid decision for every token: ``True`` = masked.

    This is the reference implementation of the rule; :func:`sweep` must agree
    with it pair by pair (the tests check exactly that).
    """
    low = _check_threshold("low", low)
    high = _check_threshold("high", high)
    p = scores.p_safe
    released = (~scores.rules_unsafe & (p > low)) | (scores.rules_unsafe & (p > high))
    released &= ~scores.never_release
    return ~released


def evaluate_pair(scores: TokenScores, low: float, high: float) -> OperatingPoint:
    """Recall/precision of one (low, high) pair, by applying the rule directly."""
    masked = apply_thresholds(scores, low, high)
    w = scores.weights
    n_masked = int(w[masked].sum())
    gold = int(w[scores.gold_phi].sum())
    tp = int(w[masked & scores.gold_phi].sum())
    return OperatingPoint(
        low=float(low),
        high=float(high),
        recall=float(_ratio_or_one(tp, gold)),
        precision=float(_ratio_or_one(tp, n_masked)),
        masked=n_masked,
        true_positives=tp,
        gold=gold,
    )


# --------------------------------------------------------------------------- #
# Candidate thresholds
# --------------------------------------------------------------------------- #


def threshold_grid(scores: TokenScores, max_points: int = 200) -> np.ndarray:
    """Sorted unique candidate thresholds in [0, 1], at most ``max_points``.

    A threshold ``t`` masks exactly the tokens with ``p_safe <= t``, so the
    decision only changes when ``t`` crosses an observed score.  Hence:

    * with few distinct scores, ``{0, 1} U unique(p_safe)`` reaches every
      decision any threshold in [0, 1] can produce (0 = release everything
      the network scores above 0; each observed value = mask up to and
      including it; 1 = mask everything);
    * otherwise we take ``max_points - 2`` quantiles with ``method="lower"``
      so each candidate is an *observed* score (an exact decision boundary)
      rather than an interpolated value between two boundaries.

    Scores of ``never_release`` tokens are left out: no threshold affects them.
    Quantiles are unweighted (numpy 1.26 has no weighted quantile); weights
    only matter for the counts, not for where the grid is dense.
    """
    if max_points < 2:
        raise ValueError("max_points must be >= 2 (the grid always holds 0 and 1)")
    p = scores.p_safe[~scores.never_release]
    unique = np.unique(p)
    if len(np.union1d(unique, (0.0, 1.0))) <= max_points:
        return np.union1d(unique, (0.0, 1.0))
    qs = np.quantile(p, np.linspace(0.0, 1.0, max_points - 2), method="lower")
    return np.union1d(qs, (0.0, 1.0))


# --------------------------------------------------------------------------- #
# All pairs
# --------------------------------------------------------------------------- #


@dataclass
class Sweep:
    """Counts and metrics of every (low, high) pair of a grid.

    ``recall[i, j]``, ``precision[i, j]``, ``masked[i, j]`` and
    ``true_positives[i, j]`` describe the pair ``(lows[i], highs[j])``;
    ``lows`` and ``highs`` are sorted and unique.  ``gold`` is the (weighted)
    number of gold PHI tokens, the same for every pair.
    """

    lows: np.ndarray
    highs: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    masked: np.ndarray
    gold: int
    true_positives: np.ndarray = field(kw_only=True)

    def point(self, i: int, j: int) -> OperatingPoint:
        """The operating point of pair ``(lows[i], highs[j])``."""
        return OperatingPoint(
            low=float(self.lows[i]),
            high=float(self.highs[j]),
            recall=float(self.recall[i, j]),
            precision=float(self.precision[i, j]),
            masked=int(self.masked[i, j]),
            true_positives=int(self.true_positives[i, j]),
            gold=int(self.gold),
        )

    def best_at_recall(self, target_recall: float) -> OperatingPoint | None:
        """Highest-precision pair with ``recall >= target_recall``; None if none reaches it.

        The comparison is exact (no tolerance): recall is the privacy
        guarantee, so a pair that misses the target by a rounding error does
        not meet it.  Among pairs of equal precision we prefer *more masking*
        -- higher ``high`` first, then higher ``low`` -- because at equal
        precision the extra masking can only keep or raise recall, and recall
        is what protects patients.
        """
        target_recall = float(target_recall)
        if np.isnan(target_recall):
            raise ValueError("target_recall must not be NaN")
        feasible = self.recall >= target_recall
        if not feasible.any():
            return None
        best_precision = self.precision[feasible].max()
        rows, cols = np.nonzero(feasible & (self.precision == best_precision))
        # lexsort: the last key is the primary one -> max high, then max low.
        k = np.lexsort((self.lows[rows], self.highs[cols]))[-1]
        return self.point(int(rows[k]), int(cols[k]))

    def frontier(self) -> list[OperatingPoint]:
        """The Pareto front in (recall, precision), sorted by increasing recall.

        A pair is on the front when no other pair has at least its recall and
        strictly more precision (or equal precision and strictly more recall).
        Along the returned list recall strictly increases and precision
        strictly decreases.  Of pairs with identical (recall, precision) one
        is kept, chosen by the same more-masking tie-break as
        :meth:`best_at_recall`.
        """
        if self.recall.size == 0:
            return []
        ii, jj = np.meshgrid(np.arange(len(self.lows)), np.arange(len(self.highs)), indexing="ij")
        ii, jj = ii.ravel(), jj.ravel()
        rec, prec = self.recall.ravel(), self.precision.ravel()
        # Descending by recall, then precision, then high, then low.
        order = np.lexsort((self.lows[ii], self.highs[jj], prec, rec))[::-1]
        prec_sorted = prec[order]
        best_before = np.concatenate(([-np.inf], np.maximum.accumulate(prec_sorted)[:-1]))
        on_front = order[prec_sorted > best_before]
        return [self.point(int(ii[k]), int(jj[k])) for k in on_front[::-1]]


def _grid(name: str, values: np.ndarray | None, default: np.ndarray) -> np.ndarray:
    if values is None:
        return default
    arr = np.unique(np.asarray(values, dtype=np.float64).ravel())
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one threshold")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


def _masked_counts(
    p: np.ndarray, w: np.ndarray, gold: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(masked, true positives) of one token group for each threshold, masking ``p <= t``.

    Sort once, take cumulative weights, then one ``searchsorted`` per grid:
    O(n log n + g log n) instead of O(n * g).
    """
    order = np.argsort(p, kind="stable")
    p_sorted = p[order]
    w_sorted = w[order]
    cum_masked = np.concatenate(([0], np.cumsum(w_sorted, dtype=np.int64)))
    cum_tp = np.concatenate(([0], np.cumsum(np.where(gold[order], w_sorted, 0), dtype=np.int64)))
    idx = np.searchsorted(p_sorted, thresholds, side="right")  # number of p <= t
    return cum_masked[idx], cum_tp[idx]


def sweep(scores: TokenScores, lows: np.ndarray | None = None, highs: np.ndarray | None = None) -> Sweep:
    """Evaluate every (low, high) pair of two grids at once.

    The masked set is the disjoint union of

    * rules-safe tokens with ``p_safe <= low``       (depends on ``low`` only),
    * releasable rules-unsafe tokens with ``p_safe <= high`` (``high`` only),
    * ``never_release`` tokens                       (constant),

    so ``masked[i, j] = A[i] + B[j] + C`` and likewise for true positives.
    ``A`` and ``B`` come from one sort + ``searchsorted`` per group and are
    combined by broadcasting; ~1e6 tokens x 200 x 200 takes well under a second.

    Grids default to :func:`threshold_grid`; given grids are sorted and
    de-duplicated (any finite or infinite value is allowed, NaN is not).
    """
    default = threshold_grid(scores) if lows is None or highs is None else np.empty(0)
    lows_a = _grid("lows", lows, default)
    highs_a = _grid("highs", highs, default)

    w = scores.weights
    never = scores.never_release
    safe = ~scores.rules_unsafe & ~never
    unsafe = scores.rules_unsafe & ~never

    a_masked, a_tp = _masked_counts(scores.p_safe[safe], w[safe], scores.gold_phi[safe], lows_a)
    b_masked, b_tp = _masked_counts(scores.p_safe[unsafe], w[unsafe], scores.gold_phi[unsafe], highs_a)
    c_masked = int(w[never].sum())
    c_tp = int(w[never & scores.gold_phi].sum())
    gold = int(w[scores.gold_phi].sum())

    masked = a_masked[:, None] + b_masked[None, :] + c_masked
    tp = a_tp[:, None] + b_tp[None, :] + c_tp
    return Sweep(
        lows=lows_a,
        highs=highs_a,
        recall=_ratio_or_one(tp, gold),
        precision=_ratio_or_one(tp, masked),
        masked=masked,
        gold=gold,
        true_positives=tp,
    )


# --------------------------------------------------------------------------- #
# Plot
# --------------------------------------------------------------------------- #


def plot_precision_recall(
    sweep: Sweep,
    chosen: OperatingPoint | None,
    path: Path,
    *,
    target_recall: float | None = None,
    title: str = "Hybrid threshold search: precision vs recall",
) -> Path:
    """Write a PNG of the search: all pairs, the Pareto front, the target and the choice.

    Uses matplotlib's object API with the Agg canvas (no ``pyplot``), so it
    touches no global backend or figure state and is safe in servers, Spark
    drivers and tests.  The file is written to a temporary file in the same
    directory and moved into place with ``os.replace``: a reader (or a report
    build) never sees a half-written PNG, and a failure leaves any previous
    plot intact.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    fig = Figure(figsize=(7.0, 5.0), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.scatter(
        sweep.recall.ravel(),
        sweep.precision.ravel(),
        s=4,
        alpha=0.15,
        color="tab:gray",
        linewidths=0,
        label="all (low, high) pairs",
    )
    front = sweep.frontier()
    if front:
        ax.plot(
            [p.recall for p in front],
            [p.precision for p in front],
            "-o",
            color="tab:blue",
            markersize=2.5,
            linewidth=1.2,
            label="Pareto front",
        )
    if target_recall is not None:
        target = float(target_recall)
        ax.axvline(target, color="tab:red", linestyle="--", linewidth=1.0, label=f"target recall {target:.4g}")
    if chosen is not None:
        ax.scatter([chosen.recall], [chosen.precision], s=60, marker="*", color="tab:orange", zorder=5, label="chosen")
        ax.annotate(
            f"low={chosen.low:.4g}, high={chosen.high:.4g}\nR={chosen.recall:.4f}, P={chosen.precision:.4f}",
            xy=(chosen.recall, chosen.precision),
            xytext=(-12, -28),
            textcoords="offset points",
            ha="right",
            fontsize=8,
            arrowprops={"arrowstyle": "->", "linewidth": 0.8},
        )
    ax.set_xlabel("recall (masked gold / gold)")
    ax.set_ylabel("precision (masked gold / masked)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()

    # mkstemp creates the file 0600; give the plot the replaced file's mode, or
    # an ordinary world-readable 0644, so a report server can still read it.
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fig.savefig(fh, format="png")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    return path
