"""The linear-chain CRF second stage at run time: CRFsuite marginals as P(class) per token.

Why a CRF: the method papers' strongest feature model (Sahlström on VigiBase
narratives, the Swedish CRF-vs-LSTM study) and a fast alternative to the
BiLSTM for the hybrid. The combiner needs a probability per token and class,
not a best label sequence, so `predict` returns the forward-backward
marginals, one row per token in the configured class order (a class the
training data never had gets 0); P(safe) is the SAFE marginal. A text is
tagged whole, as one sequence.

The model file is CRFsuite's own (`crf.crfsuite`); its sha256 is checked
against the manifest before CRFsuite reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pycrfsuite

from deid_core.classic.features import WindowFeatures
from deid_core.classic.manifest import ClassicManifest, checked_file, load_features
from deid_core.config import DeidConfig
from deid_core.model_files import ModelError
from deid_core.rules.deidentifier import RuleAnalysis

CRF_FILE = "crf.crfsuite"


class CrfModel:
    """A loaded CRF; thread-compatible, not thread-safe (one tagger, reset per text)."""

    def __init__(self, tagger: pycrfsuite.Tagger, features: WindowFeatures, manifest: ClassicManifest) -> None:
        self.tagger = tagger
        self.features = features
        self.manifest = manifest
        self.classes = list(manifest.classes)
        index = {c: k for k, c in enumerate(self.classes)}
        labels = list(tagger.labels())
        unknown = sorted(set(labels) - set(index))
        if unknown:
            raise ModelError(f"the CRF knows labels outside the manifest's classes: {unknown}")
        #: (label, column) of every label the CRF was trained on
        self._columns = [(lab, index[lab]) for lab in labels]

    @property
    def version(self) -> str:
        return self.manifest.model_version

    @classmethod
    def load(cls, model_dir: Path, cfg: DeidConfig, *, dictionary_version: str | None = None) -> CrfModel:
        manifest = ClassicManifest.read(model_dir)
        if manifest.family != "crf":
            raise ModelError(f"{model_dir} holds a {manifest.family} model, not a CRF")
        features = load_features(model_dir, manifest, cfg, dictionary_version)
        path = checked_file(model_dir, manifest, CRF_FILE)
        tagger = pycrfsuite.Tagger()
        try:
            tagger.open(str(path))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load the CRF in {model_dir}: {type(exc).__name__}") from exc
        return cls(tagger, features, manifest)

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        """Probabilities (n_tokens, n_classes) per analysis, in `self.classes` order; rows sum to 1."""
        return [self.marginals(self.features.sequence(a)) for a in analyses]

    def marginals(self, items: list[list[str]]) -> np.ndarray:
        """Per-token marginals of one feature sequence (training scores held-out texts with it too)."""
        n = len(items)
        out = np.zeros((n, len(self.classes)), dtype=np.float64)
        if n:
            tagger = self.tagger
            tagger.set(items)
            for label, col in self._columns:
                out[:, col] = [tagger.marginal(label, t) for t in range(n)]
            sums = out.sum(axis=1, keepdims=True)
            if not np.isfinite(out).all() or (sums <= 0).any():
                raise ValueError("the CRF gave no probabilities")  # FailClosed masks the text
            out /= sums
        return out.astype(np.float32)
