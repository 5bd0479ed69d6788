"""The linear SVM second stage at run time: calibrated one-vs-rest scores as P(class) per token.

Why an SVM: Sahlström's VigiBase study found a linear SVM over window features
(LIBLINEAR) at least as good as the CRF on recall; scikit-learn's `LinearSVC`
is the same LIBLINEAR. An SVM gives margins, not probabilities, so each
class's margin goes through its Platt sigmoid, fitted at training on
out-of-fold margins, and the class probabilities are normalised to sum to 1
(scikit-learn's multi-class sigmoid calibration, applied here by hand).

Why no pickle or joblib: loading either runs code from the file. A model is
plain arrays (`svm.npz`, read with `allow_pickle=False`) and the feature
names of its columns (`feature_index.json`); scoring is one sparse product
(scipy.sparse, as scikit-learn's own `decision_function` does) and numpy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.special import expit

from deid_core.classic.features import WindowFeatures
from deid_core.classic.manifest import ClassicManifest, checked_file, load_features
from deid_core.config import DeidConfig
from deid_core.model_files import ModelError
from deid_core.rules.deidentifier import RuleAnalysis

WEIGHTS_FILE = "svm.npz"
FEATURE_INDEX_FILE = "feature_index.json"


@dataclass
class SvmParameters:
    """A fitted, calibrated linear SVM as arrays.

    `coef` (m, F) and `intercept` (m,) give the margins; `platt_a`, `platt_b`
    (m,) the sigmoids P = 1 / (1 + exp(a * margin + b)); `columns` (the
    classes the SVM saw, as columns of the manifest's class order). With two
    classes m is 1: the margin is the second class's, the first gets 1 - P.
    """

    coef: np.ndarray
    intercept: np.ndarray
    platt_a: np.ndarray
    platt_b: np.ndarray
    columns: np.ndarray

    def __post_init__(self) -> None:
        m = self.coef.shape[0]
        binary = len(self.columns) == 2
        if self.coef.ndim != 2 or m != (1 if binary else len(self.columns)) or len(self.columns) < 2:
            raise ValueError("coefficients do not match the classes")
        if not (self.intercept.shape == self.platt_a.shape == self.platt_b.shape == (m,)):
            raise ValueError("intercepts or sigmoids do not match the coefficients")

    def probabilities(self, x: sparse.csr_matrix, n_classes: int) -> np.ndarray:
        """(n, n_classes) probabilities of the rows of `x`; classes the SVM never saw get 0."""
        margins = np.asarray(x @ self.coef.T, dtype=np.float64) + self.intercept
        p = expit(-(self.platt_a * margins + self.platt_b))
        out = np.zeros((x.shape[0], n_classes), dtype=np.float64)
        if len(self.columns) == 2:
            out[:, self.columns[1]] = p[:, 0]
            out[:, self.columns[0]] = 1.0 - p[:, 0]
            return out
        sums = p.sum(axis=1, keepdims=True)
        # every sigmoid at 0: no class is favoured, as scikit-learn answers then
        p = np.divide(p, sums, out=np.full_like(p, 1.0 / len(self.columns)), where=sums > 0)
        out[:, self.columns] = p
        return out

    def save(self, path: Path) -> None:
        with path.open("wb") as fh:
            np.savez_compressed(fh, coef=self.coef, intercept=self.intercept, platt_a=self.platt_a,
                                platt_b=self.platt_b, columns=self.columns)

    @classmethod
    def load(cls, path: Path) -> SvmParameters:
        with np.load(path, allow_pickle=False) as data:
            return cls(coef=data["coef"], intercept=data["intercept"], platt_a=data["platt_a"],
                       platt_b=data["platt_b"], columns=data["columns"])


def feature_matrix(rows: Sequence[Sequence[str]], index: dict[str, int]) -> sparse.csr_matrix:
    """Binary (n, F) matrix of feature lists; features outside `index` are dropped."""
    indptr = [0]
    cols: list[int] = []
    for feats in rows:
        cols.extend(sorted({index[f] for f in feats if f in index}))
        indptr.append(len(cols))
    data = np.ones(len(cols), dtype=np.float64)
    return sparse.csr_matrix((data, np.asarray(cols, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                             shape=(len(rows), len(index)))


class SvmModel:
    """A loaded SVM; stateless once loaded, so thread-safe."""

    def __init__(self, params: SvmParameters, index: dict[str, int], features: WindowFeatures,
                 manifest: ClassicManifest) -> None:
        self.params = params
        self.index = index
        self.features = features
        self.manifest = manifest
        self.classes = list(manifest.classes)
        if params.coef.shape[1] != len(index):
            raise ModelError("the SVM's coefficients do not match its feature index")
        if params.columns.min() < 0 or params.columns.max() >= len(self.classes):
            raise ModelError("the SVM names classes outside the manifest's")

    @property
    def version(self) -> str:
        return self.manifest.model_version

    @classmethod
    def load(cls, model_dir: Path, cfg: DeidConfig, *, dictionary_version: str | None = None) -> SvmModel:
        manifest = ClassicManifest.read(model_dir)
        if manifest.family != "svm":
            raise ModelError(f"{model_dir} holds a {manifest.family} model, not an SVM")
        features = load_features(model_dir, manifest, cfg, dictionary_version)
        try:
            names = json.loads(checked_file(model_dir, manifest, FEATURE_INDEX_FILE).read_text(encoding="utf-8"))
            params = SvmParameters.load(checked_file(model_dir, manifest, WEIGHTS_FILE))
        except ModelError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"cannot load the SVM in {model_dir}: {type(exc).__name__}") from exc
        if not isinstance(names, list) or len(set(names)) != len(names):
            raise ModelError(f"the feature index in {model_dir} is not a list of distinct names")
        return cls(params, {str(n): i for i, n in enumerate(names)}, features, manifest)

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        """Probabilities (n_tokens, n_classes) per analysis, in `self.classes` order; rows sum to 1."""
        seqs = [self.features.sequence(a) for a in analyses]
        rows = [feats for seq in seqs for feats in seq]
        k = len(self.classes)
        if not rows:
            return [np.zeros((0, k), dtype=np.float32) for _ in analyses]
        probs = self.params.probabilities(feature_matrix(rows, self.index), k)
        if not np.isfinite(probs).all():
            raise ValueError("the SVM gave no probabilities")  # FailClosed masks the text
        probs = probs.astype(np.float32)
        out: list[np.ndarray] = []
        start = 0
        for seq in seqs:
            out.append(probs[start:start + len(seq)])
            start += len(seq)
        return out
