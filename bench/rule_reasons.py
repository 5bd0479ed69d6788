"""Why the rules mask tokens, and how often each reason is right.

For every masking reason (pattern, context, unsafe list, digit, single letter,
unknown word) prints how many tokens it masked on PhysioNet train and the
share of those that overlap gold PHI. The per-kind shares are the scores the
rules attach to masked tokens (`rules.scores` in conf/deid.yaml). Counts only.

    .venv/bin/python bench/rule_reasons.py [--split train]
"""

from __future__ import annotations

import argparse
from collections import Counter

from _common import PHYSIONET, require

from deid_core.config import load_config
from deid_core.corpus.jsonl import read_jsonl
from deid_core.rules.deidentifier import RuleDeidentifier


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="train", choices=["train", "dev"])
    args = ap.parse_args()
    rules = RuleDeidentifier.from_config(load_config())
    masked: Counter[str] = Counter()
    phi: Counter[str] = Counter()
    for doc in read_jsonl(require(PHYSIONET / f"{args.split}.jsonl")):
        a = rules.analyse(doc.text)
        gold = [(s.start, s.end) for s in doc.spans]
        for i, tok in enumerate(a.tokens):
            if not a.unsafe[i]:
                continue
            hit = any(s < tok.end and tok.start < e for s, e in gold)
            for key in (a.reasons[i], a.reasons[i].split(":")[0] + " (all)"):
                masked[key] += 1
                phi[key] += hit
    print(f"PhysioNet {args.split}: tokens masked per reason and share that is gold PHI")
    print(f"{'reason':28s} {'masked':>8s} {'PHI':>6s} {'share':>7s}")
    for key in sorted(masked, key=lambda k: (not k.endswith("(all)"), -masked[k])):
        print(f"{key:28s} {masked[key]:8d} {phi[key]:6d} {phi[key] / masked[key]:7.4f}")


if __name__ == "__main__":
    main()
