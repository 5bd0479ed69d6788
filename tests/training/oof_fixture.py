"""A one-fold out-of-fold scores folder (two tokens), for tests of how the threshold search pools or refuses it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from deid_core.training.out_of_fold import file_sha256, write_index
from deid_core.training.tuning import TokenScores


def one_fold_oof(oof: Path, feature_names: Sequence[str] | None = None) -> Path:
    """Write `oof/fold-0.npz` and its index (a BiLSTM's, as `jobs.oof_scores` writes without `--family`).

    `feature_names`: the fold networks' input layout to record (none: a folder from before it was recorded).
    """
    TokenScores(gold_phi=np.array([True, False]), rules_unsafe=np.array([True, True]),
                never_release=np.zeros(2, dtype=bool), p_safe=np.array([0.1, 0.9]),
                families=np.array(["unknown", "unknown"], dtype=object)).save(oof / "fold-0.npz")
    write_index(oof, setup="t", folds_total=1, fold_key="^[^-]+", corpora="train.jsonl",
                entries=[{"fold": 0, "scores": "fold-0.npz", "sha256": file_sha256(oof / "fold-0.npz")}],
                feature_names=feature_names)
    return oof
