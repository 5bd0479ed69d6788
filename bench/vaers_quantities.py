"""How many dose and lab quantities of real VAERS reports stay visible, per method.

A safety reviewer needs "40 mg", "13.2 g/dL", "WBC 12.5 x10^9/L" intact.
The shared VAERS reports are unannotated, so this counts the quantities an
independent pattern finds (a number and a common dose or lab unit, written
here and deliberately simpler than `deid_core/rules/clinical.py`) in the
narratives and in the lab data, other medications and history fields, and
the share that no masked token touches. Numbers only, never text.

    .venv/bin/python bench/vaers_quantities.py [--method hybrid --method rules]
"""

from __future__ import annotations

import argparse
import json
import re

from _common import SHARED, require

from deid_core.config import load_config
from deid_core.detectors import Method, build_detector
from deid_core.dictionaries.artifact import DictionaryArtifact

FILES = ("vaers_2021_jan.jsonl", "vaers_narratives.jsonl")
FIELDS = ("lab_data", "other_meds", "history")
#: a number and a unit a dose or a lab value is given in
QUANTITY = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:mg|mcg|g/dl|mmol/l|ml|%|units|iu|mg/dl|g|kg|mm ?hg|bpm|x10\^?9/l|k/ul|u/l)(?![a-z])",
    re.IGNORECASE,
)


def texts() -> list[str]:
    out: list[str] = []
    for name in FILES:
        with require(SHARED / "vaers" / name).open(encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)
                out.append(record["text"])
                fields = record.get("fields") or {}
                out.extend(fields[k] for k in FIELDS if fields.get(k))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--method", action="append", choices=[m.value for m in Method])
    args = ap.parse_args()
    cfg = load_config()
    artifact = DictionaryArtifact.load(cfg.dictionaries.artifact)
    corpus = texts()
    print(f"VAERS: {len(corpus)} texts (narratives and {', '.join(FIELDS)})")
    for method in args.method or ["hybrid", "rules"]:
        detector = build_detector(Method(method), cfg, artifact)
        kept = total = 0
        for text, masked in zip(corpus, detector.detect(corpus), strict=True):
            for m in QUANTITY.finditer(text):
                total += 1
                kept += not any(x.start < m.end() and m.start() < x.end for x in masked)
        print(f"{method:8s} quantities {total:6d}  fully visible {kept / max(1, total):.4f}")


if __name__ == "__main__":
    main()
