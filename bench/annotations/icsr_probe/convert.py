#!/usr/bin/env python3
"""Convert the inline-annotated probe narratives to JSONL.

Input : narratives.txt (next to this script, or in --dir), narratives separated by a line
        containing only `=====`.
        PHI  markup: [[LABEL|text]]  LABEL in NAME DATE AGE LOCATION PHONE EMAIL URL ID OTHER
        keep markup: {{LABEL|text}}  LABEL in DRUG DOSE LAB DURATION REACTION LOT
Output: probe.jsonl (in the same folder), one JSON object per narrative:
        {"doc_id", "text", "spans": [{start,end,label}], "keep": [{start,end,label}]}
        0-based, end-exclusive character offsets into the clean text.

Stdlib only. Fails loudly (exit 1) on any malformed markup, span touching
whitespace, overlap, or offset mismatch.

Usage: python3 convert.py [--lint] [--dir DIR --prefix PREFIX]
  --lint    also print, per narrative, numbers left outside every span (a help
            for spotting missed annotations; not an error).
  --dir     the probe folder (default: this script's); every probe set is
            converted by this one script ("--dir ../icsr_probe2 --prefix PROBE2").
  --prefix  the doc ids' prefix (default PROBE: PROBE-001, ...).
"""
import argparse
import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_DOCS = 80

PHI_LABELS = {"NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER"}
KEEP_LABELS = {"DRUG", "DOSE", "LAB", "DURATION", "REACTION", "LOT"}

# One markup token: [[LABEL|text]] or {{LABEL|text}}; text may not contain
# the closing bracket pair, a bar, or an opening pair (no nesting).
TOKEN = re.compile(r"\[\[([A-Z]+)\|([^\[\]|{}]+?)\]\]|\{\{([A-Z]+)\|([^\[\]|{}]+?)\}\}")
EDGE_PUNCT = set(",;:([{\"'")  # punctuation a span should not start/end with


class ProbeError(Exception):
    pass


def parse(raw, doc_id):
    out = []
    spans, keep = [], []
    pos = 0
    for m in TOKEN.finditer(raw):
        out.append(raw[pos:m.start()])
        start = sum(len(s) for s in out)
        if m.group(1) is not None:
            label, inner, kind = m.group(1), m.group(2), "phi"
        else:
            label, inner, kind = m.group(3), m.group(4), "keep"
        allowed = PHI_LABELS if kind == "phi" else KEEP_LABELS
        if label not in allowed:
            raise ProbeError(f"{doc_id}: unknown {kind} label {label!r} in {m.group(0)!r}")
        out.append(inner)
        rec = {"start": start, "end": start + len(inner), "label": label, "_text": inner}
        (spans if kind == "phi" else keep).append(rec)
        pos = m.end()
    out.append(raw[pos:])
    text = "".join(out)
    for bad in ("[[", "]]", "{{", "}}"):
        if bad in text:
            i = text.index(bad)
            raise ProbeError(f"{doc_id}: stray markup {bad!r} near {text[max(0, i-40):i+40]!r}")
    return text, spans, keep


def check(doc_id, text, spans, keep):
    allspans = [(s, "phi") for s in spans] + [(k, "keep") for k in keep]
    for s, kind in allspans:
        a, b = s["start"], s["end"]
        if not (0 <= a < b <= len(text)):
            raise ProbeError(f"{doc_id}: bad offsets {a}-{b}")
        seg = text[a:b]
        if seg != s["_text"]:
            raise ProbeError(f"{doc_id}: offset mismatch {seg!r} != {s['_text']!r}")
        if seg[0].isspace() or seg[-1].isspace():
            raise ProbeError(f"{doc_id}: {kind} span {s['label']} starts/ends on whitespace: {seg!r}")
        first_ok = s["label"] == "PHONE" and seg[0] == "("  # (559) 555-0148
        if (seg[0] in EDGE_PUNCT and not first_ok) or seg[-1] in EDGE_PUNCT:
            raise ProbeError(f"{doc_id}: {kind} span {s['label']} starts/ends on punctuation: {seg!r}")
    ordered = sorted(allspans, key=lambda x: (x[0]["start"], x[0]["end"]))
    for (p, pk), (q, qk) in zip(ordered, ordered[1:]):
        if q["start"] < p["end"]:
            raise ProbeError(f"{doc_id}: overlap {pk}:{p['label']} {p['_text']!r} / {qk}:{q['label']} {q['_text']!r}")


def lint(doc_id, text, spans, keep):
    covered = [False] * len(text)
    for s in spans + keep:
        for i in range(s["start"], s["end"]):
            covered[i] = True
    hits = []
    for m in re.finditer(r"\S*\d\S*", text):
        if not any(covered[m.start():m.end()]):
            hits.append(m.group(0))
    if hits:
        print(f"  {doc_id} unmarked numbers: {hits}")


def main():
    ap = argparse.ArgumentParser(description="Convert inline-annotated probe narratives to JSONL.")
    ap.add_argument("--lint", action="store_true")
    ap.add_argument("--dir", default=HERE)
    ap.add_argument("--prefix", default="PROBE")
    args = ap.parse_args()
    do_lint = args.lint
    src = os.path.join(args.dir, "narratives.txt")
    dst = os.path.join(args.dir, "probe.jsonl")
    with open(src, encoding="utf-8") as fh:
        raw_all = fh.read()
    chunks = re.split(r"^=====[ \t]*$", raw_all, flags=re.M)
    chunks = [c.strip("\n") for c in chunks]
    chunks = [c for c in chunks if c.strip()]
    records = []
    phi_counts, keep_counts = Counter(), Counter()
    try:
        for n, chunk in enumerate(chunks, 1):
            doc_id = f"{args.prefix}-{n:03d}"
            text, spans, keep = parse(chunk.strip(), doc_id)
            check(doc_id, text, spans, keep)
            if do_lint:
                lint(doc_id, text, spans, keep)
            phi_counts.update(s["label"] for s in spans)
            keep_counts.update(k["label"] for k in keep)
            strip = lambda L: [{"start": s["start"], "end": s["end"], "label": s["label"]} for s in L]
            records.append({"doc_id": doc_id, "text": text, "spans": strip(spans), "keep": strip(keep)})
        if len(records) != EXPECTED_DOCS:
            raise ProbeError(f"expected {EXPECTED_DOCS} narratives, found {len(records)}")
    except ProbeError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        sys.exit(1)
    with open(dst, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    words = [len(r["text"].split()) for r in records]
    print(f"narratives: {len(records)}  (words min {min(words)}, median {sorted(words)[len(words)//2]}, max {max(words)})")
    print(f"PHI spans: {sum(phi_counts.values())}  " + ", ".join(f"{k} {v}" for k, v in sorted(phi_counts.items())))
    print(f"keep spans: {sum(keep_counts.values())}  " + ", ".join(f"{k} {v}" for k, v in sorted(keep_counts.items())))
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
