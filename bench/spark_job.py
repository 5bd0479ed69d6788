"""Spark overhead: the de-identification job vs the core library on the same texts.

One run generates N synthetic E2B reports, ingests them into a temporary
bronze table, then times, each in a fresh process and repeated (medians):
* library: `DeidPipeline` (load + process every field) in one process pinned
  to one core, as one Spark task slot would run it;
* spark, local[1] and local[2]: the batch de-identification job (bronze ->
  silver MERGE), model load in the Python workers included.
It prints docs/s (fields/s) of each, the Spark/library ratio at one core,
and the scaling from 1 to 2 cores.

    .venv/bin/python bench/spark_job.py [--reports 300] [--repeats 3] [--method hybrid]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO

KEY = "bench-only-key-not-secret-0123456789"


def _child_library(lake: str, method: str) -> None:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    texts, cases, structured = json.loads(Path(lake, "fields.json").read_text())
    from deid_core.config import load_config
    from deid_core.methods import Method
    from deid_core.pipeline import DeidPipeline
    from deid_core.replace.keys import SecretKey
    from deid_core.replace.policy import load_policy

    t0 = time.perf_counter()
    cfg = load_config()
    pipe = DeidPipeline.build(cfg, load_policy("hipaa_safe_harbor", cfg.replacement.policies_dir),
                              SecretKey(KEY.encode()), method=Method(method))
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for i in range(0, len(order), 64):
        idx = order[i : i + 64]
        pipe.process([texts[j] for j in idx], [cases[j] for j in idx])
    for value, label, case in structured:
        pipe.replacer.replace_value(value, label, case)
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def _child_spark(lake: str, method: str, cores: int) -> None:
    os.environ["TF_NUM_INTRAOP_THREADS"] = "1"
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    from jobs.deidentify import prepare, run_batch
    from jobs.spark_session import delta_session
    from jobs.tables import Tables

    spark = delta_session("deid-bench", master=f"local[{cores}]")
    tables = Tables(Path(lake))
    key_file = Path(lake, "key")
    t0 = time.perf_counter()
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method=method, key_file=key_file, model_dir=None)
    rows, failed = run_batch(spark, tables, ctx)
    seconds = time.perf_counter() - t0
    spark.stop()
    print(json.dumps({"seconds": seconds, "rows": rows, "failed": failed}))


def _run_child(args: list[str]) -> dict:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "TF_CPP_MIN_LOG_LEVEL": "2"}
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True, env=env,
                         cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--method", default="hybrid")
    ap.add_argument("--child", choices=["library", "spark"])
    ap.add_argument("--lake")
    ap.add_argument("--cores", type=int, default=1)
    args = ap.parse_args()
    if args.child == "library":
        return _child_library(args.lake, args.method)
    if args.child == "spark":
        return _child_spark(args.lake, args.method, args.cores)

    from deid_core.e2b.parse import parse_reports
    from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch
    from jobs.ingest_e2b import ingest
    from jobs.spark_session import delta_session
    from jobs.tables import Tables

    work = Path(tempfile.mkdtemp(prefix="deid-bench-spark-"))
    try:
        src = work / "in"
        src.mkdir()
        half = args.reports // 2
        (src / "r3.xml").write_bytes(synthetic_r3_batch(half, 1))
        (src / "r2.xml").write_bytes(synthetic_r2_batch(args.reports - half, 2))
        texts, cases, structured = [], [], []
        for f in sorted(src.glob("*.xml")):
            for r in parse_reports(f.read_bytes()):
                for t in r.text_fields:
                    texts.append(t.text)
                    cases.append(r.case_id)
                structured += [[s.value, s.label, r.case_id] for s in r.structured_fields]
        base = work / "base"
        spark = delta_session("deid-bench-ingest", master="local[2]")
        ingest(spark, str(src), Tables(base))
        spark.stop()
        (base / "fields.json").write_text(json.dumps([texts, cases, structured]))
        (base / "key").write_text(KEY)
        n = len(texts) + len(structured)
        n_tokens = sum(len(t.split()) for t in texts)
        print(f"{args.reports} reports, {len(texts)} text fields ({n_tokens} whitespace tokens), "
              f"{len(structured)} structured fields; method {args.method}; medians of {args.repeats}", flush=True)
        results: dict[str, float] = {}
        for name, child in (("library, 1 core", ["--child", "library"]),
                            ("spark local[1]", ["--child", "spark", "--cores", "1"]),
                            ("spark local[2]", ["--child", "spark", "--cores", "2"])):
            walls = []
            for _ in range(args.repeats):
                lake = work / "run"
                shutil.rmtree(lake, ignore_errors=True)
                shutil.copytree(base, lake)
                walls.append(_run_child([*child, "--lake", str(lake), "--method", args.method])["seconds"])
            w = statistics.median(walls)
            results[name] = n / w
            print(f"{name:16s} median {w:7.2f}s  {n / w:8.1f} fields/s  "
                  f"(runs: {', '.join(f'{x:.1f}' for x in walls)})", flush=True)
        lib, s1, s2 = results["library, 1 core"], results["spark local[1]"], results["spark local[2]"]
        print(f"spark/library at one core: {s1 / lib:.2f}   scaling 1 -> 2 cores: {s2 / s1:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
