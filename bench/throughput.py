"""Throughput and memory of `deid detect` on the 995 VAERS narratives, per method.

Two views, each repeated (medians reported, this machine is noisy):
* end to end: the `deid detect` command as a user runs it (process start,
  dictionary and model load, detection, writing), with the child's peak RSS;
* steady state per core: detection only, in a child process pinned to one
  CPU core (model load excluded), which is what one Spark task slot sees.

    .venv/bin/python bench/throughput.py [--repeats 5] [--method hybrid ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, VAERS, require

from deid_core.corpus.jsonl import read_jsonl
from deid_core.detectors import Method
from deid_core.text.tokenize import token_spans


_RSS_WRAPPER = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def end_to_end(method: Method, repeats: int, n_docs: int, n_tokens: int) -> None:
    deid = Path(sys.executable).with_name("deid")
    walls, rss = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            out = Path(tmp) / "out.jsonl"
            t0 = time.perf_counter()
            # a fresh wrapper per run: RUSAGE_CHILDREN is a maximum over all
            # children ever waited for, so measuring it here would mix methods
            proc = subprocess.run(
                [sys.executable, "-c", _RSS_WRAPPER, str(deid), "detect", "--method", method.value, "--in",
                 str(VAERS), "--out", str(out), "--no-progress"],
                check=True, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )
            walls.append(time.perf_counter() - t0)
            rss.append(int(proc.stdout.strip().splitlines()[-1]))
    w = statistics.median(walls)
    print(f"{method.value:6s} end-to-end  median {w:6.2f}s  {n_docs / w:8.1f} docs/s  {n_tokens / w:9.0f} tokens/s  "
          f"peak RSS {max(rss) / 1024:6.0f} MiB  (runs: {', '.join(f'{x:.2f}' for x in walls)})", flush=True)


def steady_child(method: str, repeats: int) -> None:
    """Runs in a child pinned to one core before TensorFlow is imported."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from deid_core.config import load_config
    from deid_core.dictionaries.artifact import DictionaryArtifact
    from deid_core.detectors import build_detector

    texts = [d.text for d in read_jsonl(VAERS)]
    cfg = load_config()
    t0 = time.perf_counter()
    det = build_detector(Method(method), cfg, DictionaryArtifact.load(cfg.dictionaries.artifact))
    load = time.perf_counter() - t0
    det.detect(texts[:200])  # warm-up: graph tracing for the common shapes
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        det.detect(texts)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"load": load, "times": times}))


def steady_state(method: Method, repeats: int, n_docs: int, n_tokens: int) -> None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}
    proc = subprocess.run([sys.executable, __file__, "--child", method.value, "--repeats", str(repeats)],
                          check=True, capture_output=True, text=True, env=env, cwd=REPO)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    m = statistics.median(res["times"])
    print(f"{method.value:6s} steady      median {m:6.2f}s  {n_docs / m:8.1f} docs/s  {n_tokens / m:9.0f} tokens/s "
          f"per core  (load {res['load']:.2f}s excluded; runs: {', '.join(f'{x:.2f}' for x in res['times'])})",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--method", action="append", choices=[m.value for m in Method])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        steady_child(args.child, args.repeats)
        return
    texts = [d.text for d in read_jsonl(require(VAERS))]
    n_tokens = sum(len(token_spans(t)) for t in texts)
    print(f"VAERS narratives: {len(texts)} documents, {n_tokens} tokens, "
          f"{sum(map(len, texts)) / len(texts):.0f} characters per document on average")
    for name in args.method or [m.value for m in Method]:
        method = Method(name)
        end_to_end(method, args.repeats, len(texts), n_tokens)
        steady_state(method, args.repeats, len(texts), n_tokens)


if __name__ == "__main__":
    main()
