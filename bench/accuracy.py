"""Accuracy of each available method on PhysioNet dev and test.

Prints, per method and split: token masking recall, precision (also under the
i2b2 reading, where masked ages and years count as PHI), F1, HIPAA recall,
recall per gold label, entity-level exact/overlap recall and precision, and
retention of non-PHI numbers and drug names. Numbers only, never text.

    .venv/bin/python bench/accuracy.py [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from _common import PHYSIONET, require

from deid_core.config import load_config
from deid_core.corpus.jsonl import read_jsonl
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.dictionaries.flags import Lex
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts, Span, evaluate_document
from deid_core.methods import Method, build_detector


def run(method: Method, split: str) -> tuple[Counts, float]:
    cfg = load_config()
    art = DictionaryArtifact.load(cfg.dictionaries.artifact)
    hipaa = HipaaMap.load(cfg.evaluation.label_map, cfg.evaluation.hipaa_age_threshold)
    det = build_detector(method, cfg, art)
    docs = read_jsonl(require(PHYSIONET / f"{split}.jsonl"))
    t0 = time.perf_counter()
    preds = det.detect([d.text for d in docs])
    elapsed = time.perf_counter() - t0
    total = Counts()
    for doc, masked in zip(docs, preds, strict=True):
        total = total.merge(evaluate_document(
            doc.text, [Span(s.start, s.end, s.label) for s in doc.spans],
            [Span(m.start, m.end, m.label) for m in masked], hipaa,
            is_drug=lambda w: bool(art.flags(w) & Lex.DRUG_NAME),
        ))
    return total, elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = []
    for method in Method:
        for split in ("dev", "test"):
            c, secs = run(method, split)
            d = c.as_dict()
            d.update(method=method.value, split=split, detect_seconds=round(secs, 2))
            results.append(d)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    head = (f"{'method':8s} {'split':5s} {'gold':>5s} {'recall':>7s} {'prec.':>7s} {'prec.i2b2':>9s} {'F1':>7s} "
            f"{'HIPAA-R':>7s} {'ent.ex.R':>8s} {'ent.ov.R':>8s} {'ent.ex.P':>8s} {'num.ret':>7s} {'drug.ret':>8s}")
    print(head)
    for r in results:
        t, e, ret = r["token"], r["entity"], r["retention"]
        print(f"{r['method']:8s} {r['split']:5s} {t['gold']:5d} {t['recall']:7.4f} {t['precision']:7.4f} "
              f"{t['precision_i2b2_reading']:9.4f} {t['f1']:7.4f} {t['hipaa_recall']:7.4f} "
              f"{e['exact_recall']:8.4f} {e['overlap_recall']:8.4f} {e['exact_precision']:8.4f} "
              f"{ret['numeric_retention']:7.4f} {ret['drug_retention']:8.4f}")
    print("\nrecall per gold label (caught/gold)")
    for r in results:
        per = ", ".join(f"{k} {v['caught']}/{v['gold']} ({v['recall']:.3f})" for k, v in r["token"]["per_label"].items())
        print(f"{r['method']:8s} {r['split']:5s} {per}")


if __name__ == "__main__":
    main()
