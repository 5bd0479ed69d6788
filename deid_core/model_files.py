"""What every model directory has in common, whatever the model family.

The hybrid's second stage can be the BiLSTM (`deid_core.deep`) or a
classical feature model, a linear-chain CRF or a linear SVM
(`deid_core.classic`). Each family keeps its own files, but a model
directory always holds a `manifest.json` with the same core: the family,
a content-derived version, the class order, the feature layout, the
dictionary the features came from, the training data with their hashes,
how long training took, the tuned thresholds and the metrics. That core is
defined here, once, below both families, so the loader (`deid_core.models`),
the threshold search and the CLI read any manifest the same way, and the
network and the classical models never import each other.

A manifest written before the `family` field existed is a BiLSTM's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from deid_core.corpus.atomic import atomic_text_writer
from deid_core.thresholds import Thresholds

MANIFEST_FILE = "manifest.json"

Family = Literal["bilstm", "crf", "svm", "ensemble"]
#: every model family, the default first: a manifest without `family` is a BiLSTM's
FAMILIES: tuple[str, ...] = ("bilstm", "crf", "svm", "ensemble")
DEFAULT_FAMILY = "bilstm"


class ModelError(RuntimeError):
    """A model cannot be used; detection must fail closed (no output) then."""


class DataSource(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    sha256: str
    documents: int
    kind: str = "corpus"


M = TypeVar("M", bound="ManifestBase")


class ManifestBase(BaseModel):
    """The fields every family's manifest has; a family adds its own (`extra="forbid"` in each)."""

    model_config = ConfigDict(extra="forbid")
    #: the families a subclass reads; reading another family's manifest with it is refused
    FAMILIES_READ: ClassVar[tuple[str, ...]] = FAMILIES

    format_version: int = 1
    family: Family = DEFAULT_FAMILY
    model_version: str
    created: str
    classes: list[str]
    feature_names: list[str]
    dictionary_version: str
    dictionary_sha256: str
    training_data: list[DataSource] = Field(default_factory=list)
    base_model: str | None = None
    #: how the model was trained, including how long (`fit_seconds`)
    training: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, Any] = Field(default_factory=dict)
    thresholds: Thresholds | None = None

    def write(self, model_dir: Path) -> None:
        with atomic_text_writer(model_dir / MANIFEST_FILE) as fh:
            fh.write(json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")

    @classmethod
    def read(cls: type[M], model_dir: Path) -> M:
        path = model_dir / MANIFEST_FILE
        family = manifest_family(model_dir)
        if family not in cls.FAMILIES_READ:
            raise ModelError(f"{path} is a {family} model, not a {'/'.join(cls.FAMILIES_READ)} one")
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ModelError(f"model manifest {path} is invalid: {exc}") from exc


def manifest_family(model_dir: Path) -> str:
    """The family a model directory's manifest names (`bilstm` when it names none); ModelError if unreadable."""
    path = model_dir / MANIFEST_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"no model manifest at {path}") from exc
    except (OSError, ValueError) as exc:
        raise ModelError(f"model manifest {path} cannot be read: {type(exc).__name__}") from exc
    family = data.get("family", DEFAULT_FAMILY) if isinstance(data, dict) else None
    if family not in FAMILIES:
        raise ModelError(f"model manifest {path} names an unknown family {family!r} (known: {', '.join(FAMILIES)})")
    return str(family)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def content_version(prefix: str, *digests: str) -> str:
    """`<prefix>-<12 hex>` from the hashes of a model's files: the same files give the same version."""
    return f"{prefix}-" + hashlib.sha256("".join(digests).encode()).hexdigest()[:12]
