"""The hand-written ICSR probe sets: each JSONL is exactly what its marked-up source converts to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deid_core.corpus.document import KEEP_LABELS
from deid_core.corpus.jsonl import read_jsonl

ANNOTATIONS = Path(__file__).resolve().parents[2] / "bench" / "annotations"
#: folder -> (PHI spans, keep spans) as each author's README counts them
PROBES = {"icsr_probe": (712, 1939), "icsr_probe2": (801, 1712), "icsr_probe3": (852, 2016),
          "icsr_probe4": (898, 1989), "icsr_probe5": (900, 1982)}


#: folder -> the doc ids' prefix the one converter (icsr_probe/convert.py) gives it
PREFIXES = {"icsr_probe": "PROBE", "icsr_probe2": "PROBE2", "icsr_probe3": "PROBE3", "icsr_probe4": "PROBE4",
            "icsr_probe5": "PROBE5"}


@pytest.mark.parametrize("folder", sorted(PROBES))
def test_the_jsonl_is_the_conversion_of_the_marked_up_narratives(tmp_path: Path, folder: str) -> None:
    probe = ANNOTATIONS / folder
    (tmp_path / "narratives.txt").write_bytes((probe / "narratives.txt").read_bytes())
    converter = ANNOTATIONS / "icsr_probe" / "convert.py"
    proc = subprocess.run([sys.executable, str(converter), "--dir", str(tmp_path), "--prefix", PREFIXES[folder]],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "probe.jsonl").read_bytes() == (probe / "probe.jsonl").read_bytes()


@pytest.mark.parametrize("folder", sorted(PROBES))
def test_the_probe_reads_as_a_corpus_with_phi_and_keep_spans(folder: str) -> None:
    probe = ANNOTATIONS / folder
    docs = read_jsonl(probe / "probe.jsonl")
    assert len(docs) == 80 and len({d.doc_id for d in docs}) == 80
    assert (sum(len(d.spans) for d in docs), sum(len(d.keep) for d in docs)) == PROBES[folder]
    assert {k.label for d in docs for k in d.keep} <= set(KEEP_LABELS)
    first = json.loads((probe / "probe.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"doc_id", "text", "spans", "keep"}
