"""Select, show, check and convert the hand annotations of the VAERS PV set (stdlib only).

The evaluation set is stored as stand-off annotations (offsets and a hash of
the text, never the text) over the read-only shared VAERS files. This script
is how the set was made, so that it can be re-made or extended:

1. ``select``  draws the documents (fixed seed, see SEED and ``select()``)
   and writes the selection list, with its dev/test split, to a work
   folder outside the repository (default /tmp/annot/selection.json).
2. ``show``    prints selected documents with their keys, for reading on a
   terminal. Its output holds narrative text: never redirect it into the
   repository.
3. The annotator writes, per document key, lists of quoted substrings with
   a label (and an occurrence index when the quote occurs more than once)
   into JSON files in the work folder::

       {"VAERS-916741": {"phi":  [["dec 22", "DATE"], ["Dec 25", "DATE"]],
                         "keep": [["myalgias", "REACTION"], ["60mg HS", "DOSE"],
                                  ["swelling", "REACTION", 1], ["fever", "REACTION", "*"]]}}

   The occurrence index is 0-based and counts only matches at word
   boundaries (a quote that starts or ends with a letter or digit is never
   matched inside a longer word); "*" takes every such occurrence. A quote
   may carry context around the span in double brackets:
   ``"diagnosed with [[COVID-19]]"`` marks only ``COVID-19``, found where
   the whole quote occurs. ``"#comment"`` keys are ignored. A document
   listed with empty lists is annotated as having nothing to mark.

   The same can be written more briefly in a ``.txt`` file, one line per
   label, quotes separated by `` | ``, an occurrence as a ``#N`` or ``#*``
   suffix::

       @ VAERS-916741
       P DATE dec 22 | Dec 25
       K REACTION myalgias | swelling #1 | fever #*
       K DOSE 60mg HS

   (A quote that itself ends in `` #1`` needs an explicit index:
   ``Dose #1 #0``.)
4. ``lint``    prints, per annotated document, date-, phone- and name-like
   strings and number-with-unit strings that no annotation covers, so the
   annotator can look at them again (its output holds text, too).
5. ``convert`` resolves every quote to offsets, checks them (quote found,
   occurrence exists, labels known, no two PHI spans overlap, no keep span
   overlaps another keep span or a PHI span, every selected document
   annotated) and writes ``dev.jsonl`` and ``test.jsonl`` next to this
   script: one line per document with ``doc_id``, ``source``, ``field``,
   ``text_sha256``, ``spans`` and ``keep``.

    python bench/annotations/vaers_pv/annotate_tool.py --shared ../shared/data select
    python bench/annotations/vaers_pv/annotate_tool.py show --split dev --start 0 --count 10
    python bench/annotations/vaers_pv/annotate_tool.py show --key VAERS-916741 --key VAERS-916710#lab_data
    python bench/annotations/vaers_pv/annotate_tool.py lint /tmp/annot/*.txt
    python bench/annotations/vaers_pv/annotate_tool.py convert /tmp/annot/*.txt
    python bench/annotations/vaers_pv/annotate_tool.py stats

The working files hold quotes of the texts, so they stay outside the
repository (the set was made from /tmp/annot/*.txt, not kept); the
stand-off files are the result.

The selection heuristic (CANDIDATE) and the lint patterns are written here,
independently of the project's de-identifiers, which were never run on the
selected narratives while annotating.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DEFAULT_SHARED = REPO.parent / "shared" / "data"
DEFAULT_WORK = Path("/tmp/annot")

#: Seed of the selection and of the dev/test split.
SEED = 20210131
#: Narratives longer than this are left out of the draw (about 5 % of the
#: 2021 file), so that every selected narrative could be read in full.
MAX_CHARS = 3000
#: (source file, field, how many documents, share drawn from matches of the
#: pattern, pattern): CANDIDATE (any candidate PHI element, mostly dates) or
#: NAME_PLACE (a titled name, a named facility, a pharmacy chain, a phone
#: number; rare in VAERS, so drawn on purpose for the NAME/LOCATION rows).
PLAN: tuple[tuple[str, str, int, float, str], ...] = (
    ("vaers_narratives.jsonl", "text", 72, 2 / 3, "CANDIDATE"),
    ("vaers_2021_jan.jsonl", "text", 68, 2 / 3, "CANDIDATE"),
    ("vaers_2021_jan.jsonl", "lab_data", 20, 1 / 2, "CANDIDATE"),
    ("vaers_2021_jan.jsonl", "other_meds", 12, 0.0, "CANDIDATE"),
    ("vaers_narratives.jsonl", "text", 4, 1.0, "NAME_PLACE"),
    ("vaers_2021_jan.jsonl", "text", 12, 1.0, "NAME_PLACE"),
)
#: Documents of the dev split (whole reports are assigned until it is reached).
DEV_DOCS = 60
#: Fields shorter than this (placeholders such as "None", "NKDA") are not drawn.
MIN_FIELD_CHARS = 12

PHI_LABELS = ("NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER")
KEEP_LABELS = ("DRUG", "DOSE", "LAB", "DURATION", "REACTION", "LOT")

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?"
#: A document "has a candidate PHI element" when this matches: a numeric or
#: written date, a weekday, a "Dr." name, a facility word or a phone number.
CANDIDATE = re.compile(
    r"\b\d{1,2}[/-]\d{1,2}(?:[/-]\d{2,4})?\b"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b"
    r"|\b\d{1,2}(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\d{2,4}\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\bDr\.?\s+[A-Z]"
    r"|\b(?:hospital|clinic|pharmacy|medical center|urgent care)\b"
    r"|\(?\d{3}\)?[ -.]\d{3}[ -.]\d{4}",
    re.IGNORECASE,
)
NAME_PLACE = re.compile(
    r"\b(?:Dr|Mr|Mrs|Ms)\.?\s+(?!The\b|Was\b|And\b|Had\b|Office\b)[A-Z][a-z]+"
    r"|\b[A-Z][a-z]+\s+(?:Hospital|Medical Center|Clinic|Pharmacy|County|Health)\b"
    r"|\b(?:CVS|Walgreens|Walmart|Kroger|Rite Aid|Publix|Kaiser)\b"
    r"|\(?\d{3}\)?[ -.]\d{3}[ -.]\d{4}"
)
PATTERNS = {"CANDIDATE": CANDIDATE, "NAME_PLACE": NAME_PLACE}
#: What `lint` shows when no PHI span covers it.
LINT_PHI = re.compile(
    CANDIDATE.pattern
    + rf"|\b{_WEEKDAY}\b|\b{_MONTH}(?=\s|$|,)|\b\d{{1,2}}/\d{{2,4}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    r"|\b(?:christmas|thanksgiving|easter|new year'?s?|memorial day|labor day)\b"
    r"|\b(?:mr|mrs|ms|dr|nurse|rn|np|pa)\.?\s+[A-Z][a-z]+"
    r"|\b[A-Z][a-z]+\s+(?:hospital|clinic|pharmacy|medical|health|county|street|st\.|ave|road|rd\.)"
    r"|@|www\.|https?:|\b\d{5}(?:-\d{4})?\b|\b\d{6,}\b|\b(?:9\d|1[01]\d)[- ]?(?:y/?o|year)",
    re.IGNORECASE,
)
#: What `lint` shows when no keep span covers it: a number and a unit.
LINT_KEEP = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:mg|mcg|g/dl|mmol/l|ml|%|units|iu|mg/dl|g|kg|mm ?hg|bpm|x10\^?9/l|k/ul|u/l"
    r"|min(?:ute)?s?|h(?:ou)?rs?|days?|weeks?|months?|f|c)(?![a-z])",
    re.IGNORECASE,
)


class AnnotationError(ValueError):
    """A quote that cannot be resolved or a span that breaks a rule; names the document key."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def doc_key(doc_id: str, field: str) -> str:
    return doc_id if field == "text" else f"{doc_id}#{field}"


