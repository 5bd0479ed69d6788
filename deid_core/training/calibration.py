"""Temperature scaling of the network's softmax (Guo et al. 2017), fitted on dev.

Training weights PHI tokens 20 times more than safe ones and early-stops on
hybrid precision, so the raw softmax is not a probability: it is too sure
of many tokens. One temperature T, chosen to minimise the dev negative
log-likelihood of the gold classes, divides the logits before the softmax.
It changes no argmax and no ranking (so neither the network-alone decisions
nor what a threshold search can reach), but P(safe) becomes a calibrated
score that thresholds, QA reviewers and downstream users can read as one,
and thresholds tuned on it are less crowded against 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

#: the search interval of T (log-uniform); 1 = uncalibrated
T_RANGE = (0.05, 20.0)


def _nll(logits: np.ndarray, labels: np.ndarray, t: float) -> float:
    z = logits / t
    z = z - z.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(z).sum(axis=-1))
    return float(np.mean(log_norm - z[np.arange(len(labels)), labels]))


def expected_calibration_error(logits: np.ndarray, labels: np.ndarray, t: float, bins: int = 15) -> float:
    """ECE of the top-class confidence, equal-width bins."""
    z = logits / t
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    conf = p.max(axis=-1)
    right = p.argmax(axis=-1) == labels
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    ece = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            ece += sel.mean() * abs(conf[sel].mean() - right[sel].mean())
    return float(ece)


@dataclass(frozen=True)
class Calibration:
    temperature: float
    nll_before: float
    nll_after: float
    ece_before: float
    ece_after: float


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> Calibration:
    """The T minimising the NLL of `labels` under softmax(logits / T); logits (n, k), labels (n,)."""
    logits = np.asarray(logits, dtype=np.float64).reshape(-1, np.asarray(logits).shape[-1])
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if len(labels) == 0 or len(labels) != len(logits):
        raise ValueError("need one label per row of logits")
    lo, hi = np.log(T_RANGE[0]), np.log(T_RANGE[1])
    res = minimize_scalar(lambda s: _nll(logits, labels, float(np.exp(s))), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-4})
    t = float(np.exp(res.x))
    return Calibration(
        temperature=round(t, 6),
        nll_before=round(_nll(logits, labels, 1.0), 6),
        nll_after=round(_nll(logits, labels, t), 6),
        ece_before=round(expected_calibration_error(logits, labels, 1.0), 6),
        ece_after=round(expected_calibration_error(logits, labels, t), 6),
    )
