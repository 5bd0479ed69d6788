"""Exact binomial bounds: known values, edge cases, monotonicity."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deid_core.qa.stats import clopper_pearson_interval, clopper_pearson_upper


def test_upper_with_no_events_has_a_closed_form() -> None:
    # P(0 events | p) = (1-p)^n = alpha  =>  p = 1 - alpha^(1/n)
    assert clopper_pearson_upper(0, 1000, 0.95) == pytest.approx(1 - 0.05 ** (1 / 1000), rel=1e-9)
    assert clopper_pearson_upper(0, 1000, 0.95) == pytest.approx(0.0029912, abs=1e-7)


@pytest.mark.parametrize("n", [300, 1000, 10_000])
def test_upper_with_no_events_is_near_the_rule_of_three(n: int) -> None:
    upper = clopper_pearson_upper(0, n, 0.95)
    assert upper < 3 / n
    assert upper == pytest.approx(3 / n, rel=0.01)


def test_upper_known_value_with_events() -> None:
    # one-sided 95% upper bound for 1 event in 100 trials (tables: 0.0466)
    assert clopper_pearson_upper(1, 100, 0.95) == pytest.approx(0.04656, abs=1e-5)


def test_textbook_two_sided_interval() -> None:
    lower, upper = clopper_pearson_interval(5, 20, 0.95)
    assert lower == pytest.approx(0.0866, abs=1e-4)
    assert upper == pytest.approx(0.4910, abs=1e-4)


def test_interval_ends_are_pinned() -> None:
    lower, upper = clopper_pearson_interval(0, 50, 0.95)
    assert lower == 0.0
    assert upper == pytest.approx(1 - 0.025 ** (1 / 50), rel=1e-9)
    lower, upper = clopper_pearson_interval(50, 50, 0.95)
    assert upper == 1.0
    assert lower == pytest.approx(0.025 ** (1 / 50), rel=1e-9)
    assert clopper_pearson_interval(0, 0, 0.95) == (0.0, 1.0)


def test_nothing_reviewed_or_all_events_gives_upper_one() -> None:
    assert clopper_pearson_upper(0, 0) == 1.0
    assert clopper_pearson_upper(7, 7) == 1.0


@pytest.mark.parametrize(
    ("x", "n", "confidence"),
    [(-1, 10, 0.95), (11, 10, 0.95), (0, -1, 0.95), (1, 10, 0.0), (1, 10, 1.0), (1, 10, 1.5),
     (1.5, 10, 0.95), (True, 10, 0.95), ("1", 10, 0.95)],
)
def test_invalid_inputs_are_refused(x: object, n: object, confidence: float) -> None:
    with pytest.raises(ValueError):
        clopper_pearson_upper(x, n, confidence)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        clopper_pearson_interval(x, n, confidence)  # type: ignore[arg-type]


def test_upper_is_monotone_in_events_trials_and_confidence() -> None:
    n = 200
    uppers = [clopper_pearson_upper(x, n) for x in range(n + 1)]
    assert all(a < b for a, b in zip(uppers, uppers[1:]))
    by_n = [clopper_pearson_upper(3, n) for n in range(3, 400)]
    assert all(a > b for a, b in zip(by_n, by_n[1:]))
    by_conf = [clopper_pearson_upper(3, 100, c) for c in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)]
    assert all(a < b for a, b in zip(by_conf, by_conf[1:]))


@given(n=st.integers(1, 5000), data=st.data(), confidence=st.floats(0.5, 0.999))
def test_interval_contains_the_estimate_and_one_sided_bound_is_tighter(
    n: int, data: st.DataObject, confidence: float
) -> None:
    x = data.draw(st.integers(0, n))
    lower, upper = clopper_pearson_interval(x, n, confidence)
    assert 0.0 <= lower <= x / n <= upper <= 1.0
    one_sided = clopper_pearson_upper(x, n, confidence)
    assert one_sided <= upper or math.isclose(one_sided, upper)
    assert x / n <= one_sided <= 1.0
