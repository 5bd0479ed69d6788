"""The per-reason threshold search is exact on its grid and its frontier is consistent."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from deid_core.thresholds import Thresholds
from deid_core.hybrid.combiner import released
from deid_core.training.reason_search import family_curve, reason_family, search


def _brute_force(gold, fam, never, p, target):  # type: ignore[no-untyped-def]
    """Best precision at recall >= target over every combination of candidate thresholds."""
    names = sorted(set(fam[~never].tolist()))
    cands = [family_curve(n, gold[(fam == n) & ~never], p[(fam == n) & ~never], np.ones(((fam == n) & ~never).sum(),
                                                                                         dtype=np.int64)).thresholds
             for n in names]
    best = None
    for combo in itertools.product(*cands):
        t = dict(zip(names, combo, strict=True))
        thr = np.array([t.get(f, 1.0) for f in fam])
        masked = never | (p <= thr)
        tp = int((masked & gold).sum())
        rec = tp / gold.sum()
        prec = tp / masked.sum() if masked.sum() else 1.0
        if rec >= target - 1e-12 and (best is None or prec > best + 1e-12):
            best = prec
    return best


@pytest.mark.parametrize("seed", range(6))
def test_search_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 40
    fam = rng.choice(np.array(["digit", "unknown", "safe"], dtype=object), size=n)
    gold = rng.random(n) < 0.25
    gold[:2] = True
    p = np.where(gold, rng.beta(2, 5, n), rng.beta(5, 2, n)).round(2)
    never = rng.random(n) < 0.05
    for target in (1.0, 0.9, 0.8):
        res = search(gold, fam, never, p, min_recall=0.5)
        got = res.best_at_recall(target)
        expect = _brute_force(gold, fam, never, p, target)
        assert got is not None and expect is not None
        assert got.precision == pytest.approx(expect)
        assert got.recall >= target - 1e-12


def test_chosen_thresholds_reproduce_their_point_through_the_combiner() -> None:
    """What the search reports is what `released` does with the stored thresholds."""
    rng = np.random.default_rng(3)
    n = 500
    fam = rng.choice(np.array(["digit", "unknown", "single_letter", "safe", "clinical"], dtype=object), size=n)
    unsafe = np.isin(fam, ["digit", "unknown", "single_letter"])
    gold = rng.random(n) < 0.1
    p = np.clip(np.where(gold, rng.beta(1, 6, n), rng.beta(6, 1, n)), 0, 1)
    never = unsafe & (rng.random(n) < 0.02)
    res = search(gold, fam, never, p)
    pt = res.best_at_recall(0.95)
    assert pt is not None
    t = Thresholds(pt.thresholds["safe"], 1.0, by_reason=pt.thresholds)
    keep = released(unsafe, never, p, t, [str(f) for f in fam])
    masked = ~keep
    assert int((masked & gold).sum()) == gold.sum() - pt.missed
    assert int(masked.sum()) == pt.masked
    assert int((masked & gold).sum()) / gold.sum() == pytest.approx(pt.recall)


def test_frontier_is_monotone_and_starts_at_full_recall() -> None:
    rng = np.random.default_rng(5)
    n = 300
    fam = rng.choice(np.array(["pattern", "unknown", "safe"], dtype=object), size=n)
    gold = rng.random(n) < 0.2
    p = rng.random(n)
    front = search(gold, fam, np.zeros(n, bool), p, min_recall=0.7).frontier()
    assert front[0].recall == 1.0
    assert all(a.recall > b.recall and a.precision < b.precision for a, b in zip(front, front[1:]))


def test_fixed_family_keeps_its_threshold() -> None:
    gold = np.array([False, False, True, False])
    fam = np.array(["clinical", "clinical", "unknown", "unknown"], dtype=object)
    p = np.array([0.1, 0.2, 0.05, 0.9])
    pt = search(gold, fam, np.zeros(4, bool), p, fixed={"clinical": 0.0}).best_at_recall(1.0)
    assert pt is not None and pt.thresholds["clinical"] == 0.0 and pt.masked == 1 and pt.precision == 1.0


def test_a_ceiling_family_is_searched_below_it() -> None:
    # holding the PHI at 0.9 needs a threshold of 0.9 or more; a ceiling of 0.6 forbids it, and every
    # point of the capped search stays at or below the ceiling
    gold = np.array([True, False, False, False])
    fam = np.array(["near_word"] * 4, dtype=object)
    p = np.array([0.9, 0.5, 0.7, 0.95])
    free = search(gold, fam, np.zeros(4, bool), p).best_at_recall(1.0)
    assert free is not None and 0.9 <= free.thresholds["near_word"] < 0.95 and free.false_alarms == 2
    capped = search(gold, fam, np.zeros(4, bool), p, ceilings={"near_word": 0.6}, min_recall=0.0)
    assert capped.best_at_recall(1.0) is None
    low = capped.best_at_recall(0.0)
    assert low is not None and low.thresholds["near_word"] <= 0.6 and low.missed == 1
    assert all(pt.thresholds["near_word"] <= 0.6 for pt in capped.frontier())


def test_nan_probability_is_masked_and_families_map_reasons() -> None:
    gold = np.array([True, False])
    res = search(gold, np.array(["digit", "digit"], dtype=object), np.zeros(2, bool), np.array([np.nan, 0.9]))
    pt = res.best_at_recall(1.0)
    assert pt is not None and pt.missed == 0 and pt.masked == 1
    assert reason_family("pattern:DATE", True) == "pattern:DATE"
    assert reason_family("pattern:EMAIL", True) == "pattern"
    assert reason_family("clinical:quantity", False) == "clinical"
    assert reason_family("weird", True) == "unknown" and reason_family("weird", False) == "safe"


def test_unreachable_target_gives_none_and_lengths_are_checked() -> None:
    res = search(np.array([True]), np.array(["digit"], dtype=object), np.zeros(1, bool), np.array([0.5]),
                 min_recall=1.0)
    assert res.best_at_recall(1.0) is not None
    with pytest.raises(ValueError):
        search(np.array([True, False]), np.array(["digit"], dtype=object), np.zeros(2, bool), np.zeros(2))


def test_smoothing_raises_the_threshold_of_a_small_family() -> None:
    """Two PHI tokens of a family say little; the pooled PHI (often confident-looking) says more."""
    rng = np.random.default_rng(11)
    big_gold = rng.random(400) < 0.5
    big_p = np.where(big_gold, rng.uniform(0.5, 0.998, 400), 0.999)
    small_p = np.concatenate([[0.01, 0.02], rng.uniform(0.3, 0.9, 60)])
    small_gold = np.zeros(62, dtype=bool)
    small_gold[:2] = True
    gold = np.concatenate([big_gold, small_gold])
    fam = np.array(["unknown"] * 400 + ["digit"] * 62, dtype=object)
    p = np.concatenate([big_p, small_p])
    never = np.zeros(len(p), dtype=bool)
    plain = search(gold, fam, never, p, min_recall=0.9).best_at_recall(0.995)
    smooth = search(gold, fam, never, p, min_recall=0.9, prior_strength=50).best_at_recall(0.995)
    assert plain is not None and smooth is not None
    assert plain.thresholds["digit"] < 0.31 and smooth.thresholds["digit"] > 0.5, (plain, smooth)
    assert smooth.expected_recall >= 0.995 and smooth.recall >= plain.recall


def test_cross_validation_counts_every_held_out_token_once() -> None:
    from deid_core.training.reason_search import cross_validate

    rng = np.random.default_rng(2)
    folds = []
    for _ in range(3):
        n = 200
        g = rng.random(n) < 0.1
        folds.append((g, np.array(["digit"] * n, dtype=object), np.zeros(n, bool),
                      np.where(g, rng.beta(1, 5, n), rng.beta(5, 1, n))))
    rows = cross_validate(folds, [0.0, 10.0], [0.99, 0.9])
    assert len(rows) == 4
    total_gold = sum(int(f[0].sum()) for f in folds)
    for r in rows:
        assert 0 <= r.missed <= total_gold and 0.0 <= r.precision <= 1.0
        assert r.recall == pytest.approx(1 - r.missed / total_gold)
