"""Throughput and memory of `deid detect` on the 995 VAERS narratives.

Two views, each repeated (medians reported, this machine is noisy):
* end to end: the `deid detect` command as a user runs it (process start,
  dictionary load, detection, writing), with the child's peak RSS;
* steady state: detection only, in one process with everything loaded, which
  is what a long-running Spark worker sees.

    .venv/bin/python bench/throughput.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, VAERS, require

from deid_core.config import load_config
from deid_core.corpus.jsonl import read_jsonl
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.methods import Method, build_detector
from deid_core.text.tokenize import token_spans


def end_to_end(method: Method, repeats: int, n_docs: int, n_tokens: int) -> None:
    deid = Path(sys.executable).with_name("deid")
    walls, rss = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            out = Path(tmp) / "out.jsonl"
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t0 = time.perf_counter()
            subprocess.run([str(deid), "detect", "--method", method.value, "--in", str(VAERS), "--out", str(out),
                            "--no-progress"], check=True, cwd=REPO, stderr=subprocess.DEVNULL)
            walls.append(time.perf_counter() - t0)
            rss.append(max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    w = statistics.median(walls)
    print(f"{method.value:6s} end-to-end  median {w:6.2f}s  {n_docs / w:8.1f} docs/s  {n_tokens / w:9.0f} tokens/s  "
          f"peak RSS {max(rss) / 1024:6.0f} MiB  (runs: {', '.join(f'{x:.2f}' for x in walls)})")


def steady_state(method: Method, repeats: int, texts: list[str], n_tokens: int) -> None:
    cfg = load_config()
    t0 = time.perf_counter()
    det = build_detector(method, cfg, DictionaryArtifact.load(cfg.dictionaries.artifact))
    load = time.perf_counter() - t0
    det.detect(texts[:50])  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        det.detect(texts)
        times.append(time.perf_counter() - t0)
    m = statistics.median(times)
    print(f"{method.value:6s} steady      median {m:6.2f}s  {len(texts) / m:8.1f} docs/s  {n_tokens / m:9.0f} tokens/s  "
          f"(load {load:.2f}s excluded; 1 core)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    texts = [d.text for d in read_jsonl(require(VAERS))]
    n_tokens = sum(len(token_spans(t)) for t in texts)
    print(f"VAERS narratives: {len(texts)} documents, {n_tokens} tokens, "
          f"{sum(map(len, texts)) / len(texts):.0f} characters per document on average")
    for method in Method:
        end_to_end(method, args.repeats, len(texts), n_tokens)
        steady_state(method, args.repeats, texts, n_tokens)


if __name__ == "__main__":
    main()
