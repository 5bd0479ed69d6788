"""How long synthetic free text should be: real length distributions, plus a tail of huge narratives.

The scale run (``bench/scale.py``) must load the pipeline the way real
reports do, and cost follows text length: template narratives are a few
hundred characters, real ones range from "Sore arm" to several pages. So
the generator draws each narrative's length from the lengths of real free
text, and adds on purpose what a sample of a few thousand real reports
does not show: a rare narrative of 100 KB to 1 MB (a pasted discharge
summary, a literature case series), which must not stall its partition.

The real lengths come from ``../shared/data``, which is absent on some
machines, so they are committed as a table of numbers
(``lengths.json`` beside this module): per *kind* of field, 1,001 empirical
quantiles (minimum, 999 inner quantiles, maximum; ``numpy``'s
``inverted_cdf``, so every value is a length that occurs) and the count. No
text is in it. :func:`derive_table` makes it again from the shared data and
``tests/synthetic/test_lengths.py`` checks that the committed table matches.

Kinds (characters, as Python counts them):

* ``narrative``: VAERS ``SYMPTOM_TEXT`` (``vaers/*.jsonl`` ``text``),
  PhysioNet deid notes (``physionet_deid/*.jsonl``) and the narratives of
  the shared E2B instances (``e2b/**/*.xml``, read with the project's parser);
* ``comment``: VAERS's other free-text fields (lab data, other medications,
  current illness, history, allergies) and the E2B reporter and sender
  comments: short free text, what the synthetic reports' comments follow;
* one kind per source field (``vaers.symptom_text``, ``vaers.lab_data``, ...,
  ``physionet.text``, ``e2b.narrative``, ``e2b.comment``, ``e2b.other``),
  kept for reference.

Provenance and licences: VAERS data are a work of the US government (public
domain); the PhysioNet deid notes are distributed under GPL-2.0 (their
``COPYING``); the E2B instances are public domain (FDA), GPL-3.0 (ICH
examples) and BSD-3-Clause (caAERS). Only lengths, counts and quantiles are
kept -- statistics about the texts, not the texts.

:class:`LengthPlan` turns the table into lengths per report, deterministically
for a seed: report ``i`` depends only on ``(seed, i)``; a share of reports
(default 1 in 20,000) gets a narrative of 100 KB - 1 MB (log-uniform), and
one report in every block of ``huge_every`` (default 10,000) consecutive
reports gets a narrative of ``huge_length`` (default 1,000,000) characters,
so any run of at least 10,000 reports holds one.

    python -m deid_core.synthetic.lengths [--shared ../shared/data] [--out PATH] [--check]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from random import Random
from typing import Any

TABLE_PATH = Path(__file__).with_name("lengths.json")
DEFAULT_SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
QUANTILES = 1000
"""Intervals of the quantile grid: 1,001 points from the minimum to the maximum."""

NARRATIVE = "narrative"
COMMENT = "comment"
_VAERS_FIELDS = ("lab_data", "other_meds", "current_illness", "history", "allergies")
_E2B_COMMENTS = ("reporter_comment", "sender_comment")
_POOLS: dict[str, tuple[str, ...]] = {
    NARRATIVE: ("vaers.symptom_text", "physionet.text", "e2b.narrative"),
    COMMENT: tuple(f"vaers.{f}" for f in _VAERS_FIELDS) + ("e2b.comment",),
}
_PROVENANCE = {
    "what": "empirical quantiles of the character lengths of real free text; numbers only, no text",
    "made_by": "python -m deid_core.synthetic.lengths (deid_core.synthetic.lengths.derive_table)",
    "sources": {
        "vaers/*.jsonl": "US VAERS reports (text = SYMPTOM_TEXT; fields = LAB_DATA, OTHER_MEDS, CUR_ILL, "
                         "HISTORY, ALLERGIES); US government work, public domain",
        "physionet_deid/*.jsonl": "PhysioNet deid gold-standard nursing notes (Neamatullah et al. 2008); GPL-2.0",
        "e2b/**/*.xml": "FDA FAERS E2B(R3) examples (public domain), ICH E2B(R3) examples (GPL-3.0), "
                        "caAERS E2B(R2) files (BSD-3-Clause); text fields read with deid_core.e2b.parse",
    },
    "quantiles": "numpy.quantile(lengths, k / 1000 for k in 0..1000, method='inverted_cdf')",
}


# --- deriving the table from ../shared/data -----------------------------------------


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def source_lengths(shared: Path) -> tuple[dict[str, list[int]], list[str]]:
    """Lengths per source field kind and the files read (relative names), from ``shared``."""
    from deid_core.e2b.errors import E2BParseError
    from deid_core.e2b.parse import iter_reports

    out: dict[str, list[int]] = {}
    files: list[str] = []

    def add(kind: str, text: str | None) -> None:
        if text:
            out.setdefault(kind, []).append(len(text))

    for path in sorted((shared / "vaers").glob("*.jsonl")):
        files.append(path.relative_to(shared).as_posix())
        for rec in _jsonl(path):
            add("vaers.symptom_text", rec.get("text"))
            for name in _VAERS_FIELDS:
                add(f"vaers.{name}", (rec.get("fields") or {}).get(name))
    for path in sorted((shared / "physionet_deid").glob("*.jsonl")):
        files.append(path.relative_to(shared).as_posix())
        for rec in _jsonl(path):
            add("physionet.text", rec.get("text"))
    for path in sorted((shared / "e2b").rglob("*.xml")):
        try:
            reports = list(iter_reports(path))
        except E2BParseError:
            continue  # an acknowledgement or another document without reports
        files.append(path.relative_to(shared).as_posix())
        for report in reports:
            for f in report.text_fields:
                if f.path.startswith("narrative"):
                    add("e2b.narrative", f.text)
                elif f.path in _E2B_COMMENTS:
                    add("e2b.comment", f.text)
                else:
                    add("e2b.other", f.text)
    return out, files


def quantile_row(lengths: Iterable[int]) -> dict[str, Any]:
    """Count, mean, maximum and the 1,001-point quantile grid of ``lengths``."""
    import numpy as np

    values = np.asarray(sorted(lengths), dtype=np.int64)
    if not len(values):
        raise ValueError("no lengths")
    grid = np.quantile(values, np.linspace(0.0, 1.0, QUANTILES + 1), method="inverted_cdf")
    return {"n": int(len(values)), "mean": round(float(values.mean()), 1), "max": int(values[-1]),
            "q": [int(v) for v in grid]}


def derive_table(shared: Path = DEFAULT_SHARED) -> dict[str, Any]:
    """The length table (the content of ``lengths.json``) made from the shared data under ``shared``."""
    per_source, files = source_lengths(shared)
    missing = sorted({s for pool in _POOLS.values() for s in pool} - set(per_source))
    if missing:
        raise FileNotFoundError(f"no lengths for {', '.join(missing)} under {shared}")
    kinds = {name: {"sources": list(pool), **quantile_row(x for s in pool for x in per_source[s])}
             for name, pool in _POOLS.items()}
    kinds.update({name: {"sources": [name], **quantile_row(v)} for name, v in sorted(per_source.items())})
    return {"format": 1, "provenance": {**_PROVENANCE, "files": files}, "kinds": kinds}


def dumps_table(table: dict[str, Any]) -> str:
    """The table as committed: indented JSON with each quantile grid on one line."""
    kinds = table["kinds"]
    head = json.dumps({k: v for k, v in table.items() if k != "kinds"}, indent=2, ensure_ascii=False)
    rows = []
    for name, row in kinds.items():
        fields = [f'"{k}": {json.dumps(v, separators=(",", ":"))}' for k, v in row.items()]
        rows.append(f'    "{name}": {{\n      ' + ",\n      ".join(fields) + "\n    }")
    return head[:-2] + ',\n  "kinds": {\n' + ",\n".join(rows) + "\n  }\n}\n"


# --- sampling ----------------------------------------------------------------------------


@dataclass(frozen=True)
class LengthTable:
    """The committed quantile grids, one per kind; :meth:`sample` draws a length."""

    grids: dict[str, tuple[int, ...]]

    @classmethod
    def from_dict(cls, table: dict[str, Any]) -> LengthTable:
        grids = {name: tuple(row["q"]) for name, row in table["kinds"].items()}
        for name, q in grids.items():
            if len(q) != QUANTILES + 1 or list(q) != sorted(q) or q[0] < 0:
                raise ValueError(f"length table kind {name!r}: not a sorted grid of {QUANTILES + 1} lengths")
        return cls(grids)

    def sample(self, kind: str, u: float) -> int:
        """The length at cumulative probability ``u`` in [0, 1): linear between grid points, at least 1."""
        q = self.grids[kind]
        pos = min(max(u, 0.0), 1.0) * QUANTILES
        k = min(int(pos), QUANTILES - 1)
        return max(1, round(q[k] + (pos - k) * (q[k + 1] - q[k])))


@lru_cache(maxsize=1)
def load_table(path: Path = TABLE_PATH) -> LengthTable:
    """The committed table (``lengths.json``)."""
    return LengthTable.from_dict(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True, slots=True)
class ReportLengths:
    """Target lengths (characters) of one synthetic report's free text."""

    narrative: int
    reporter_comment: int
    sender_comment: int


