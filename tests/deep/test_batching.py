"""Batches for an accelerator: few padded shapes, and the same probabilities whatever the budget."""

from __future__ import annotations

import random

import numpy as np

from deid_core.deep.predictor import DeepModel, _ladder, batch_shape, rows_per_batch

from .conftest import TEXTS


def test_shapes_come_from_a_small_fixed_set() -> None:
    rng = random.Random(5)
    shapes = set()
    for _ in range(3000):
        longest = rng.randint(1, 64)
        budget = 8192
        _, length, _ = batch_shape(1, longest, 1, window=64, batch_tokens=budget)
        rows = rng.randint(1, rows_per_batch(length, budget))
        n_unique = rng.randint(1, rows * longest)
        r, length, u = batch_shape(rows, longest, n_unique, window=64, batch_tokens=budget)
        assert r >= rows and length >= longest and u >= n_unique and r * length <= budget
        shapes.add((r, length, u))
    lengths = {s[1] for s in shapes}
    assert lengths == {8, 16, 24, 32, 40, 48, 56, 64}
    # rows are powers of two, distinct rows on a ladder of 4 steps per doubling, or their caps
    # (budget / length, rows x length): compilations are bounded whatever the corpus
    pow2 = lambda x: x & (x - 1) == 0  # noqa: E731
    assert all(pow2(r) or r == 8192 // n for r, n, _ in shapes)
    assert all(u == _ladder(u, 64) or u == r * n for r, n, u in shapes)
    # at most 25% padding of the distinct rows (the character BiLSTM's work)
    assert all(_ladder(k, 64) <= max(64, 1.25 * k) for k in range(1, 9000))
    assert len(shapes) < 1000  # the bound by design; a real run meets a few dozen (bench/inference.py prints it)  # the bound by design; a real run meets a handful (bench/inference.py prints it)


def test_length_cap_is_the_window() -> None:
    assert batch_shape(3, 40, 10, window=40, batch_tokens=4096)[1] == 40
    assert batch_shape(3, 100, 10, window=100, batch_tokens=4096)[1] == 104


def test_budget_does_not_change_the_probabilities(cfg, rules, tiny_model_dir) -> None:  # type: ignore[no-untyped-def]
    model = DeepModel.load(tiny_model_dir, cfg)
    texts = TEXTS * 7 + ["word " * 150, ""]
    analyses = [rules.analyse(t) for t in texts]
    model.batch_tokens = 8192
    big = model.predict(analyses)
    model.batch_tokens = 128
    model.profile = True
    model.times.reset()
    small = model.predict(analyses)
    for a, b in zip(big, small, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)
    t = model.times
    assert t.batches > 1 and t.tokens > 0 and t.padded_tokens >= t.tokens and t.shapes
    assert t.network > 0 and t.encode > 0 and t.transfer >= 0
