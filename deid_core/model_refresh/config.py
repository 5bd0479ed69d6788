"""Loading and validating `conf/model_refresh.yaml`, the model-refresh workflow's settings.

Kept apart from `conf/deid.yaml` because it describes an operational loop
(where the registry lives, which frozen sets gate a promotion, how strict
the gate is), not how a document is de-identified. Like the main config it
is validated up front and unknown keys are rejected: a typo in a promotion
margin must fail at start-up, not quietly let a weaker model through.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from deid_core.config import (
    PROJECT_ROOT,
    ArchitectureConfig,
    ConfigError,
    DeidConfig,
    SequenceConfig,
    TrainingConfig,
    VocabularyConfig,
    _resolve_paths,
    _Strict,
    chosen_file,
    load_config,
    load_yaml_model,
)

DEFAULT_REFRESH_CONFIG = PROJECT_ROOT / "conf" / "model_refresh.yaml"
REFRESH_CONFIG_ENV = "DEID_MODEL_REFRESH_CONFIG"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

#: Training settings the refresh job decides itself (per-run scratch folder,
#: the corpora of the training set) or that Spark workers re-read from the
#: deid config file, so an override here would silently not reach them.
_TRAINING_NOT_OVERRIDABLE = {
    "corpora": "set base_corpora / annotations_inbox instead",
    "dev": "set dev instead",
    "synthetic_docs": "set synthetic_docs instead",
    "synthetic_seed": "set synthetic_seed instead",
    "workdir": "the job uses <work_dir>/<run_id>/train_work",
    "label_map": "Spark workers read it from the deid config",
    "age_phi_min": "Spark workers read it from the deid config",
}


class EvalSetConfig(_Strict):
    """A frozen evaluation set: the hash pins its content, so gates stay comparable run to run."""

    name: str
    path: Path
    sha256: str

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _SET_NAME.match(v):
            raise ValueError("eval set names use letters, digits, '_', '.', '-'")
        return v

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v: str) -> str:
        v = v.lower()
        if not _SHA256.match(v):
            raise ValueError("sha256 must be 64 hexadecimal digits")
        return v


class PromotionConfig(_Strict):
    """The gate, per frozen set: recall may not fall (beyond the tolerance), precision only a little.

    Both margins are absolute differences of token-level ratios (0.01 = one
    percentage point).
    """

    recall_tolerance: float = Field(0.0, ge=0, le=1)
    max_precision_drop: float = Field(0.01, ge=0, le=1)


class TrainingOverrides(_Strict):
    """Partial replacements of `deep.*` sections of the deid config, for the candidate's training only.

    Meant for tests and small experiments (a tiny network, short windows);
    keys and values are checked against the existing config models.
    """

    architecture: dict[str, Any] = Field(default_factory=dict)
    sequence: dict[str, Any] = Field(default_factory=dict)
    vocabulary: dict[str, Any] = Field(default_factory=dict)
    training: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_keys(self) -> TrainingOverrides:
        sections: dict[str, type[BaseModel]] = {
            "architecture": ArchitectureConfig,
            "sequence": SequenceConfig,
            "vocabulary": VocabularyConfig,
            "training": TrainingConfig,
        }
        for section, model in sections.items():
            values: dict[str, Any] = getattr(self, section)
            unknown = sorted(set(values) - set(model.model_fields))
            if unknown:
                raise ValueError(f"training_overrides.{section}: unknown keys {unknown}")
        for key in self.training:
            if key in _TRAINING_NOT_OVERRIDABLE:
                raise ValueError(f"training_overrides.training.{key} cannot be overridden: "
                                 f"{_TRAINING_NOT_OVERRIDABLE[key]}")
        # the sections with complete defaults can be value-checked now
        for section, model in (("architecture", ArchitectureConfig), ("sequence", SequenceConfig),
                               ("vocabulary", VocabularyConfig)):
            values = getattr(self, section)
            if values:
                model.model_validate({**model().model_dump(), **values})
        return self

    def apply(self, cfg: DeidConfig, base: Path) -> DeidConfig:
        """The deid config with the overrides merged and re-validated; new relative paths resolve against `base`."""
        deep = cfg.deep
        updates: dict[str, Any] = {}
        for section in ("architecture", "sequence", "vocabulary", "training"):
            values = getattr(self, section)
            if values:
                current: BaseModel = getattr(deep, section)
                merged = type(current).model_validate({**current.model_dump(), **values})
                updates[section] = _resolve_paths(merged, base)
        if not updates:
            return cfg
        return cfg.model_copy(update={"deep": deep.model_copy(update=updates)})


_PHYSIONET_TEST = EvalSetConfig(
    name="physionet_test",
    path=Path("../../shared/data/physionet_deid/test.jsonl"),
    sha256="04a55a8e39bb966ccfe073fb1e35f5c317175794eb5e290475fe53417966aac3",
)


class RefreshConfig(_Strict):
    registry_dir: Path = Path("../build/model_registry")
    work_dir: Path = Path("../build/model_refresh")
    deid_config: Path = Path("deid.yaml")
    annotations_inbox: Path = Path("../data/annotations")
    base_corpora: list[Path] = Field(default_factory=lambda: [Path("../../shared/data/physionet_deid/train.jsonl")])
    dev: Path | None = Path("../../shared/data/physionet_deid/dev.jsonl")
    synthetic_docs: int = Field(400, ge=0)
    synthetic_seed: int = 101
    #: null: deep.training.max_epochs of the deid config
    max_epochs: int | None = Field(None, ge=1)
    #: null: deep.training.threshold_target_recall of the deid config
    target_recall: float | None = Field(None, gt=0, le=1)
    #: start from the current model's weights and vocabulary instead of from scratch
    fine_tune_from_current: bool = False
    eval_sets: list[EvalSetConfig] = Field(default_factory=lambda: [_PHYSIONET_TEST], min_length=1)
    promotion: PromotionConfig = PromotionConfig()
    training_overrides: TrainingOverrides = TrainingOverrides()
    #: folder of the YAML file; new relative paths in training_overrides resolve against it
    _source_dir: Path | None = PrivateAttr(None)

    @field_validator("eval_sets")
    @classmethod
    def _unique_names(cls, v: list[EvalSetConfig]) -> list[EvalSetConfig]:
        names = [s.name for s in v]
        if len(set(names)) != len(names):
            raise ValueError("eval set names must be unique")
        return v

    def deid(self) -> DeidConfig:
        """The main config as the candidate is trained with it (overrides applied)."""
        cfg = load_config(self.deid_config)
        try:
            return self.training_overrides.apply(cfg, self._source_dir or self.deid_config.parent)
        except ValueError as exc:
            raise ConfigError(f"training_overrides do not fit {self.deid_config}:\n{exc}") from exc


def refresh_config_path(explicit: Path | None = None) -> Path:
    """Explicit argument, then $DEID_MODEL_REFRESH_CONFIG, then the repository's."""
    return chosen_file(explicit, REFRESH_CONFIG_ENV, DEFAULT_REFRESH_CONFIG)


def load_refresh_config(path: Path | None = None) -> RefreshConfig:
    """Read and validate the YAML; relative paths are relative to its folder."""
    p = refresh_config_path(path)
    resolved = load_yaml_model(p, RefreshConfig, "model refresh config")
    resolved._source_dir = p.resolve().parent
    return resolved
