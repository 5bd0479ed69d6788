"""Whether a candidate model may replace the current one: a pure decision on evaluation numbers.

The gate guards the project's first rule (no PHI through): on every frozen
evaluation set the candidate's hybrid token recall must not be lower than
the current model's (beyond a configured tolerance, 0 by default), and its
precision may fall only by a small margin. Anything that makes the
comparison unsound (a set missing on either side, different gold counts,
documents the detector failed on and masked wholesale) rejects: a refused
promotion costs a night, a wrong one leaks PHI.

Kept free of I/O so the decision table can be tested exhaustively.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: float noise allowed in ratio comparisons (recall is a ratio of counts)
_EPS = 1e-12


@dataclass(frozen=True)
class EvalResult:
    """Hybrid token metrics of one model on one frozen set."""

    recall: float
    precision: float
    gold_tokens: int
    caught: int = 0
    false_positives: int = 0
    documents: int = 0
    #: documents the detector could not process (fully masked by FailClosed):
    #: they inflate recall, so any makes the result unusable for the gate
    failures: int = 0

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> EvalResult:
        names = cls.__dataclass_fields__
        return cls(**{k: raw[k] for k in names if k in raw})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    promote: bool
    reasons: list[str] = field(default_factory=list)


def _valid(r: EvalResult) -> bool:
    return all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in (r.recall, r.precision))


def _check_set(name: str, cand: EvalResult, cur: EvalResult, recall_tolerance: float,
               max_precision_drop: float) -> tuple[bool, str]:
    """(passes, reason) for one set; the reason quotes numbers only."""
    if not (_valid(cand) and _valid(cur)):
        return False, f"{name}: recall/precision outside [0, 1]"
    if cand.failures or cur.failures:
        return False, (f"{name}: detector failures (candidate {cand.failures}, current {cur.failures} documents "
                       "fully masked); the comparison is not sound")
    if cand.gold_tokens <= 0 or cur.gold_tokens <= 0:
        return False, f"{name}: no gold PHI tokens; recall cannot be compared"
    if cand.gold_tokens != cur.gold_tokens:
        return False, (f"{name}: gold token counts differ (candidate {cand.gold_tokens}, current {cur.gold_tokens}); "
                       "the models were not evaluated on the same data")
    recall_floor = cur.recall - recall_tolerance
    precision_floor = cur.precision - max_precision_drop
    recall_ok = cand.recall + _EPS >= recall_floor
    precision_ok = cand.precision + _EPS >= precision_floor
    detail = (f"recall {cand.recall:.6f} vs {cur.recall:.6f} (floor {recall_floor:.6f}), "
              f"precision {cand.precision:.6f} vs {cur.precision:.6f} (floor {precision_floor:.6f})")
    if not recall_ok:
        return False, f"{name}: recall below the current model's: {detail}"
    if not precision_ok:
        return False, f"{name}: precision dropped by more than {max_precision_drop}: {detail}"
    return True, f"{name}: passes: {detail}"


def decide(
    candidate: Mapping[str, EvalResult],
    current: Mapping[str, EvalResult],
    recall_tolerance: float,
    max_precision_drop: float,
) -> Decision:
    """Promote only if every set on either side passes; reasons list every set's verdict."""
    for name, value in (("recall_tolerance", recall_tolerance), ("max_precision_drop", max_precision_drop)):
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"{name} must lie in [0, 1]")
    names = sorted(set(candidate) | set(current))
    if not names:
        return Decision(False, ["no evaluation sets: nothing shows the candidate is at least as safe"])
    reasons: list[str] = []
    ok = True
    for name in names:
        if name not in candidate:
            ok = False
            reasons.append(f"{name}: no result for the candidate")
            continue
        if name not in current:
            ok = False
            reasons.append(f"{name}: no result for the current model")
            continue
        passes, reason = _check_set(name, candidate[name], current[name], recall_tolerance, max_precision_drop)
        ok = ok and passes
        reasons.append(reason)
    return Decision(ok, reasons)
