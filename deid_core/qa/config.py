"""The validated QA configuration (`conf/qa.yaml`): sampling, review statistics and the gate's limits.

Kept apart from `conf/deid.yaml` because it belongs to the release process,
not to the de-identifier: a centre tightens the gate without touching, and
re-versioning, the engine's configuration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from deid_core.config import chosen_file, load_yaml_model

QA_CONFIG_ENV = "DEID_QA_CONFIG"
DEFAULT_QA_CONFIG = Path(__file__).resolve().parent.parent.parent / "conf" / "qa.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SampleConfig(_Strict):
    reports: int = Field(40, ge=1)
    length_buckets: list[int] = Field(default_factory=lambda: [300, 1000, 3000])
    include_structured: bool = False
    seed: str = "pv-deid-qa"

    @field_validator("length_buckets")
    @classmethod
    def _increasing(cls, v: list[int]) -> list[int]:
        if any(b <= 0 for b in v) or any(a >= b for a, b in zip(v, v[1:])):
            raise ValueError("length_buckets must be positive and strictly increasing")
        return v


class ReviewConfig(_Strict):
    confidence: float = Field(0.95, gt=0.5, lt=1)


class GateConfig(_Strict):
    max_residual_phi_upper: float = Field(0.001, gt=0, le=1)
    max_over_masking_upper: float | None = Field(None, gt=0, le=1)


class QaConfig(_Strict):
    version: Literal[1]
    qa_dir: Path
    sample: SampleConfig = SampleConfig()
    review: ReviewConfig = ReviewConfig()
    gate: GateConfig = GateConfig()

    @property
    def samples_dir(self) -> Path:
        return self.qa_dir / "samples"

    @property
    def inbox_dir(self) -> Path:
        """Where reviewers put their marked review files."""
        return self.qa_dir / "inbox"


def load_qa_config(path: Path | None = None) -> QaConfig:
    """Read and validate; `path`, else $DEID_QA_CONFIG, else conf/qa.yaml."""
    return load_yaml_model(chosen_file(path, QA_CONFIG_ENV, DEFAULT_QA_CONFIG), QaConfig, "QA config file")
