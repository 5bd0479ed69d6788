"""Allocation of a QA sample over strata, bucket labels and sample names."""

from __future__ import annotations

import pytest

from deid_core.qa.sampling import allocate, length_bucket, sample_id


@pytest.mark.parametrize(("length", "label"), [(0, "<300"), (299, "<300"), (300, "300-999"), (999, "300-999"),
                                               (1000, "1000-2999"), (3000, ">=3000"), (10**6, ">=3000")])
def test_length_buckets(length: int, label: str) -> None:
    assert length_bucket(length, [300, 1000, 3000]) == label


def test_allocation_is_proportional_with_one_per_stratum_and_exact_total() -> None:
    counts = {("A", "US"): 700, ("A", "DE"): 200, ("B", "FR"): 90, ("C", "JP"): 10}
    alloc = allocate(counts, 40, "s")
    assert sum(alloc.values()) == 40
    assert set(alloc) == set(counts) and min(alloc.values()) >= 1
    assert alloc[("A", "US")] > alloc[("A", "DE")] > alloc[("B", "FR")] >= alloc[("C", "JP")]
    assert abs(alloc[("A", "US")] - 1 - 36 * 699 / 996) <= 1


def test_allocation_never_exceeds_a_stratum_and_caps_at_the_population() -> None:
    counts = {("a",): 2, ("b",): 1, ("c",): 50}
    alloc = allocate(counts, 30, "s")
    assert alloc[("a",)] <= 2 and alloc[("b",)] == 1 and sum(alloc.values()) == 30
    assert allocate(counts, 500, "s") == counts
    assert allocate({}, 10, "s") == {} and allocate(counts, 0, "s") == {}


def test_more_strata_than_reports_draws_strata_by_size_reproducibly() -> None:
    counts = {(str(i),): (1000 if i < 3 else 1) for i in range(40)}
    alloc = allocate(counts, 5, "seed")
    assert sum(alloc.values()) == 5 and set(alloc.values()) == {1}
    assert alloc == allocate(counts, 5, "seed")
    # the three large strata are almost always among the five drawn
    hits = sum(all((str(i),) in allocate(counts, 5, f"seed{k}") for i in range(3)) for k in range(50))
    assert hits >= 45


def test_sample_ids_are_stable_safe_and_change_with_the_batch() -> None:
    a = sample_id("2026-11-26", "seed", "10-123")
    assert a == sample_id("2026-11-26", "seed", "10-123") and a.startswith("qa-2026-11-26-")
    assert a != sample_id("2026-11-26", "seed", "11-456")
    assert sample_id("manual__2026-11-26T00:00:00+00:00 x/y", "s", "d").count("/") == 0
