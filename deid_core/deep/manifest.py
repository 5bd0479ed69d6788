"""What a saved model is, how it was made, and how well it did.

A model directory holds `weights.weights.h5`, `vocabulary.json` and
`manifest.json`. The manifest is the contract between training and
inference: the network is rebuilt from its architecture, and loading
refuses a vocabulary whose hash differs from the one the weights were
trained with, or a feature layout the code no longer produces.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deid_core.config import ArchitectureConfig, SequenceConfig
from deid_core.corpus.atomic import atomic_text_writer
from deid_core.thresholds import Thresholds

MANIFEST_FILE = "manifest.json"
WEIGHTS_FILE = "weights.weights.h5"
VOCABULARY_FILE = "vocabulary.json"
FORMAT_VERSION = 1


class DataSource(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    sha256: str
    documents: int
    kind: str = "corpus"


class ModelManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format_version: int = FORMAT_VERSION
    model_version: str
    created: str
    architecture: ArchitectureConfig
    sequence: SequenceConfig
    classes: list[str]
    feature_names: list[str]
    char_width: int
    vocabulary_sha256: str
    n_words: int
    n_chars: int
    dictionary_version: str
    dictionary_sha256: str
    training_data: list[DataSource] = Field(default_factory=list)
    base_model: str | None = None
    training: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    thresholds: Thresholds | None = None
    #: softmax temperature fitted on dev (`deid_core.training.calibration`); 1 = uncalibrated
    temperature: float = Field(1.0, gt=0)
    keras_version: str = ""

    def write(self, model_dir: Path) -> None:
        with atomic_text_writer(model_dir / MANIFEST_FILE) as fh:
            fh.write(json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")

    @classmethod
    def read(cls, model_dir: Path) -> ModelManifest:
        path = model_dir / MANIFEST_FILE
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ModelError(f"no model manifest at {path}") from exc
        except ValueError as exc:
            raise ModelError(f"model manifest {path} is invalid: {exc}") from exc


class ModelError(RuntimeError):
    """A model cannot be used; detection must fail closed (no output) then."""


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def model_version(vocabulary_sha256: str, weights_sha256: str) -> str:
    """Content-derived: the same weights and vocabulary give the same version."""
    return "model-" + hashlib.sha256((vocabulary_sha256 + weights_sha256).encode()).hexdigest()[:12]
