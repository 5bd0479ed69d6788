"""Shared helpers for the benchmark scripts (paths, shared-data checks)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
PHYSIONET = SHARED / "physionet_deid"
VAERS = SHARED / "vaers" / "vaers_narratives.jsonl"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def require(path: Path) -> Path:
    """Exit with a clear message when the shared data is absent."""
    if not path.exists():
        sys.exit(f"skipped: {path} is absent (the benchmarks need ../shared/data)")
    return path
