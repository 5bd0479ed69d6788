"""A made-up QA sample (invented names and numbers only) shared by the QA tests."""

from __future__ import annotations

import pytest

from deid_core.lakehouse import KIND_STRUCTURED, KIND_TEXT, field_key
from deid_core.qa.items import MaskedSpan, ReviewItem, SampleInfo

SAMPLE_ID = "qa-2026-11-26-ab12cd"


def spans_for(text: str, marks: list[tuple[str, str]]) -> tuple[MaskedSpan, ...]:
    """Spans from (quote, label) pairs; each quote is masked at every occurrence, as the engine would."""
    out: list[MaskedSpan] = []
    for quote, label in marks:
        pos = text.find(quote)
        assert pos >= 0, f"test data: quote for {label} not in text"
        while pos >= 0:
            out.append(MaskedSpan(pos, pos + len(quote), label, f"[{label}]"))
            pos = text.find(quote, pos + len(quote))
    return tuple(sorted(out, key=lambda s: s.start))


def deidentify(text: str, spans: tuple[MaskedSpan, ...]) -> str:
    parts, pos = [], 0
    for s in sorted(spans, key=lambda s: s.start):
        parts += [text[pos:s.start], s.replacement]
        pos = s.end
    return "".join(parts + [text[pos:]])


def make_item(
    report_no: int,
    field_no: int,
    path: str,
    original: str,
    marks: list[tuple[str, str]],
    *,
    kind: str = KIND_TEXT,
    label: str | None = None,
    strata: dict[str, str] | None = None,
    deidentified: str | None = None,
) -> ReviewItem:
    spans = spans_for(original, marks)
    return ReviewItem(
        sample_id=SAMPLE_ID,
        item_id=f"r{report_no:03d}-f{field_no:02d}",
        report_no=report_no,
        case_id=f"GB-ACME-2026-{1000 + report_no}",
        version="2",
        field=field_key(kind, path),
        kind=kind,
        label=label,
        model_version="hybrid-1.4.0",
        policy_version="policy-3",
        original=original,
        deidentified=deidentify(original, spans) if deidentified is None else deidentified,
        spans=spans,
        strata=strata if strata is not None else {
            "sender": "ACME Pharma", "country": "GB", "length_bucket": "300-999", "model_version": "hybrid-1.4.0",
        },
    )


NARRATIVE_1 = (
    "Jane Roe, a 47 year old female from Leeds, was started on amoxicillin 500 mg three times daily "
    "on 12-JAN-2026 for a chest infection.\n"
    "On 14-JAN-2026 she developed an urticarial rash and facial swelling. She was seen by Dr Richard Miles "
    "at St Elsewhere Hospital (tel 0113 496 0000) and treated with chlorphenamine 4 mg.\n"
    "Amoxicillin was withdrawn; the reaction resolved within 3 days. Reporter e-mail: j.roe@example.org."
)
NARRATIVE_2 = (
    "Patient John Doe (MRN 44-1982-77) received the second dose of the vaccine on 03/02/2026. "
    "Two hours later he reported dizziness and a blood pressure of 88/54 mmHg. Observed in A&E at "
    "Riverside Clinic, Springfield, discharged the same day. Consumer report via https://report.example.com/x1."
)
NARRATIVE_3 = (
    "A 93-year-old man on warfarin 3 mg daily had an INR of 6.2 on 2026-03-09 after starting "
    "clarithromycin. Minor gum bleeding. Warfarin held for two doses. Reporter: Mary Major, pharmacist."
)


STRATA_2 = {"sender": "Consumer portal", "country": "US", "length_bucket": "<300", "model_version": "hybrid-1.4.0"}
STRATA_3 = {"sender": "Hospital", "country": "DE", "length_bucket": "<300", "model_version": "hybrid-1.4.0"}


@pytest.fixture
def sample() -> tuple[SampleInfo, list[ReviewItem]]:
    """Three reports with narratives and structured fields, all consistent (tests break them on purpose)."""
    items = [
        make_item(1, 1, "narrative", NARRATIVE_1, [
            ("Jane Roe", "NAME"), ("47", "AGE"), ("Leeds", "LOCATION"), ("12-JAN-2026", "DATE"),
            ("14-JAN-2026", "DATE"), ("Richard Miles", "NAME"), ("St Elsewhere Hospital", "LOCATION"),
            ("0113 496 0000", "PHONE"), ("j.roe@example.org", "EMAIL"), ("3 days", "DATE"),
        ]),
        make_item(1, 2, "patient.initials", "JR", [("JR", "NAME")], kind=KIND_STRUCTURED, label="NAME"),
        make_item(1, 3, "patient.birth_date", "1978-05-02", [("1978-05-02", "DATE")],
                  kind=KIND_STRUCTURED, label="DATE"),
        make_item(2, 1, "narrative", NARRATIVE_2, [
            ("John Doe", "NAME"), ("44-1982-77", "ID"), ("03/02/2026", "DATE"), ("Riverside Clinic", "LOCATION"),
            ("Springfield", "LOCATION"), ("https://report.example.com/x1", "URL"),
        ], strata=STRATA_2),
        make_item(2, 2, "reporter.comment_text", "Called back on 05/02/2026.", [("05/02/2026", "DATE")],
                  strata=STRATA_2),
        make_item(3, 1, "narrative", NARRATIVE_3, [
            ("93", "AGE"), ("2026-03-09", "DATE"), ("Mary Major", "NAME"),
        ], strata=STRATA_3),
        make_item(3, 2, "reporter.qualification_other", "pharmacist", [], kind=KIND_STRUCTURED,
                  strata=STRATA_3),
    ]
    info = SampleInfo(
        sample_id=SAMPLE_ID, run_id="2026-11-26", created_at="2026-11-26T09:30:00+00:00",
        population_reports=1250, sampled_reports=3, strata=3,
        model_versions=("hybrid-1.4.0",), policy_versions=("policy-3",), seed="qa-seed",
    )
    return info, items
