"""Streaming: a large batch is read report by report, in bounded memory.

A production batch can be gigabytes; holding its tree would cost several
times its size (libxml2 nodes), so the reader must clear each report after
use. Measured on a generated 2,000-report batch of each format: the Python
heap (tracemalloc) and the process's resident memory (libxml2's nodes are
invisible to tracemalloc) must stay far below the file size, while
building the whole tree would take several times the file size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deid_core.e2b import iter_reports
from deid_core.e2b.synthetic import synthetic_reports
from deid_core.e2b.synthetic_r2 import write_r2_batch
from deid_core.e2b.synthetic_r3 import write_r3_batch

N_REPORTS = 2000
REPO = Path(__file__).resolve().parents[2]

_MEASURE = textwrap.dedent("""
    import json, resource, sys, tracemalloc
    from deid_core.e2b import iter_reports
    # warm up imports and lxml before the baseline
    list(iter_reports(b"<ichicsr><safetyreport><safetyreportid>x</safetyreportid></safetyreport></ichicsr>"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    count = sum(1 for _ in iter_reports(sys.argv[1]))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"count": count, "peak": peak, "rss_growth_kib": after - before}))
""")


@pytest.fixture(scope="module")
def big_batches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    plans = synthetic_reports(N_REPORTS, 99)
    folder = tmp_path_factory.mktemp("big")
    paths = {"R3": folder / "big_r3.xml", "R2": folder / "big_r2.xml"}
    paths["R3"].write_bytes(write_r3_batch(plans, seed=99, start=0))
    paths["R2"].write_bytes(write_r2_batch(plans, seed=99, start=0))
    return paths


@pytest.mark.parametrize("fmt", ["R3", "R2"])
def test_all_reports_of_a_large_batch_come_out(fmt: str, big_batches: dict[str, Path]) -> None:
    reports = iter_reports(big_batches[fmt])
    count, cases = 0, set()
    for report in reports:
        assert report.format == fmt
        count += 1
        cases.add(report.case_id)
    assert count == N_REPORTS
    assert len(cases) == N_REPORTS * 3 // 4


@pytest.mark.parametrize("fmt", ["R3", "R2"])
def test_memory_stays_bounded(fmt: str, big_batches: dict[str, Path]) -> None:
    path = big_batches[fmt]
    size = path.stat().st_size
    assert size > 5_000_000  # large enough for a whole tree to stand out
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["count"] == N_REPORTS
    assert result["peak"] < size / 20, result  # Python heap: a few reports' worth
    if sys.platform.startswith("linux"):  # ru_maxrss is in KiB on Linux
        assert result["rss_growth_kib"] * 1024 < size / 2, result


def test_reading_is_incremental(big_batches: dict[str, Path]) -> None:
    """The first report is available after reading a small prefix of the file."""
    path = big_batches["R3"]
    with path.open("rb") as fh:
        first = next(iter_reports(fh))
        assert first.case_id
        assert fh.tell() < path.stat().st_size / 50
