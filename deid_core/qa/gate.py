"""The release gate: may a batch made with these model versions be published?

Fail closed: a model version with no completely reviewed QA sample, or
whose latest one has a residual-PHI upper confidence bound above the limit,
stops the whole batch. The latest sample is the one drawn last (by creation
time), not the one reviewed last, so an old good review cannot hide a newer
bad one. Pure function over the `qa_metrics` rows; `jobs.publish` applies it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelVerdict:
    model_version: str
    allowed: bool
    reason: str
    sample_id: str | None = None
    residual_phi_upper: float | None = None
    over_masking_upper: float | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class GateDecision:
    allowed: bool
    verdicts: tuple[ModelVerdict, ...] = field(default_factory=tuple)

    def summary(self) -> str:
        return "; ".join(f"{v.model_version}: {v.reason}" for v in self.verdicts) or "nothing to publish"


def decide(model_versions: Iterable[str], metrics: Iterable[Mapping[str, Any]], *, max_residual_phi_upper: float,
           max_over_masking_upper: float | None = None) -> GateDecision:
    """One verdict per model version of the batch; the batch passes only if all do.

    `metrics` rows carry sample_id, model_version, sample_created_at,
    complete, tokens, missed_phi, residual_phi_upper, over_masking_upper.
    """
    latest: dict[str, Mapping[str, Any]] = {}
    for row in metrics:
        if not row.get("complete"):
            continue
        mv = str(row["model_version"])
        if mv not in latest or str(row["sample_created_at"]) > str(latest[mv]["sample_created_at"]):
            latest[mv] = row
    verdicts = []
    for mv in sorted(set(model_versions)):
        row = latest.get(mv)
        if row is None:
            verdicts.append(ModelVerdict(mv, False, "no completely reviewed QA sample for this model version"))
            continue
        upper = float(row["residual_phi_upper"])
        over = row.get("over_masking_upper")
        common = dict(sample_id=str(row["sample_id"]), residual_phi_upper=upper,
                      over_masking_upper=None if over is None else float(over), tokens=int(row["tokens"]))
        if upper > max_residual_phi_upper:
            verdicts.append(ModelVerdict(mv, False, (
                f"residual-PHI upper bound {upper:.5f} > limit {max_residual_phi_upper:.5f} "
                f"(sample {row['sample_id']}: {row['missed_phi']} missed of {row['tokens']} tokens)"), **common))
        elif max_over_masking_upper is not None and over is not None and float(over) > max_over_masking_upper:
            verdicts.append(ModelVerdict(mv, False, (
                f"over-masking upper bound {float(over):.4f} > limit {max_over_masking_upper:.4f} "
                f"(sample {row['sample_id']})"), **common))
        else:
            verdicts.append(ModelVerdict(mv, True, (
                f"residual-PHI upper bound {upper:.5f} <= limit {max_residual_phi_upper:.5f} "
                f"(sample {row['sample_id']}, {row['tokens']} tokens)"), **common))
    return GateDecision(all(v.allowed for v in verdicts), tuple(verdicts))
