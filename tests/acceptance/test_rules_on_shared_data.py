"""Acceptance on the shared corpora: the rules' PhysioNet recall and a VAERS run.

These need ../shared/data and skip with a message where it is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.config import DeidConfig
from deid_core.corpus.jsonl import iter_jsonl
from deid_core.detectors import Method, RulesDetector, build_detector
from deid_core.evaluation.corpus import evaluate_corpus
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts
from deid_core.rules.deidentifier import RuleDeidentifier

pytestmark = pytest.mark.shared_data


def _evaluate(rules: RuleDeidentifier, path: Path, cfg: DeidConfig) -> Counts:
    hipaa = HipaaMap.load(cfg.evaluation.label_map)
    return evaluate_corpus((doc for _, doc in iter_jsonl(path)), hipaa, detector=RulesDetector(rules)).counts


@pytest.mark.parametrize("split", ["dev", "test"])
def test_rule_masking_recall_on_physionet(shared_data: Path, rules: RuleDeidentifier, cfg: DeidConfig,
                                          split: str) -> None:
    """Issue 2's bar: token masking recall of at least 98.5% (the method reports 98.8% on i2b2)."""
    c = _evaluate(rules, shared_data / "physionet_deid" / f"{split}.jsonl", cfg)
    assert c.gold_tokens > 300
    assert c.recall >= 0.985, f"{split}: recall {c.recall:.4f} ({c.caught}/{c.gold_tokens})"
    assert c.label_recall()["DATE"][2] == 1.0
    assert c.label_recall()["PHONE"][2] == 1.0


def test_vaers_narratives_run_without_failures(shared_data: Path, cfg: DeidConfig, artifact) -> None:
    det = build_detector(Method.rules, cfg, artifact)
    docs = [d for _, d in iter_jsonl(shared_data / "vaers" / "vaers_narratives.jsonl")]
    assert len(docs) == 995
    out = det.detect([d.text for d in docs])
    assert det.failures == 0 and len(out) == 995
    masked = sum(len(m) for m in out)
    assert masked > 0
