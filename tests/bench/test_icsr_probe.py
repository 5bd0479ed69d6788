"""The hand-written ICSR probe set: its JSONL is exactly what its marked-up source converts to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deid_core.corpus.document import KEEP_LABELS
from deid_core.corpus.jsonl import read_jsonl

PROBE = Path(__file__).resolve().parents[2] / "bench" / "annotations" / "icsr_probe"


def test_the_jsonl_is_the_conversion_of_the_marked_up_narratives(tmp_path: Path) -> None:
    for name in ("narratives.txt", "convert.py"):
        (tmp_path / name).write_bytes((PROBE / name).read_bytes())
    proc = subprocess.run([sys.executable, str(tmp_path / "convert.py")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "probe.jsonl").read_bytes() == (PROBE / "probe.jsonl").read_bytes()


def test_the_probe_reads_as_a_corpus_with_phi_and_keep_spans() -> None:
    docs = read_jsonl(PROBE / "probe.jsonl")
    assert len(docs) == 80 and len({d.doc_id for d in docs}) == 80
    assert sum(len(d.spans) for d in docs) == 712 and sum(len(d.keep) for d in docs) == 1939
    assert {k.label for d in docs for k in d.keep} <= set(KEEP_LABELS)
    first = json.loads((PROBE / "probe.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"doc_id", "text", "spans", "keep"}
