"""What a saved model is, how it was made, and how well it did.

A model directory holds `weights.weights.h5`, `vocabulary.json` and
`manifest.json`. The manifest is the contract between training and
inference: the network is rebuilt from its architecture, and loading
refuses a vocabulary whose hash differs from the one the weights were
trained with, or a feature layout the code no longer produces. The fields
every model family shares (and `ModelError`, `DataSource`, `file_sha256`)
are defined in `deid_core.model_files`; this module adds the network's.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from deid_core.config import ArchitectureConfig, SequenceConfig
from deid_core.model_files import (  # noqa: F401 - re-exported: the network's callers import them from here
    MANIFEST_FILE,
    DataSource,
    ManifestBase,
    ModelError,
    content_version,
    file_sha256,
)

WEIGHTS_FILE = "weights.weights.h5"
VOCABULARY_FILE = "vocabulary.json"
FORMAT_VERSION = 1


class ModelManifest(ManifestBase):
    """The BiLSTM's manifest: the common core (`deid_core.model_files`) plus the network's architecture."""

    FAMILIES_READ: ClassVar[tuple[str, ...]] = ("bilstm",)

    format_version: int = FORMAT_VERSION
    family: Literal["bilstm"] = "bilstm"
    architecture: ArchitectureConfig
    sequence: SequenceConfig
    char_width: int
    vocabulary_sha256: str
    n_words: int
    n_chars: int
    #: softmax temperature fitted on dev (`deid_core.training.calibration`); 1 = uncalibrated
    temperature: float = Field(1.0, gt=0)
    keras_version: str = ""


def model_version(vocabulary_sha256: str, weights_sha256: str) -> str:
    """Content-derived: the same weights and vocabulary give the same version."""
    return content_version("model", vocabulary_sha256, weights_sha256)
