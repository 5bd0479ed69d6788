"""Network and hybrid inference speed per Keras backend and batch token budget, with a time breakdown.

For each backend (one child process each: Keras picks its backend once per
process) and each batch token budget (`deep.inference.batch_tokens`), on the
VAERS narratives (or the bundled samples in `--small` mode):

* **network alone**: the model on rule analyses made beforehand (feature
  encoding included), tokens/s and reports/s;
* **hybrid**: rules + network + combiner, what a Spark task does per report;
* **breakdown** of the hybrid's time: rules, encoding (features and padding),
  host-to-device transfer, the network itself (compiled function, including
  the copy back of the logits), the rest (softmax, stitching windows) and
  the combiner; plus padding overhead and how many distinct padded shapes
  (compilations) the run needed.

Medians over `--repeats` timed passes after one warm-up pass (which compiles
the shapes). On CPU the child is pinned to one core by default, so figures are
per core as in `bench/throughput.py`; `--cores all` lifts that. The device, the
backend and the library versions are printed with the figures.

    .venv/bin/python bench/inference.py                      # both backends, VAERS, 3 budgets
    .venv/bin/python bench/inference.py --small              # CI's quick run on the bundled samples
    .venv/bin/python bench/inference.py --backends jax --device gpu --budgets 8192,32768,131072
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import REPO, VAERS

SAMPLES = REPO / "data" / "samples" / "narratives.jsonl"


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _versions(backend: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    wanted = ("keras", "jax", "jaxlib") if backend == "jax" else ("keras", "tensorflow-cpu", "tensorflow")
    for pkg in wanted:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def _device_name(backend: str, device: str) -> str:
    if backend == "jax" and device == "gpu":
        import jax

        return str(jax.devices()[0].device_kind)
    return _cpu_name()


def child(args: argparse.Namespace) -> None:
    """One backend: prints one JSON line per budget."""
    if args.cores == "1":
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
        os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    from deid_core.config import load_config, with_inference
    from deid_core.corpus.jsonl import read_jsonl
    from deid_core.detectors import Method, build_detector
    from deid_core.dictionaries.artifact import DictionaryArtifact

    cfg = with_inference(load_config(), backend=args.backend, device=args.device)
    texts = [d.text for d in read_jsonl(Path(args.corpus))][: args.docs or None]
    det = build_detector(Method.hybrid, cfg, DictionaryArtifact.load(cfg.dictionaries.artifact))
    inner = det.inner
    model, rules, combiner = inner.model, inner.rules, inner.combiner
    choice = model.backend
    analyses = [rules.analyse(t) for t in texts]
    n_tokens = sum(len(a.tokens) for a in analyses)
    for budget in args.budgets:
        model.batch_tokens = budget
        model.profile = True
        model.predict(analyses)  # warm-up: compiles this budget's shapes
        net_times, hyb_times, parts = [], [], []
        for _ in range(args.repeats):
            model.times.reset()
            t0 = time.perf_counter()
            model.predict(analyses)
            net_times.append(time.perf_counter() - t0)
            model.times.reset()
            t0 = time.perf_counter()
            fresh = [rules.analyse(t) for t in texts]
            t1 = time.perf_counter()
            probs = model.predict(fresh)
            t2 = time.perf_counter()
            for a, p in zip(fresh, probs, strict=True):
                combiner.combine(a, p)
            t3 = time.perf_counter()
            hyb_times.append(t3 - t0)
            parts.append({"rules_s": t1 - t0, "model_s": t2 - t1, "combiner_s": t3 - t2, **model.times.as_dict()})
        net, hyb = statistics.median(net_times), statistics.median(hyb_times)
        mid = parts[hyb_times.index(sorted(hyb_times)[len(hyb_times) // 2])]
        print(json.dumps({
            "backend": choice.backend if choice else "keras-default", "device": choice.device if choice else "cpu",
            "reason": choice.reason if choice else "", "device_name": _device_name(args.backend, choice.device if choice else "cpu"),
            "versions": _versions(args.backend), "cores": args.cores, "budget": budget, "docs": len(texts),
            "tokens": n_tokens, "network_s": net, "hybrid_s": hyb, "breakdown": mid,
        }), flush=True)


def _table(rows: list[dict]) -> None:
    head = (f"{'backend':10s} {'device':6s} {'budget':>7s} {'net tok/s':>11s} {'net rep/s':>10s} "
            f"{'hyb tok/s':>10s} {'hyb rep/s':>10s} {'hyb/net':>7s}  breakdown of the hybrid (s): rules encode "
            f"pack transfer network post combiner | padded/real shapes")
    print(head)
    for r in rows:
        b = r["breakdown"]
        print(f"{r['backend']:10s} {r['device']:6s} {r['budget']:7d} {r['tokens'] / r['network_s']:11.0f} "
              f"{r['docs'] / r['network_s']:10.1f} {r['tokens'] / r['hybrid_s']:10.0f} {r['docs'] / r['hybrid_s']:10.1f} "
              f"{r['hybrid_s'] / r['network_s']:7.2f}  {b['rules_s']:.2f} {b['encode_s']:.2f} {b['pack_s']:.2f} "
              f"{b['transfer_s']:.3f} {b['network_s']:.2f} {b['post_s']:.2f} {b['combiner_s']:.2f} | "
              f"{b['padded_tokens'] / max(1, b['tokens']):.2f} {b['shapes']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="quick run (CI): bundled samples, 40 reports, one repeat")
    ap.add_argument("--backends", default="tensorflow,jax", help="comma-separated Keras backends to measure")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--budgets", default=None, help="batch token budgets, comma-separated (default 2048,8192,32768)")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--docs", type=int, default=None, help="first N reports of the corpus (default: all)")
    ap.add_argument("--corpus", type=Path, default=None, help="JSONL with a 'text' field (default: VAERS narratives)")
    ap.add_argument("--cores", default="1", choices=["1", "all"], help="CPU cores the child may use")
    ap.add_argument("--json", action="store_true", help="print the JSON rows only")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.small:
        args.corpus = args.corpus or (SAMPLES if SAMPLES.exists() else VAERS)
        args.docs = args.docs or 40
        args.repeats = args.repeats or 1
        args.budgets = args.budgets or "2048,8192"
    args.corpus = args.corpus or VAERS
    args.repeats = args.repeats or 3
    args.budgets = [int(b) for b in (args.budgets or "2048,8192,32768").split(",")]
    if not Path(args.corpus).exists():
        sys.exit(f"skipped: {args.corpus} is absent (make samples, or ../shared/data for the VAERS narratives)")
    if args.child:
        child(args)
        return
    rows: list[dict] = []
    for backend in args.backends.split(","):
        cmd = [sys.executable, __file__, "--child", "--backend", backend, "--device", args.device,
               "--budgets", ",".join(map(str, args.budgets)), "--repeats", str(args.repeats),
               "--corpus", str(args.corpus), "--cores", args.cores] + (["--docs", str(args.docs)] if args.docs else [])
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
            print(f"{backend}: failed ({tail[0][:200]})", file=sys.stderr)
            sys.exit(1)
        rows += [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return
    seen = set()
    for r in rows:
        key = (r["backend"], r["device"])
        if key not in seen:
            seen.add(key)
            v = ", ".join(f"{k} {x}" for k, x in r["versions"].items())
            print(f"{r['backend']} on {r['device']} ({r['device_name']}; {r['cores']} core(s)): {r['reason']}; {v}")
    print(f"{rows[0]['docs']} reports, {rows[0]['tokens']} tokens, median of {args.repeats} pass(es) after a warm-up")
    _table(rows)


if __name__ == "__main__":
    main()
