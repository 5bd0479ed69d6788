"""A second stage made of several models of any family: the weighted mean of their probabilities.

Why: the BiLSTM, the feature CRF and the linear SVM make different mistakes
(the network reads characters and context vectors, the CRF and the SVM read
explicit window features), so the mean of their class probabilities ranks
PHI against safe tokens better than any one of them. Measured on PhysioNet
dev + the annotated VAERS dev part with thresholds from held-out folds (see
docs/measurements.md, "Cross-family ensembles"). The combiner and the
threshold search see one model: `predict` returns one probability row per
token in the shared class order, and the ensemble's own manifest carries the
thresholds tuned on those mean probabilities.

An ensemble directory holds only `manifest.json`. Each member is a model
directory named by a path relative to the ensemble's, with the model version
it was built from: a member retrained since (another version) or missing is
refused at load with a `ModelError`, so thresholds tuned on one set of
members are never applied to another. Members must share the class order
and the dictionary version.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from deid_core.config import DeidConfig
from deid_core.model_files import ManifestBase, ModelError, content_version
from deid_core.rules.deidentifier import RuleAnalysis


class Member(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: the member's model directory, relative to the ensemble's (or absolute)
    path: str
    model_version: str
    weight: float = Field(gt=0.0)


class EnsembleManifest(ManifestBase):
    FAMILIES_READ: ClassVar[tuple[str, ...]] = ("ensemble",)

    family: Literal["ensemble"]  # type: ignore[assignment]
    members: list[Member] = Field(min_length=1)


def member_dir(ensemble_dir: Path, member: Member) -> Path:
    p = Path(member.path)
    return p if p.is_absolute() else (ensemble_dir / p).resolve()


def parse_weighted(spec: str) -> tuple[Path, float]:
    """"DIR" or "DIR:WEIGHT" -> (path, weight); a folder whose name holds ':' is taken whole when it exists.

    ValueError when the part after the last ':' is not a number.
    """
    if ":" not in spec or Path(spec).exists():
        return Path(spec), 1.0
    path, _, weight = spec.rpartition(":")
    try:
        return Path(path), float(weight)
    except ValueError:
        raise ValueError(f"{spec!r}: the weight after ':' is not a number") from None


def member_families(model_dir: Path) -> list[tuple[str, float]]:
    """(family, weight) of each member, in order: what an ensemble's out-of-fold scores must match."""
    from deid_core.models import read_manifest  # the family loader, which imports this module lazily

    manifest = EnsembleManifest.read(model_dir)
    return [(read_manifest(member_dir(model_dir, m)).family, m.weight) for m in manifest.members]


def ensemble_version(members: Sequence[Member]) -> str:
    """Content-derived: the same members with the same weights give the same version."""
    return content_version("ens", *(f"{m.model_version}:{m.weight!r};" for m in members))


class EnsembleModel:
    """Loaded members and their weights; `predict` is the weighted mean of the members' rows."""

    def __init__(self, members: list[tuple[object, float]], manifest: EnsembleManifest) -> None:
        self.members = members
        self.manifest = manifest
        self.classes = list(manifest.classes)
        total = sum(w for _, w in members)
        self._weights = [w / total for _, w in members]

    @property
    def version(self) -> str:
        return self.manifest.model_version

    @classmethod
    def load(cls, model_dir: Path, cfg: DeidConfig, *, dictionary_version: str | None = None) -> EnsembleModel:
        from deid_core.models import load_model  # the members' loader (an ensemble of ensembles is refused)

        manifest = EnsembleManifest.read(model_dir)
        if manifest.model_version != ensemble_version(manifest.members):
            raise ModelError(f"the ensemble manifest in {model_dir} does not match its members' versions")
        loaded: list[tuple[object, float]] = []
        for m in manifest.members:
            path = member_dir(model_dir, m)
            model = load_model(path, cfg, dictionary_version=dictionary_version, allow_ensemble=False)
            if model.version != m.model_version:
                raise ModelError(f"ensemble member {m.path} is {model.version}, the ensemble was built on "
                                 f"{m.model_version}: rebuild the ensemble and tune its thresholds again")
            if list(model.classes) != list(manifest.classes):
                raise ModelError(f"ensemble member {m.path} has another class order than the ensemble")
            loaded.append((model, m.weight))
        return cls(loaded, manifest)

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        """(n_tokens, n_classes) per analysis: the members' weighted mean, rows summing to 1."""
        outs = [model.predict(analyses) for model, _ in self.members]  # type: ignore[attr-defined]
        result: list[np.ndarray] = []
        for rows in zip(*outs, strict=True):
            mean = sum(w * r.astype(np.float64) for w, r in zip(self._weights, rows, strict=True))
            if not np.isfinite(mean).all():
                raise ValueError("an ensemble member gave no probabilities")  # FailClosed masks the text
            result.append(np.asarray(mean, dtype=np.float32))
        return result


def write_ensemble(out: Path, members: Sequence[tuple[Path, float]]) -> EnsembleManifest:
    """Write an ensemble directory over existing model directories (no thresholds yet: tune them next).

    Member paths are stored relative to `out` when they share a root with it,
    so a folder holding the ensemble and its members can be moved whole.
    """
    from deid_core.models import read_manifest  # the family loader, which imports this module lazily

    if not members:
        raise ModelError("an ensemble needs at least one member")
    out.mkdir(parents=True, exist_ok=True)
    entries: list[Member] = []
    manifests = []
    for path, weight in members:
        m = read_manifest(path)
        if m.family == "ensemble":
            raise ModelError(f"{path} is an ensemble; an ensemble's members must be single models")
        manifests.append(m)
        try:
            rel = os.path.relpath(path.resolve(), out.resolve())
        except ValueError:  # another drive (Windows): keep the absolute path
            rel = str(path.resolve())
        entries.append(Member(path=rel, model_version=m.model_version, weight=weight))
    first = manifests[0]
    for m in manifests[1:]:
        if m.classes != first.classes:
            raise ModelError("ensemble members must share the class order")
        if m.dictionary_version != first.dictionary_version:
            raise ModelError("ensemble members must be built on the same dictionary version")
    features = list(dict.fromkeys(f for m in manifests for f in m.feature_names))
    manifest = EnsembleManifest(
        family="ensemble", model_version=ensemble_version(entries), created=datetime.now(timezone.utc).isoformat(),
        classes=first.classes, feature_names=features, dictionary_version=first.dictionary_version,
        dictionary_sha256=first.dictionary_sha256, members=entries,
        training={"members": [{"family": m.family, "model_version": m.model_version,
                               "fit_seconds": m.training.get("fit_seconds")} for m in manifests],
                  "fit_seconds": sum(float(m.training.get("fit_seconds") or 0.0) for m in manifests)},
    )
    manifest.write(out)
    return manifest
