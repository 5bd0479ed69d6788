"""`bench/accuracy.py --frontier` puts each dev-chosen point on test beside the bound searched on test itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.bench_module import bench_module

REPO = Path(__file__).resolve().parents[2]



def _accuracy():  # type: ignore[no-untyped-def]
    """bench/accuracy.py as a module."""
    return bench_module("accuracy")


def _point(target: float, recall: float, precision: float) -> dict:
    return {"dev_target": target, "test_recall": recall, "test_precision": precision}


def test_the_frontier_is_read_at_a_recall_from_dev_chosen_points_only() -> None:
    read = _accuracy().read_at_recall
    points = [_point(0.99, 0.985, 0.60), _point(0.98, 0.97, 0.70), _point(0.975, 0.96, 0.76),
              _point(0.97, 0.95, 0.80), {"dev_target": None, "test_recall": 0.964, "test_precision": 0.99}]
    got = read(points, 0.964)
    # the reference row (dev_target None) is never read as ours
    assert got["best_reaching"] == {"dev_target": 0.98, "test_recall": 0.97, "test_precision": 0.70}
    # 0.964 lies 0.4 of the way from 0.96 (0.76) to 0.97 (0.70)
    assert got["interpolated_precision"] == pytest.approx(0.76 + 0.4 * (0.70 - 0.76), abs=1e-4)
    # a recall no point reaches has no reading; one below every point has no interpolation
    assert read(points, 0.99) is None
    assert read(points, 0.90)["interpolated_precision"] is None


@pytest.mark.shared_data
def test_no_dev_choice_beats_the_bound_searched_on_test(shared_data: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "accuracy.py"), "--frontier", "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout)
    ours = [r for r in rows if r["dev_target"] is not None]
    assert len(ours) >= 5
    bounded = [r for r in ours if r["bound_precision"] is not None]
    assert bounded, "no point reached the bound's lowest recall"
    for r in bounded:
        # the bound is the best of every threshold choice at that test recall, the dev-chosen one included
        assert r["bound_precision"] >= r["test_precision"] - 1e-4, r
    deidpl = [r for r in rows if r["version"] == "deid.pl"]
    assert len(deidpl) == 1 and deidpl[0]["test_recall"] == 0.964
    assert 0 < deidpl[0]["bound_precision"] <= 1
    # the reading at deid.pl's recall comes from the dev-chosen points printed above it
    reading = deidpl[0]["ours_at_recall"]
    assert reading is not None
    best = reading["best_reaching"]
    assert best in [{k: r[k] for k in ("dev_target", "test_recall", "test_precision")} for r in ours]
    assert best["test_recall"] >= 0.964
