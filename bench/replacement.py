"""Replacement step (issue 4): speed per policy, and how dates fare.

Detection runs once (hybrid unless --method says otherwise); the replacement
of the masked entities is then timed alone, per policy, repeated (medians;
this machine is noisy). Also printed: how many DATE entities were shifted in
their own format and how many fell back to the "[DATE]" tag (unparsable),
per corpus, so that the date parser's coverage is measured, not assumed.

    .venv/bin/python bench/replacement.py [--repeats 5] [--method hybrid]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from _common import PHYSIONET, VAERS, require

from deid_core.config import load_config
from deid_core.corpus.jsonl import read_jsonl
from deid_core.detectors import Method, build_detector
from deid_core.replace.engine import Replacer
from deid_core.replace.keys import SecretKey
from deid_core.replace.policy import load_policy

#: A benchmark-only key: outputs are not kept.
BENCH_KEY = SecretKey(b"bench-only-key-not-secret-0123456789")
POLICIES = ("tags", "hipaa_safe_harbor", "i2b2", "strict")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--method", type=Method, default=Method.hybrid)
    args = ap.parse_args()
    cfg = load_config()
    corpora = {"vaers": require(VAERS), "physionet test": require(PHYSIONET / "test.jsonl")}
    for name, path in corpora.items():
        docs = read_jsonl(path)
        texts = [d.text for d in docs]
        for policy_name in POLICIES:
            policy = load_policy(policy_name, cfg.replacement.policies_dir)
            det = build_detector(args.method, cfg, force_mask=policy.force_mask)
            t0 = time.perf_counter()
            masked = det.detect(texts)
            t_detect = time.perf_counter() - t0
            rep = Replacer(policy, cfg, BENCH_KEY if policy.needs_key else None)
            rep.replace(texts[0], masked[0], "warm-up")  # surrogate pools load once per process
            walls = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                results = [rep.replace(t, m, d.doc_id) for t, m, d in zip(texts, masked, docs, strict=True)]
                walls.append(time.perf_counter() - t0)
            w = statistics.median(walls)
            n_ent = sum(len(r.replacements) + sum(r.kept.values()) for r in results)
            dates = [x for r in results for x in r.replacements if x.label == "DATE"]
            tagged = sum(x.replacement == "[DATE]" for x in dates)
            kept = Counter()
            for r in results:
                kept.update(r.kept)
            failures = sum(r.failures for r in results)
            print(
                f"{name:15s} {policy_name:18s} {len(docs) / w:8.0f} docs/s {n_ent / w:9.0f} entities/s "
                f"(replacement {w:5.2f}s = {100 * w / (w + t_detect):4.1f}% of detect+replace)  "
                f"dates shifted {len(dates) - tagged}/{len(dates)}  kept {dict(kept)}  failures {failures}",
                flush=True,
            )


if __name__ == "__main__":
    main()
