"""Ingest speed: E2B files -> bronze, first ingest into fresh tables and a re-ingest of the same files.

Generates `--files` synthetic E2B batch files (half R3, half R2) with
`--reports` reports in all, ingests them once to warm the session up, then
`--repeats` times into fresh tables, and once more into the first of them
(the re-ingest: nothing changes, every report is checked against bronze).
Prints medians and reports/s.

    .venv/bin/python bench/ingest.py [--reports 3000] [--files 6] [--repeats 3] [--cores 2]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import REPO  # noqa: F401 - puts the project on sys.path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=int, default=3000)
    ap.add_argument("--files", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()

    from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch
    from jobs.ingest_e2b import ingest
    from jobs.spark_session import delta_session
    from jobs.tables import Tables

    work = Path(tempfile.mkdtemp(prefix="deid-bench-ingest-"))
    try:
        src = work / "in"
        src.mkdir()
        per = max(1, args.reports // args.files)
        for i in range(args.files):
            make = synthetic_r3_batch if i % 2 == 0 else synthetic_r2_batch
            (src / f"batch_{i:03d}.xml").write_bytes(make(per, 100 + i))
        size = sum(f.stat().st_size for f in src.iterdir())
        spark = delta_session("deid-bench-ingest", master=f"local[{args.cores}]")
        ingest(spark, str(src), Tables(work / "warm-up"))
        times = []
        for r in range(args.repeats):
            t0 = time.perf_counter()
            stats = ingest(spark, str(src), Tables(work / f"lake{r}"))
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ingest(spark, str(src), Tables(work / "lake0"))
        again = time.perf_counter() - t0
        first = statistics.median(times)
        print(f"{stats.files} files ({size / 1e6:.1f} MB), {stats.reports} reports, local[{args.cores}], "
              f"medians of {args.repeats}")
        print(f"first ingest {first:6.2f}s {stats.reports / first:7.1f} reports/s  "
              f"(runs: {', '.join(f'{t:.1f}' for t in times)})")
        print(f"re-ingest    {again:6.2f}s {stats.reports / again:7.1f} reports/s  (nothing changes)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
