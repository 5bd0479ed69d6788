"""The hybrid threshold search: the vectorised sweep against the rule applied pair by pair,
fail-closed handling, the recall-constrained choice and its tie-break, the Pareto front, the plot."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from deid_core.training.tuning import (
    OperatingPoint,
    Sweep,
    TokenScores,
    apply_thresholds,
    evaluate_pair,
    plot_precision_recall,
    sweep,
    threshold_grid,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def random_scores(seed: int, n: int = 300, *, weighted: bool = True, n_levels: int | None = None) -> TokenScores:
    """Random tokens; never_release is drawn inside rules_unsafe, as the rules define it.

    ``n_levels`` rounds p_safe to few distinct values so ties with thresholds
    (``p == t``, where ``>`` vs ``>=`` matters) are frequent.  A few NaNs are
    mixed in to exercise the fail-closed reading.
    """
    rng = np.random.default_rng(seed)
    rules_unsafe = rng.random(n) < 0.4
    never_release = rules_unsafe & (rng.random(n) < 0.2)
    gold = rng.random(n) < np.where(rules_unsafe, 0.6, 0.1)
    p = rng.random(n)
    if n_levels is not None:
        p = np.round(p * (n_levels - 1)) / (n_levels - 1)
    p[rng.random(n) < 0.03] = np.nan
    weight = rng.integers(0, 4, n) if weighted else None
    return TokenScores(gold, rules_unsafe, never_release, p, weight)


def naive_sweep(scores: TokenScores, lows: np.ndarray, highs: np.ndarray) -> dict[str, np.ndarray]:
    """Reference: apply the rule for each pair separately."""
    shape = (len(lows), len(highs))
    out = {k: np.zeros(shape) for k in ("recall", "precision", "masked", "tp")}
    for i, low in enumerate(lows):
        for j, high in enumerate(highs):
            op = evaluate_pair(scores, low, high)
            out["recall"][i, j] = op.recall
            out["precision"][i, j] = op.precision
            out["masked"][i, j] = op.masked
            out["tp"][i, j] = op.true_positives
    return out


# --------------------------------------------------------------------------- #
# The rule itself
# --------------------------------------------------------------------------- #


def test_apply_thresholds_matches_the_rule_token_by_token() -> None:
    # rules_unsafe, never_release, p_safe -> masked at (low=0.3, high=0.7)
    cases = [
        (False, False, 0.2, True),  # rules-safe, network unsure -> masked
        (False, False, 0.3, True),  # p == low is not > low -> masked
        (False, False, 0.31, False),  # released
        (True, False, 0.5, True),  # rules-unsafe needs > high
        (True, False, 0.7, True),
        (True, False, 0.71, False),  # network overrules the rules
        (True, True, 1.0, True),  # never_release: masked even when certain
    ]
    scores = TokenScores(
        gold_phi=[False] * len(cases),
        rules_unsafe=[c[0] for c in cases],
        never_release=[c[1] for c in cases],
        p_safe=[c[2] for c in cases],
    )
    assert apply_thresholds(scores, 0.3, 0.7).tolist() == [c[3] for c in cases]


def test_thresholds_are_not_assumed_ordered() -> None:
    """low > high is legal: then rules-unsafe tokens are released more easily."""
    scores = TokenScores([False, False], [False, True], [False, False], [0.5, 0.5])
    assert apply_thresholds(scores, 0.8, 0.2).tolist() == [True, False]
    assert apply_thresholds(scores, 0.2, 0.8).tolist() == [False, True]


# --------------------------------------------------------------------------- #
# Vectorised sweep == naive loop
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("n_levels", [None, 6])
def test_sweep_equals_naive_loop_with_weights(seed: int, n_levels: int | None) -> None:
    scores = random_scores(seed, n_levels=n_levels)
    rng = np.random.default_rng(100 + seed)
    # grid values both between and exactly on observed scores, plus out-of-range ones
    observed = np.unique(scores.p_safe)
    lows = np.concatenate([rng.random(6), rng.choice(observed, 4), [0.0, 1.0, -0.5]])
    highs = np.concatenate([rng.random(6), rng.choice(observed, 4), [0.0, 1.0, 1.5]])
    sw = sweep(scores, lows, highs)
    ref = naive_sweep(scores, sw.lows, sw.highs)

    assert sw.recall.shape == (len(sw.lows), len(sw.highs))
    assert np.array_equal(sw.masked, ref["masked"])
    assert np.array_equal(sw.true_positives, ref["tp"])
    assert np.array_equal(sw.recall, ref["recall"])
    assert np.array_equal(sw.precision, ref["precision"])
    assert sw.gold == int(scores.weights[scores.gold_phi].sum())


def test_sweep_default_grid_equals_naive_loop_unweighted() -> None:
    scores = random_scores(7, n=200, weighted=False, n_levels=9)
    sw = sweep(scores)
    assert np.array_equal(sw.lows, threshold_grid(scores))
    ref = naive_sweep(scores, sw.lows, sw.highs)
    assert np.array_equal(sw.masked, ref["masked"])
    assert np.array_equal(sw.precision, ref["precision"])


def test_weights_count_a_token_several_times() -> None:
    base = random_scores(11, n=80, weighted=False)
    repeats = np.random.default_rng(11).integers(0, 4, len(base))
    weighted = TokenScores(base.gold_phi, base.rules_unsafe, base.never_release, base.p_safe, repeats)
    expanded = TokenScores(
        np.repeat(base.gold_phi, repeats),
        np.repeat(base.rules_unsafe, repeats),
        np.repeat(base.never_release, repeats),
        np.repeat(base.p_safe, repeats),
    )
    grid = np.linspace(0, 1, 11)
    a, b = sweep(weighted, grid, grid), sweep(expanded, grid, grid)
    assert np.array_equal(a.masked, b.masked)
    assert np.array_equal(a.recall, b.recall)
    assert np.array_equal(a.precision, b.precision)


def test_sweep_sorts_and_deduplicates_given_grids() -> None:
    scores = random_scores(3, n=50)
    sw = sweep(scores, np.array([0.9, 0.1, 0.5, 0.1]), np.array([0.7, 0.2]))
    assert sw.lows.tolist() == [0.1, 0.5, 0.9]
    assert sw.highs.tolist() == [0.2, 0.7]
    assert sw.point(2, 0) == evaluate_pair(scores, 0.9, 0.2)
    with pytest.raises(ValueError):
        sweep(scores, np.array([np.nan, 0.5]), np.array([0.5]))


# --------------------------------------------------------------------------- #
# Fail closed: never_release, NaN
# --------------------------------------------------------------------------- #


def test_never_release_tokens_are_masked_at_every_pair() -> None:
    scores = random_scores(5, n=400, n_levels=7)
    assert scores.never_release.any()
    never = TokenScores(  # only the never_release tokens, all fully trusted by the network
        gold_phi=scores.gold_phi[scores.never_release],
        rules_unsafe=scores.rules_unsafe[scores.never_release],
        never_release=scores.never_release[scores.never_release],
        p_safe=np.ones(int(scores.never_release.sum())),
    )
    grid = np.array([-1.0, 0.0, 0.5, 0.999, 1.0])
    for low in grid:
        for high in grid:
            assert apply_thresholds(scores, low, high)[scores.never_release].all()
            assert apply_thresholds(never, low, high).all()
    sw = sweep(never, grid, grid)
    assert (sw.masked == len(never)).all()


def test_never_release_wins_even_if_inconsistently_rules_safe() -> None:
    scores = TokenScores([True], [False], [True], [1.0])
    assert apply_thresholds(scores, 0.0, 0.0).tolist() == [True]
    assert sweep(scores, [0.0], [0.0]).masked[0, 0] == 1


def test_nan_p_safe_is_read_as_zero_and_masked() -> None:
    scores = TokenScores(
        gold_phi=[True, False, True],
        rules_unsafe=[False, True, False],
        never_release=[False, False, False],
        p_safe=[np.nan, np.nan, 0.9],
    )
    assert scores.p_safe.tolist() == [0.0, 0.0, 0.9]
    # thresholds at their most permissive grid value still mask the NaN tokens
    assert apply_thresholds(scores, 0.0, 0.0).tolist() == [True, True, False]
    sw = sweep(scores)
    assert 0.0 in sw.lows and 0.0 in sw.highs
    assert (sw.masked >= 2).all()
    assert sw.point(0, 0) == evaluate_pair(scores, 0.0, 0.0)


def test_inputs_are_validated_and_copied() -> None:
    with pytest.raises(ValueError, match="length"):
        TokenScores([True, False], [False], [False], [0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        TokenScores([True], [False], [False], [1.2])
    with pytest.raises(ValueError, match=">= 0"):
        TokenScores([True], [False], [False], [0.5], [-1])
    with pytest.raises(ValueError, match="boolean"):
        TokenScores([0.3], [False], [False], [0.5])
    p = np.array([0.5, np.nan])
    scores = TokenScores([1, 0], [0, 1], [0, 0], p)
    assert scores.gold_phi.dtype == bool and np.isnan(p[1])  # caller's array untouched
    with pytest.raises(ValueError):
        scores.p_safe[0] = 0.1  # read-only


def test_concatenate_keeps_every_token_and_its_weight() -> None:
    a = random_scores(1, n=30, weighted=False)
    b = random_scores(2, n=20, weighted=True)
    joined = TokenScores.concatenate([a, b])
    assert len(joined) == 50
    assert joined.weights[:30].tolist() == [1] * 30
    assert joined.weights[30:].tolist() == b.weights.tolist()
    grid = np.linspace(0, 1, 5)
    sa, sb, sj = sweep(a, grid, grid), sweep(b, grid, grid), sweep(joined, grid, grid)
    assert np.array_equal(sj.masked, sa.masked + sb.masked)
    assert np.array_equal(sj.true_positives, sa.true_positives + sb.true_positives)
    assert TokenScores.concatenate([a, a]).weight is None
    assert len(TokenScores.concatenate([])) == 0


# --------------------------------------------------------------------------- #
# Empty denominators
# --------------------------------------------------------------------------- #


def test_no_gold_gives_recall_one_and_nothing_masked_gives_precision_one() -> None:
    scores = TokenScores([False, False], [False, True], [False, False], [0.9, 0.9])
    op = evaluate_pair(scores, 0.5, 0.5)
    assert (op.masked, op.gold, op.recall, op.precision) == (0, 0, 1.0, 1.0)
    sw = sweep(scores, [0.5, 0.95], [0.5, 0.95])
    assert (sw.recall == 1.0).all()
    assert sw.precision[0, 0] == 1.0 and sw.precision[1, 1] == 0.0
    assert sweep(TokenScores.concatenate([])).point(0, 0).recall == 1.0


def test_nothing_masked_with_gold_has_zero_recall() -> None:
    scores = TokenScores([True], [False], [False], [0.9])
    op = evaluate_pair(scores, 0.5, 0.5)
    assert (op.recall, op.precision, op.f1) == (0.0, 1.0, 0.0)


# --------------------------------------------------------------------------- #
# Candidate grid
# --------------------------------------------------------------------------- #


def test_grid_with_few_values_reaches_every_decision() -> None:
    scores = random_scores(9, n=200, n_levels=8)
    grid = threshold_grid(scores)
    assert grid[0] == 0.0 and grid[-1] == 1.0 and np.all(np.diff(grid) > 0)
    dense = np.linspace(0.0, 1.0, 2001)
    on_grid = {apply_thresholds(scores, t, t).tobytes() for t in grid}
    everywhere = {apply_thresholds(scores, t, t).tobytes() for t in dense}
    assert on_grid == everywhere


def test_grid_with_many_values_is_capped_quantiles_of_observed_scores() -> None:
    scores = random_scores(10, n=5000)
    grid = threshold_grid(scores, max_points=50)
    assert 2 < len(grid) <= 50
    assert grid[0] == 0.0 and grid[-1] == 1.0 and np.all(np.diff(grid) > 0)
    assert np.isin(grid[1:-1], scores.p_safe).all()  # each is an exact decision boundary
    with pytest.raises(ValueError):
        threshold_grid(scores, max_points=1)


# --------------------------------------------------------------------------- #
# Choice at a recall target
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("target", [0.5, 0.8, 0.95])
def test_best_at_recall_is_the_most_precise_feasible_pair(seed: int, target: float) -> None:
    scores = random_scores(seed, n_levels=5)
    sw = sweep(scores)
    best = sw.best_at_recall(target)
    assert best is not None
    feasible = [sw.point(i, j) for i in range(len(sw.lows)) for j in range(len(sw.highs))]
    feasible = [p for p in feasible if p.recall >= target]
    assert best.recall >= target
    assert best.precision == max(p.precision for p in feasible)
    ties = [p for p in feasible if p.precision == best.precision]
    assert (best.high, best.low) == max((p.high, p.low) for p in ties)
    assert best == evaluate_pair(scores, best.low, best.high)


def test_best_at_recall_tie_break_prefers_more_masking() -> None:
    # every token is gold: precision is 1.0 wherever anything is masked, so the
    # choice among those equal-precision pairs is decided by the tie-break alone
    scores = TokenScores([True] * 4, [False, False, True, True], [False] * 4, [0.2, 0.6, 0.2, 0.6])
    grid = np.array([0.0, 0.3, 0.7, 1.0])
    best = sweep(scores, grid, grid).best_at_recall(0.5)
    assert best is not None and (best.low, best.high) == (1.0, 1.0)
    assert best.precision == 1.0 and best.recall == 1.0

    # equal precision on both axes, but a higher high beats a higher low
    sw = Sweep(
        lows=np.array([0.1, 0.9]),
        highs=np.array([0.2, 0.8]),
        recall=np.array([[0.9, 0.9], [0.9, 0.5]]),
        precision=np.array([[0.5, 0.7], [0.7, 0.9]]),
        masked=np.array([[10, 10], [10, 10]]),
        gold=10,
        true_positives=np.array([[5, 7], [7, 9]]),
    )
    best = sw.best_at_recall(0.9)
    assert best is not None and (best.low, best.high, best.precision) == (0.1, 0.8, 0.7)


def test_best_at_recall_does_not_trade_precision_for_masking() -> None:
    # the non-gold token (p=0.9) is masked only when low >= 0.9: more masking,
    # same recall, lower precision -> must not be chosen
    scores = TokenScores([True, False], [False, False], [False, False], [0.2, 0.9])
    best = sweep(scores, [0.0, 0.5, 1.0], [0.0]).best_at_recall(1.0)
    assert best is not None and best.low == 0.5 and best.precision == 1.0


def test_unreachable_target_gives_none() -> None:
    # a gold token with p=1.0 on the rules-safe side is never masked by low < 1
    scores = TokenScores([True, True], [False, False], [False, False], [1.0, 0.1])
    sw = sweep(scores, [0.0, 0.5], [0.0, 0.5])
    assert sw.best_at_recall(1.0) is None
    assert sw.best_at_recall(0.5) is not None
    assert sweep(scores).best_at_recall(1.0) is not None  # the grid includes 1.0
    assert sweep(scores).best_at_recall(1.01) is None


# --------------------------------------------------------------------------- #
# Pareto front
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_frontier_is_monotone_and_undominated(seed: int) -> None:
    scores = random_scores(seed, n=500)
    sw = sweep(scores, np.linspace(0, 1, 25), np.linspace(0, 1, 25))
    front = sw.frontier()
    assert len(front) >= 2
    rec = np.array([p.recall for p in front])
    prec = np.array([p.precision for p in front])
    assert np.all(np.diff(rec) > 0)
    assert np.all(np.diff(prec) <= 0)
    all_r, all_p = sw.recall.ravel(), sw.precision.ravel()
    for p in front:  # nothing strictly better
        assert not np.any((all_r >= p.recall) & (all_p >= p.precision) & ((all_r > p.recall) | (all_p > p.precision)))
    for r, q in zip(all_r, all_p):  # every pair is matched or beaten by the front
        assert np.any((rec >= r) & (prec >= q))
    for p in front:
        assert p == evaluate_pair(scores, p.low, p.high)


def test_best_at_recall_lies_on_the_frontier() -> None:
    sw = sweep(random_scores(4, n=500))
    best = sw.best_at_recall(0.9)
    assert best is not None
    assert (best.recall, best.precision) in {(p.recall, p.precision) for p in sw.frontier()}


def test_operating_point_f1() -> None:
    op = OperatingPoint(0.1, 0.9, recall=0.5, precision=1.0, masked=2, true_positives=2, gold=4)
    assert op.f1 == pytest.approx(2 / 3)


# --------------------------------------------------------------------------- #
# Plot
# --------------------------------------------------------------------------- #


def test_plot_writes_a_png_atomically(tmp_path: Path) -> None:
    scores = random_scores(0, n=500)
    sw = sweep(scores, np.linspace(0, 1, 30), np.linspace(0, 1, 30))
    chosen = sw.best_at_recall(0.9)
    out = tmp_path / "reports" / "nested" / "pr.png"  # parent dirs do not exist yet
    result = plot_precision_recall(sw, chosen, out, target_recall=0.9, title="test")
    assert result == out
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000
    assert os.listdir(out.parent) == ["pr.png"]  # no temp file left behind
    assert out.stat().st_mode & 0o777 == 0o644

    # without a choice or a target it still renders, replacing the old file
    plot_precision_recall(sw, None, out)
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert os.listdir(out.parent) == ["pr.png"]


def test_failed_plot_keeps_previous_file_and_leaves_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    out = tmp_path / "pr.png"
    out.write_bytes(b"previous")

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(Figure, "savefig", boom)
    sw = sweep(random_scores(1, n=50), [0.0, 1.0], [0.0, 1.0])
    with pytest.raises(RuntimeError, match="disk full"):
        plot_precision_recall(sw, None, out)
    assert out.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["pr.png"]


def test_token_scores_save_load_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    s = TokenScores(
        gold_phi=np.array([True, False, True]), rules_unsafe=np.array([True, True, False]),
        never_release=np.array([False, False, True]), p_safe=np.array([0.1, 0.99, 0.5]),
        weight=np.array([1, 2, 3]), families=np.array(["unknown", "pattern:DATE", "safe"], dtype=object),
    )
    path = tmp_path / "scores" / "s.npz"
    s.save(path)
    back = TokenScores.load(path)
    for name in ("gold_phi", "rules_unsafe", "never_release", "p_safe", "weight"):
        np.testing.assert_array_equal(getattr(back, name), getattr(s, name))
    assert list(back.families) == ["unknown", "pattern:DATE", "safe"] and back.families.dtype == object
    plain = TokenScores(np.array([True]), np.array([True]), np.array([False]), np.array([0.3]))
    plain.save(tmp_path / "p.npz")
    again = TokenScores.load(tmp_path / "p.npz")
    assert again.weight is None and again.families is None