@dataclass(frozen=True)
class LengthPlan:
    """Lengths per report index, deterministic for ``seed`` (see the module docstring).

    ``long_share``: probability that a report's narrative is drawn
    log-uniformly from ``[long_min, long_max]`` instead of the table;
    ``huge_every``/``huge_length``: one report in every block of that many
    consecutive indices (at an offset chosen by the seed) has a narrative of
    ``huge_length``; ``huge_every = 0`` turns it off.
    """

    seed: int
    long_share: float = 1 / 20_000
    long_min: int = 100_000
    long_max: int = 1_000_000
    huge_every: int = 10_000
    huge_length: int = 1_000_000
    table: LengthTable | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.long_share <= 1.0:
            raise ValueError(f"long_share must be in [0, 1], got {self.long_share}")
        if not 1 <= self.long_min <= self.long_max:
            raise ValueError(f"need 1 <= long_min <= long_max, got {self.long_min}, {self.long_max}")
        if self.huge_every < 0 or self.huge_length < 1:
            raise ValueError("huge_every must be >= 0 and huge_length >= 1")

    @property
    def huge_offset(self) -> int | None:
        """Index (mod ``huge_every``) of the huge narrative in each block, or None when off."""
        if not self.huge_every:
            return None
        return Random(f"{__name__}/{self.seed}/huge").randrange(self.huge_every)

    def is_huge(self, index: int) -> bool:
        offset = self.huge_offset
        return offset is not None and index % self.huge_every == offset

    def for_report(self, index: int) -> ReportLengths:
        table = self.table or load_table()
        rng = Random(f"{__name__}/{self.seed}/{index}/lengths")
        tail, u_narr, u_long, u_rep, u_snd = (rng.random() for _ in range(5))
        if self.is_huge(index):
            narrative = self.huge_length
        elif tail < self.long_share:
            lo, hi = math.log(self.long_min), math.log(self.long_max)
            narrative = round(math.exp(lo + u_long * (hi - lo)))
        else:
            narrative = table.sample(NARRATIVE, u_narr)
        return ReportLengths(narrative, table.sample(COMMENT, u_rep), table.sample(COMMENT, u_snd))


