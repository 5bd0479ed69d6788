"""The (low, high) pair of the adaptive-threshold combiner, as used and as stored.

The combiner (`deid_core.hybrid`) applies the pair; a model's manifest
(`deid_core.deep.manifest`) stores a tuned one together with where it was
tuned and how it did. One type serves both, so a manifest's thresholds are
handed to the combiner as they are. It lives below both packages because
the network and the combiner must not import each other.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Thresholds(BaseModel):
    """P(safe) must exceed `low` to release a token the rules call safe, `high` for one they masked.

    The optional fields record a tuned pair's provenance in the manifest
    (target recall, dev set, the recall and precision reached there); the
    combiner reads only `low` and `high`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    target_recall: float | None = None
    tuned_on: str | None = None
    recall: float | None = None
    precision: float | None = None

    def __init__(self, low: float, high: float, **provenance: Any) -> None:
        """`Thresholds(0.9, 0.95)` reads like the pair it is; provenance goes by keyword."""
        super().__init__(low=low, high=high, **provenance)
