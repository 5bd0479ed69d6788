"""The same committed model on TensorFlow and on JAX: identical masking on PhysioNet test.

Issue 15's bar: the backend is a deployment choice (CPU executors, GPU
executors), never a change in what is released. Each backend runs in its own
child process (Keras keeps its first backend). Tolerance for P(safe): 1e-5
absolute (measured differences are below 1e-6: float32 kernels of the two
backends sum in different orders).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.shared_data

REPO = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5


def _probe(backend: str, corpus: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tests.acceptance.backend_probe", "--backend", backend,
                           "--corpus", str(corpus), "--out", str(out)], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def test_tensorflow_and_jax_mask_the_same_tokens(shared_data: Path, tmp_path: Path) -> None:
    corpus = shared_data / "physionet_deid" / "test.jsonl"
    tf = _probe("tensorflow", corpus, tmp_path / "tf.npz")
    jx = _probe("jax", corpus, tmp_path / "jax.npz")
    assert str(tf["backend"]) == "tensorflow" and str(jx["backend"]) == "jax"
    assert int(tf["failures"]) == 0 and int(jx["failures"]) == 0
    assert tf["p_safe"].shape == jx["p_safe"].shape and tf["p_safe"].size > 50_000
    assert float(np.abs(tf["p_safe"] - jx["p_safe"]).max()) < TOLERANCE
    masks_tf, masks_jax = json.loads(str(tf["masks"])), json.loads(str(jx["masks"]))
    assert sum(map(len, masks_tf)) > 500
    assert masks_tf == masks_jax
