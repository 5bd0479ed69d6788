"""What a QA sample is made of: one item per de-identified field of a sampled report.

The sample job builds these from the silver (de-identified) and bronze
(original) tables; the HTML report and the review JSONL are both rendered
from them, so a reviewer's marks refer to exactly the text they were shown.
Items hold original text: they live only in the restricted QA folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MaskedSpan:
    """A span of the original text that the engine replaced (0-based, end-exclusive)."""

    start: int
    end: int
    label: str
    replacement: str


@dataclass(frozen=True)
class ReviewItem:
    """One field of one sampled report, as the engine left it."""

    sample_id: str
    item_id: str            # unique within the sample, e.g. "r003-f02"
    report_no: int          # 1-based position of the report in the sample
    case_id: str
    version: str
    field: str              # a field key: "text:<path>" or "structured:<path>" (`deid_core.lakehouse.field_key`)
    kind: str               # "text" | "structured"
    label: str | None       # the structured field's category, None for free text
    model_version: str
    policy_version: str
    original: str
    deidentified: str
    spans: tuple[MaskedSpan, ...]
    #: the stratum the report was drawn from: sender, country, length bucket, model version
    strata: dict[str, str] = field(default_factory=dict)
    #: reports in the stratum / reports drawn from it (the item's sampling weight)
    weight: float = 1.0


@dataclass(frozen=True)
class SampleInfo:
    """Facts about a whole sample, shown in the report header and recorded with the review."""

    sample_id: str
    run_id: str
    created_at: str          # ISO-8601 UTC
    population_reports: int  # reports the sample was drawn from
    sampled_reports: int
    strata: int
    model_versions: tuple[str, ...]
    policy_versions: tuple[str, ...]
    seed: str
