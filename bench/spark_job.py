"""Spark overhead: the de-identification job vs the core library on the same texts.

One run generates N synthetic E2B reports, ingests them into a temporary
bronze table, then times, each in a fresh process and repeated (medians):
* library: `DeidPipeline` (load + process every field) in one process pinned
  to one core, as one Spark task slot would run it;
* spark, local[1] and local[2]: the batch de-identification job (bronze ->
  silver MERGE), twice in one session: cold (fresh JVM, Python workers
  loading the model) and warm (the steady state of a long job).
It prints fields/s (every free-text and structured field is a document to
de-identify) and reports/s, the Spark/library ratio at one core, and the
scaling from 1 to 2 cores.

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
    from deid_core.detectors import Method
    from deid_core.pipeline import DeidPipeline
    from deid_core.replace.keys import SecretKey
    from deid_core.replace.policy import load_policy

    t0 = time.perf_counter()
    cfg = load_config()
    pipe = DeidPipeline.build(cfg, load_policy("hipaa_safe_harbor", cfg.replacement.policies_dir),
                              SecretKey(KEY.encode()), method=Method(method))
    pipe.process(["warm-up text on 12 Jan 2014"], ["warm-up"])
    t1 = time.perf_counter()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for i in range(0, len(order), 64):
        idx = order[i : i + 64]
        pipe.process([texts[j] for j in idx], [cases[j] for j in idx])
    for value, label, case in structured:
        pipe.replacer.replace_value(value, label, case)
    t2 = time.perf_counter()
    print(json.dumps({"cold": t2 - t0, "warm": t2 - t1}))


def _child_spark(lake: str, method: str, cores: int) -> None:
    os.environ["TF_NUM_INTRAOP_THREADS"] = "1"
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    from jobs.deidentify import prepare, run_batch
    from jobs.spark_session import delta_session
    from jobs.tables import Tables

    spark = delta_session("deid-bench", master=f"local[{cores}]")
    tables = Tables(Path(lake))
    key_file = Path(lake, "key")
    times = []
    for _ in range(2):  # cold (fresh JVM and Python workers), then warm (steady state)
        for folder in (tables.silver, tables.quarantine):
            shutil.rmtree(folder, ignore_errors=True)
        t0 = time.perf_counter()
        ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method=method, key_file=key_file,
                      model_dir=None)
        rows, failed = run_batch(spark, tables, ctx)
        times.append(time.perf_counter() - t0)
    spark.stop()
    print(json.dumps({"cold": times[0], "warm": times[1], "rows": rows, "failed": failed}))


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
        results: dict[str, dict[str, float]] = {}
        for name, child in (("library, 1 core", ["--child", "library"]),
                            ("spark local[1]", ["--child", "spark", "--cores", "1"]),
                            ("spark local[2]", ["--child", "spark", "--cores", "2"])):
            runs = []
            for _ in range(args.repeats):
                lake = work / "run"
                shutil.rmtree(lake, ignore_errors=True)
                shutil.copytree(base, lake)
                runs.append(_run_child([*child, "--lake", str(lake), "--method", args.method]))
            med = {k: statistics.median(r[k] for r in runs) for k in ("cold", "warm")}
            warm_runs = ", ".join(f"{r['warm']:.1f}" for r in runs)
            results[name] = {k: n / v for k, v in med.items()}
            print(f"{name:16s} warm {med['warm']:7.2f}s {n / med['warm']:8.1f} fields/s "
                  f"{args.reports / med['warm']:6.1f} reports/s | cold {med['cold']:7.2f}s "
                  f"{n / med['cold']:8.1f} fields/s  (warm runs: {warm_runs})",
                  flush=True)
        lib, s1, s2 = (results[k] for k in ("library, 1 core", "spark local[1]", "spark local[2]"))
        print(f"spark/library at one core, warm: {s1['warm'] / lib['warm']:.2f}  cold: {s1['cold'] / lib['cold']:.2f}"
              f"   scaling 1 -> 2 cores, warm: {s2['warm'] / s1['warm']:.2f}x  cold: {s2['cold'] / s1['cold']:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
