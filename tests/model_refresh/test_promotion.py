"""The promotion gate: a decision table over recall, precision and unsound comparisons."""

from __future__ import annotations

import math

import pytest

from deid_core.model_refresh.promotion import EvalResult, decide


def res(recall: float, precision: float, gold: int = 1000, failures: int = 0) -> EvalResult:
    return EvalResult(recall=recall, precision=precision, gold_tokens=gold, caught=round(recall * gold) if math.isfinite(recall) else 0,
                      documents=10, failures=failures)


CUR = res(0.990, 0.500)


@pytest.mark.parametrize(
    ("cand", "tol", "drop", "promote", "why"),
    [
        (res(0.990, 0.500), 0.0, 0.01, True, "passes"),            # equal on both counts
        (res(0.995, 0.600), 0.0, 0.01, True, "passes"),            # better on both
        (res(0.989, 0.900), 0.0, 0.01, False, "recall below"),     # any recall loss, whatever the precision
        (res(0.989, 0.500), 0.002, 0.01, True, "passes"),          # inside the recall tolerance
        (res(0.987, 0.500), 0.002, 0.01, False, "recall below"),   # outside it
        (res(0.990, 0.490), 0.0, 0.01, True, "passes"),            # precision drop exactly at the margin
        (res(0.990, 0.489), 0.0, 0.01, False, "precision dropped"),
        (res(0.999, 0.400), 0.0, 0.01, False, "precision dropped"),  # better recall does not buy precision
        (res(0.990, 0.499), 0.0, 0.0, False, "precision dropped"),   # no drop allowed
    ],
)
def test_decision_table(cand: EvalResult, tol: float, drop: float, promote: bool, why: str) -> None:
    d = decide({"s": cand}, {"s": CUR}, tol, drop)
    assert d.promote is promote
    assert len(d.reasons) == 1 and d.reasons[0].startswith("s: ") and why in d.reasons[0]


def test_recall_as_ratio_of_counts_is_not_lost_to_float_noise() -> None:
    # 0.1 + 0.2 != 0.3 in floats: equal recall computed two ways still passes
    a = EvalResult(recall=0.1 + 0.2, precision=0.5, gold_tokens=10)
    b = EvalResult(recall=0.3, precision=0.5, gold_tokens=10)
    assert decide({"s": b}, {"s": a}, 0.0, 0.0).promote


def test_every_set_must_pass() -> None:
    cand = {"a": res(0.99, 0.5), "b": res(0.98, 0.5)}
    cur = {"a": res(0.99, 0.5), "b": res(0.99, 0.5)}
    d = decide(cand, cur, 0.0, 0.01)
    assert not d.promote
    assert [r.split(":")[0] for r in d.reasons] == ["a", "b"] and "passes" in d.reasons[0]


@pytest.mark.parametrize(
    ("cand", "cur", "why"),
    [
        ({}, {"s": CUR}, "no result for the candidate"),
        ({"s": CUR}, {}, "no result for the current model"),
        ({"s": CUR, "t": CUR}, {"s": CUR}, "t: no result for the current model"),
        ({}, {}, "no evaluation sets"),
    ],
)
def test_missing_sets_reject(cand: dict, cur: dict, why: str) -> None:  # type: ignore[type-arg]
    d = decide(cand, cur, 1.0, 1.0)
    assert not d.promote and any(why in r for r in d.reasons)


@pytest.mark.parametrize(
    ("cand", "cur", "why"),
    [
        (res(1.0, 1.0, failures=1), res(0.9, 0.4), "detector failures"),   # fully masked docs inflate recall
        (res(1.0, 1.0), res(0.9, 0.4, failures=2), "detector failures"),
        (res(0.0, 0.0, gold=0), res(0.0, 0.0, gold=0), "no gold PHI tokens"),
        (res(1.0, 1.0, gold=999), res(0.9, 0.4, gold=1000), "gold token counts differ"),
        (res(math.nan, 1.0), res(0.9, 0.4), "outside [0, 1]"),
        (res(1.2, 1.0), res(0.9, 0.4), "outside [0, 1]"),
    ],
)
def test_unsound_comparisons_reject_even_with_loose_margins(cand: EvalResult, cur: EvalResult, why: str) -> None:
    d = decide({"s": cand}, {"s": cur}, 1.0, 1.0)
    assert not d.promote and why in d.reasons[0]


@pytest.mark.parametrize(("tol", "drop"), [(-0.01, 0.01), (0.0, 1.5), (math.nan, 0.0)])
def test_margins_out_of_range_raise(tol: float, drop: float) -> None:
    with pytest.raises(ValueError):
        decide({"s": CUR}, {"s": CUR}, tol, drop)


def test_eval_result_round_trips_and_ignores_unknown_keys() -> None:
    r = res(0.97, 0.3, failures=1)
    assert EvalResult.from_dict({**r.as_dict(), "f1": 0.4}) == r
