"""`bench/inference.py --small` runs on CPU under both backends and prints the time breakdown (CI's run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.shared_data


def test_small_inference_bench_prints_both_backends_and_the_breakdown(shared_data: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "inference.py"), "--small", "--docs", "20"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "tensorflow on cpu" in out and "jax on cpu" in out and "jaxlib" in out
    assert "breakdown of the hybrid" in out and "transfer" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("tensorflow ", "jax ")) and " on " not in line]
    assert len(rows) == 4  # two backends x two budgets
    assert all(float(r[3]) > 0 and float(r[5]) > 0 for r in rows)