# --- fitting text to a length -------------------------------------------------------------


def cut_point(text: str, limit: int, spans: Iterable[tuple[int, int]] = ()) -> int:
    """Where to cut ``text`` so that it is at most ``limit`` characters.

    At white space, never inside one of ``spans`` (``(start, end)``,
    end-exclusive), so an annotated value is kept whole or dropped whole. A
    text whose first word is already longer than ``limit`` keeps that word.
    """
    if len(text) <= limit:
        return len(text)
    inside = sorted((s, e) for s, e in spans if e - s > 1)
    pos = limit
    while pos > 0:
        cut = max(text.rfind(" ", 0, pos + 1), text.rfind("\n", 0, pos + 1))
        if cut <= 0:
            break
        blocking = [s for s, e in inside if s < cut < e]
        if not blocking:
            return cut
        pos = min(blocking) - 1
    first = min((i for i in (text.find(" "), text.find("\n")) if i > 0), default=len(text))
    return first


def fit_plain(text: str, length: int, sep: str = " ") -> str:
    """``text`` repeated (joined by ``sep``) and cut at white space to at most ``length`` characters."""
    if length < 1:
        raise ValueError(f"length must be positive, got {length}")
    if not text:
        return text
    if len(text) < length:
        text = sep.join([text] * (length // (len(text) + len(sep)) + 1))
    return text[: cut_point(text, length)].rstrip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Derive the committed length table from ../shared/data.")
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared data folder")
    ap.add_argument("--out", type=Path, default=TABLE_PATH, help="where to write the table")
    ap.add_argument("--check", action="store_true", help="only compare with the table at --out (exit 1 if it differs)")
    args = ap.parse_args(argv)
    if not args.shared.is_dir():
        print(f"skipped: {args.shared} is absent (the length table is derived from ../shared/data)", file=sys.stderr)
        return 2
    text = dumps_table(derive_table(args.shared))
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'matches' if same else 'differs from'} the shared data")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
