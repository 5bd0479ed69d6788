"""Synthetic E2B reports fitted to a length plan, written one report per document.

The scale run's table holds one E2B document per report with text of real
lengths: the reader must still give back every text field exactly, in both
formats, and a plan must change nothing but the lengths.
"""

from __future__ import annotations

import pytest

from deid_core.e2b import parse_reports
from deid_core.e2b.synthetic import report_document, synthetic_reports, ts
from deid_core.synthetic.lengths import LengthPlan

SEED = 31


@pytest.fixture(scope="module")
def plan() -> LengthPlan:
    return LengthPlan(SEED, huge_every=20, huge_length=30_000)


@pytest.mark.parametrize("fmt", ["R3", "R2"])
def test_one_report_documents_round_trip(plan: LengthPlan, fmt: str) -> None:
    for index, report in enumerate(synthetic_reports(24, SEED, lengths=plan)):
        [parsed] = parse_reports(report_document(report, fmt, seed=SEED, index=index))
        assert parsed.format == fmt
        assert parsed.case_id == report.case.case_id
        assert parsed.received_date == ts(report.most_recent_info)
        assert {f.path: f.text for f in parsed.text_fields} == report.text_fields


def test_lengths_follow_the_plan_and_nothing_else_changes(plan: LengthPlan) -> None:
    fitted = synthetic_reports(40, SEED, lengths=plan)
    plain = synthetic_reports(40, SEED)
    for i, (a, b) in enumerate(zip(fitted, plain)):
        want = plan.for_report(i)
        assert len(a.narrative.text) <= max(want.narrative, len(a.narrative.text.split()[0]))
        assert len(a.reporter_comment) <= max(want.reporter_comment, len(a.reporter_comment.split()[0]))
        assert a.case == b.case and a.version == b.version and a.created == b.created
        assert a.narrative.text[:20] == b.narrative.text[:20] or len(a.narrative.text) < 20
    assert max(len(r.narrative.text) for r in fitted) > 29_000  # the huge one of the 40 (every 20)


def test_a_plan_for_another_seed_is_refused(plan: LengthPlan) -> None:
    with pytest.raises(ValueError, match="seed"):
        synthetic_reports(2, SEED + 1, lengths=plan)
    with pytest.raises(ValueError, match="format"):
        report_document(synthetic_reports(1, SEED)[0], "R4", seed=SEED, index=0)