def load_source(shared: Path, source: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with (shared / "vaers" / source).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                out[rec["doc_id"]] = rec
    return out


def field_text(rec: dict[str, Any], field: str) -> str | None:
    if field == "text":
        return rec.get("text")
    return (rec.get("fields") or {}).get(field)


# ---- selection ---------------------------------------------------------------


def select(shared: Path) -> list[dict[str, str]]:
    """The selected documents with their split, in a fixed order.

    Per PLAN row, in order: the eligible documents (text within MAX_CHARS;
    fields at least MIN_FIELD_CHARS long), in doc_id order, are split into
    matches of the row's pattern and the rest; each group is shuffled with
    its own `random.Random(f"{SEED}/{source}/{field}/...")` (NAME_PLACE rows
    add "/NAME_PLACE"), reports drawn by an earlier row are dropped, and
    the first documents of each group are taken in the planned proportion.
    Then the distinct reports (doc_id) are shuffled with `Random(f"{SEED}/split")`
    and whole reports go to dev until it holds DEV_DOCS documents; the rest
    is test. A report's narrative and its fields are thus in the same split.
    """
    chosen: list[dict[str, str]] = []
    sources = {src: load_source(shared, src) for src, *_ in PLAN}
    for source, field, n, cand_share, pattern in PLAN:
        recs = sources[source]
        taken = {c["doc_id"] for c in chosen}
        eligible = []
        for doc_id in sorted(recs):
            text = field_text(recs[doc_id], field)
            if not text:
                continue
            if field == "text" and len(text) > MAX_CHARS:
                continue
            if field != "text" and len(text.strip()) < MIN_FIELD_CHARS:
                continue
            eligible.append(doc_id)
        cand = [d for d in eligible if PATTERNS[pattern].search(field_text(recs[d], field) or "")]
        cand_set = set(cand)
        rest = [d for d in eligible if d not in cand_set]
        tag = "" if pattern == "CANDIDATE" else f"/{pattern}"
        random.Random(f"{SEED}/{source}/{field}/candidates{tag}").shuffle(cand)
        random.Random(f"{SEED}/{source}/{field}/rest{tag}").shuffle(rest)
        cand = [d for d in cand if d not in taken]
        rest = [d for d in rest if d not in taken]
        k = round(n * cand_share)
        picked = cand[:k] + rest[: n - k]
        if len(picked) < n:  # a group too small: fill from the other
            picked += [d for d in cand[k:] + rest[n - k:]][: n - len(picked)]
        chosen.extend({"doc_id": d, "source": source, "field": field} for d in sorted(picked))
    reports = sorted({c["doc_id"] for c in chosen})
    random.Random(f"{SEED}/split").shuffle(reports)
    per_report = Counter(c["doc_id"] for c in chosen)
    dev: set[str] = set()
    n_dev = 0
    for r in reports:
        if n_dev >= DEV_DOCS:
            break
        dev.add(r)
        n_dev += per_report[r]
    for c in chosen:
        c["split"] = "dev" if c["doc_id"] in dev else "test"
    return chosen


# ---- resolving quotes ----------------------------------------------------------


def _boundary_ok(text: str, start: int, end: int) -> bool:
    quote = text[start:end]
    if quote[0].isalnum() and start > 0 and text[start - 1].isalnum():
        return False
    if quote[-1].isalnum() and end < len(text) and text[end].isalnum():
        return False
    return True


def occurrences(text: str, quote: str) -> list[int]:
    """Start offsets of `quote` in `text` at word boundaries, in order."""
    out, i = [], text.find(quote)
    while i >= 0:
        if _boundary_ok(text, i, i + len(quote)):
            out.append(i)
        i = text.find(quote, i + 1)
    return out


def _split_context(quote: str) -> tuple[str, int, int]:
    """`a [[b]] c` -> ("a b c", offset of b, length of b); a plain quote is all span."""
    if "[[" not in quote:
        return quote, 0, len(quote)
    pre, _, rest = quote.partition("[[")
    inner, sep, post = rest.partition("]]")
    if not sep or not inner or "[[" in post:
        raise ValueError("malformed [[...]] in quote")
    return pre + inner + post, len(pre), len(inner)


def resolve(key: str, text: str, items: list[Any], labels: tuple[str, ...], what: str) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for j, item in enumerate(items):
        if not isinstance(item, list) or len(item) not in (2, 3):
            raise AnnotationError(f"{key}: {what} item {j} must be [quote, label] or [quote, label, occurrence]")
        quote, label = item[0], item[1]
        occ = item[2] if len(item) == 3 else 0
        if label not in labels:
            raise AnnotationError(f"{key}: {what} item {j} has label {label!r} outside {labels}")
        if not isinstance(quote, str) or not quote or quote != quote.strip():
            raise AnnotationError(f"{key}: {what} item {j}: empty quote or one with outer whitespace")
        try:
            whole, off, length = _split_context(quote)
        except ValueError as exc:
            raise AnnotationError(f"{key}: {what} item {j}: {exc}: {quote!r}") from None
        starts = [s for s in occurrences(text, whole)
                  if _boundary_ok(text, s + off, s + off + length) and text[s + off:s + off + length].strip()]
        if not starts:
            raise AnnotationError(f"{key}: {what} item {j} ({label}): quote {quote!r} not found at word boundaries")
        if occ == "*":
            picked = starts
        elif isinstance(occ, int) and 0 <= occ < len(starts):
            picked = [starts[occ]]
        else:
            raise AnnotationError(f"{key}: {what} item {j}: occurrence {occ!r} of {quote!r}; found {len(starts)}")
        spans.extend((s + off, s + off + length, label) for s in picked)
    spans.sort()
    dupes = [s for s, n in Counter(spans).items() if n > 1]
    if dupes:
        raise AnnotationError(f"{key}: {what} span annotated twice: {dupes[0]} {text[dupes[0][0]:dupes[0][1]]!r}")
    return spans


def _overlap(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def check_spans(key: str, text: str, phi: list[tuple[int, int, str]], keep: list[tuple[int, int, str]]) -> None:
    for group, what in ((phi, "PHI"), (keep, "keep")):
        for a, b in zip(group, group[1:]):
            if _overlap(a, b):
                raise AnnotationError(f"{key}: {what} spans overlap: {text[a[0]:a[1]]!r} {text[b[0]:b[1]]!r}")
    for k in keep:
        for p in phi:
            if _overlap(k, p):
                raise AnnotationError(f"{key}: keep span {text[k[0]:k[1]]!r} overlaps PHI {text[p[0]:p[1]]!r}")


_OCC = re.compile(r"\s#(\d+|\*)$")


def parse_txt(raw: str, name: str) -> dict[str, dict[str, Any]]:
    """The brief `.txt` form (see the module docstring) as the JSON form."""
    out: dict[str, dict[str, Any]] = {}
    key = None
    for n, line in enumerate(raw.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            key = line[1:].strip()
            if key in out:
                raise AnnotationError(f"{name}:{n}: {key} twice")
            out[key] = {"phi": [], "keep": []}
            continue
        kind, _, rest = line.partition(" ")
        label, _, quotes = rest.strip().partition(" ")
        if key is None or kind not in ("P", "K") or not quotes.strip():
            raise AnnotationError(f"{name}:{n}: expected '@ KEY', 'P LABEL quotes' or 'K LABEL quotes'")
        for q in quotes.split(" | "):
            q = q.strip()
            m = _OCC.search(q)
            occ: int | str = 0
            if m:
                occ = "*" if m.group(1) == "*" else int(m.group(1))
                q = q[: m.start()].rstrip()
            out[key]["phi" if kind == "P" else "keep"].append([q, label, occ])
    return out


def load_annotations(paths: list[Path]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for p in paths:
        raw = p.read_text(encoding="utf-8")
        data = parse_txt(raw, p.name) if p.suffix == ".txt" else json.loads(raw)
        for key, ann in data.items():
            if key.startswith("#"):
                continue
            if key in merged:
                raise AnnotationError(f"{key}: annotated in two files (second: {p.name})")
            merged[key] = ann
    return merged


def selected_texts(selection: list[dict[str, str]], shared: Path) -> dict[str, tuple[dict[str, str], str]]:
    sources = {s["source"] for s in selection}
    loaded = {src: load_source(shared, src) for src in sources}
    out = {}
    for s in selection:
        text = field_text(loaded[s["source"]][s["doc_id"]], s["field"])
        assert text is not None
        out[doc_key(s["doc_id"], s["field"])] = (s, text)
    return out


def resolve_all(selection: list[dict[str, str]], shared: Path, ann_paths: list[Path],
                require_all: bool) -> dict[str, dict[str, Any]]:
    anns = load_annotations(ann_paths)
    texts = selected_texts(selection, shared)
    unknown = sorted(set(anns) - set(texts))
    if unknown:
        raise AnnotationError(f"annotated but not selected: {unknown}")
    missing = [k for k in texts if k not in anns]
    if require_all and missing:
        raise AnnotationError(f"{len(missing)} selected documents not annotated, e.g. {missing[:5]}")
    out: dict[str, dict[str, Any]] = {}
    for key, (sel, text) in texts.items():
        if key not in anns:
            continue
        ann = anns[key]
        phi = resolve(key, text, ann.get("phi", []), PHI_LABELS, "phi")
        keep = resolve(key, text, ann.get("keep", []), KEEP_LABELS, "keep")
        check_spans(key, text, phi, keep)
        out[key] = {"sel": sel, "text": text, "phi": phi, "keep": keep}
    return out


# ---- commands ------------------------------------------------------------------


def _selection(args: argparse.Namespace) -> list[dict[str, str]]:
    return json.loads(Path(args.selection).read_text(encoding="utf-8"))


def cmd_select(args: argparse.Namespace) -> None:
    sel = select(Path(args.shared))
    Path(args.selection).parent.mkdir(parents=True, exist_ok=True)
    Path(args.selection).write_text(json.dumps(sel, indent=1) + "\n", encoding="utf-8")
    c = Counter((s["split"], s["source"], s["field"]) for s in sel)
    for k in sorted(c):
        print(*k, c[k])
    print("documents", len(sel), "reports", len({s["doc_id"] for s in sel}))


def cmd_show(args: argparse.Namespace) -> None:
    sel = [s for s in _selection(args) if args.split in (None, s["split"])
           and (not args.key or doc_key(s["doc_id"], s["field"]) in args.key)]
    texts = selected_texts(sel[args.start: args.start + args.count], Path(args.shared))
    for i, (key, (s, text)) in enumerate(texts.items(), start=args.start):
        print(f"=== [{i}] {key}  ({s['split']}, {s['source']}, {s['field']}, {len(text)} chars)")
        print(text)
        print()


def cmd_lint(args: argparse.Namespace) -> None:
    res = resolve_all(_selection(args), Path(args.shared), [Path(p) for p in args.annotations], require_all=False)
    for key, r in res.items():
        text, phi, keep = r["text"], r["phi"], r["keep"]
        notes = []
        for m in LINT_PHI.finditer(text):
            if not any(p[0] < m.end() and m.start() < p[1] for p in phi + keep):
                notes.append(f"  phi?  {m.group()!r}  ...{text[max(0, m.start() - 25):m.end() + 25]!r}")
        for m in LINT_KEEP.finditer(text):
            if not any(k[0] < m.end() and m.start() < k[1] for k in keep + phi):
                notes.append(f"  keep? {m.group()!r}  ...{text[max(0, m.start() - 25):m.end() + 25]!r}")
        if notes:
            print(key)
            print("\n".join(notes))


def cmd_convert(args: argparse.Namespace) -> None:
    sel = _selection(args)
    res = resolve_all(sel, Path(args.shared), [Path(p) for p in args.annotations], require_all=not args.partial)
    out_dir = Path(args.out_dir)
    lines: dict[str, list[str]] = {"dev": [], "test": []}
    for key, r in res.items():
        s = r["sel"]
        rec = {
            "doc_id": s["doc_id"],
            "source": s["source"],
            "field": s["field"],
            "text_sha256": sha256(r["text"]),
            "spans": [{"start": a, "end": b, "label": lab} for a, b, lab in r["phi"]],
            "keep": [{"start": a, "end": b, "label": lab} for a, b, lab in r["keep"]],
        }
        lines[s["split"]].append(json.dumps(rec, ensure_ascii=False))
    for split, ls in lines.items():
        (out_dir / f"{split}.jsonl").write_text("".join(x + "\n" for x in ls), encoding="utf-8")
        print(f"{split}: {len(ls)} documents -> {out_dir / f'{split}.jsonl'}")


def cmd_stats(args: argparse.Namespace) -> None:
    """Counts per split from the stand-off files (no text needed)."""
    for split in ("dev", "test"):
        path = Path(args.out_dir) / f"{split}.jsonl"
        recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        phi = Counter(s["label"] for r in recs for s in r["spans"])
        keep = Counter(s["label"] for r in recs for s in r["keep"])
        src = Counter((r["source"], r["field"]) for r in recs)
        print(f"{split}: documents {len(recs)}, reports {len({r['doc_id'] for r in recs})}, "
              f"with PHI {sum(bool(r['spans']) for r in recs)}")
        print("  sources", dict(sorted(src.items())))
        print("  PHI ", sum(phi.values()), dict(sorted(phi.items())))
        print("  keep", sum(keep.values()), dict(sorted(keep.items())))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=str(DEFAULT_SHARED), help="shared data folder (holds vaers/)")
    ap.add_argument("--selection", default=str(DEFAULT_WORK / "selection.json"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("select").set_defaults(fn=cmd_select)
    p = sub.add_parser("show")
    p.add_argument("--split", choices=("dev", "test"))
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--key", action="append", help="only this document key (repeatable)")
    p.set_defaults(fn=cmd_show)
    p = sub.add_parser("lint")
    p.add_argument("annotations", nargs="+")
    p.set_defaults(fn=cmd_lint)
    p = sub.add_parser("convert")
    p.add_argument("annotations", nargs="+")
    p.add_argument("--out-dir", default=str(HERE))
    p.add_argument("--partial", action="store_true", help="allow selected documents without annotations")
    p.set_defaults(fn=cmd_convert)
    p = sub.add_parser("stats")
    p.add_argument("--out-dir", default=str(HERE))
    p.set_defaults(fn=cmd_stats)
    args = ap.parse_args(argv)
    try:
        args.fn(args)
    except AnnotationError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
