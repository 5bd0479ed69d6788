"""One loader for every model family of the hybrid's second stage.

Why: `deid detect/eval --method deep|hybrid --model DIR`, the Spark job and
the threshold search take a model directory, and it may hold the BiLSTM
(`deid_core.deep`), a CRF or an SVM (`deid_core.classic`). The manifest
names the family (none named: a BiLSTM, as every model before the field);
`load_model` imports only that family's code, so loading a CRF or SVM
never imports Keras or JAX, and every family answers the same `TokenModel`
calls the detector and the combiner make.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from deid_core.config import DeidConfig
from deid_core.model_files import ManifestBase, ModelError, manifest_family
from deid_core.rules.deidentifier import RuleAnalysis


class TokenModel(Protocol):
    """What `NetworkDetector` and the combiner use of a model, whatever its family."""

    classes: list[str]
    manifest: ManifestBase

    @property
    def version(self) -> str: ...

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        """(n_tokens, n_classes) probabilities per analysis, in `classes` order (column 0: SAFE)."""
        ...


def read_manifest(model_dir: Path) -> ManifestBase:
    """The manifest of a model directory of any family; ModelError when missing or invalid."""
    family = manifest_family(model_dir)
    if family == "bilstm":
        from deid_core.deep.manifest import ModelManifest

        return ModelManifest.read(model_dir)
    if family == "ensemble":
        from deid_core.ensemble import EnsembleManifest

        return EnsembleManifest.read(model_dir)
    from deid_core.classic.manifest import ClassicManifest

    return ClassicManifest.read(model_dir)


def load_model(model_dir: Path, cfg: DeidConfig, *, dictionary_version: str | None = None,
               allow_ensemble: bool = True) -> TokenModel:
    """Load the model a directory holds, once; ModelError when it cannot be used (the caller fails closed).

    `allow_ensemble=False` is how an ensemble loads its members: an ensemble of ensembles is refused.
    """
    family = manifest_family(model_dir)
    if family == "ensemble":
        if not allow_ensemble:
            raise ModelError(f"{model_dir} is an ensemble; an ensemble's members must be single models")
        from deid_core.ensemble import EnsembleModel

        return EnsembleModel.load(model_dir, cfg, dictionary_version=dictionary_version)
    if family == "crf":
        from deid_core.classic.crf import CrfModel

        return CrfModel.load(model_dir, cfg, dictionary_version=dictionary_version)
    if family == "svm":
        from deid_core.classic.svm import SvmModel

        return SvmModel.load(model_dir, cfg, dictionary_version=dictionary_version)
    from deid_core.deep.backend import ensure_backend

    # before Keras is first imported: the backend is chosen once per process
    inf = cfg.deep.inference
    ensure_backend(inf.backend, inf.device, compile_cache_dir=inf.compile_cache_dir)
    from deid_core.deep.predictor import DeepModel  # heavy import: only for the network

    return DeepModel.load(model_dir, cfg, dictionary_version=dictionary_version)
