"""`bench/accuracy.py --models DIR` scores a classical model directory alone and as the hybrid's second stage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.shared_data


def test_models_rows_carry_family_training_time_and_speed(cfg, artifact, shared_data: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.classic.conftest import train_dir

    crf = train_dir(cfg, artifact, "crf", tmp_path / "crf")
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "accuracy.py"), "--models", str(crf), "--split", "dev",
                           "--json"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout)
    assert [r["name"] for r in rows] == ["rules", "crf/deep", "crf/hybrid"]
    for r in rows[1:]:
        assert r["family"] == "crf" and r["training_seconds"] >= 0 and r["tokens_per_second"] > 0
        assert r["version"].startswith(f"{r['method']}+crf-")
        assert 0 < r["token"]["recall"] <= 1
