"""Temperature scaling finds a known temperature and lowers NLL and ECE."""

from __future__ import annotations

import numpy as np
import pytest


def test_temperature_scaling_recovers_a_known_temperature() -> None:
    from deid_core.training.calibration import fit_temperature

    rng = np.random.default_rng(0)
    true_logits = rng.normal(size=(4000, 3)) * 2.0
    p = np.exp(true_logits) / np.exp(true_logits).sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(3, p=row) for row in p])
    cal = fit_temperature(true_logits * 3.0, labels)  # an over-confident network
    assert cal.temperature == pytest.approx(3.0, rel=0.15)
    assert cal.nll_after < cal.nll_before and cal.ece_after < cal.ece_before
    with pytest.raises(ValueError):
        fit_temperature(np.zeros((2, 3)), np.zeros(3, dtype=int))
