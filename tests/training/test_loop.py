"""The network's own dev F1 that each epoch records beside the hybrid score (deid_core/training/loop.py)."""

from __future__ import annotations

import numpy as np
import pytest

from deid_core.training.loop import network_f1


def test_network_f1_counts_tokens() -> None:
    gold = np.array([True, True, True, False, False, False])
    predicted = np.array([True, True, False, True, False, False])
    # tp 2, fn 1, fp 1: precision 2/3, recall 2/3
    assert network_f1(gold, predicted) == pytest.approx(2 / 3)


def test_network_f1_edge_cases() -> None:
    none = np.zeros(4, dtype=bool)
    assert network_f1(none, none) == 0.0
    assert network_f1(np.ones(4, dtype=bool), none) == 0.0
    assert network_f1(none, np.ones(4, dtype=bool)) == 0.0
    assert network_f1(np.ones(4, dtype=bool), np.ones(4, dtype=bool)) == 1.0
