"""Out-of-fold scores on disk: what `jobs.oof_scores` writes and the threshold search reads.

Why apart from the job: the threshold search (`deid tune-thresholds`, the
training job's tuning step) only needs to read and check the scores; it must
not pull in Spark or the training loop to do so.

A folder holds `fold-<k>.npz` (`TokenScores.save`) per fold and `oof.json`:
the setup key that made them, the split, and a sha256 per fold file, so a
changed or half-written file is refused instead of being pooled.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deid_core.training.tuning import TokenScores

OOF_INDEX = "oof.json"


@dataclass(frozen=True)
class OutOfFold:
    """One `TokenScores` per fold, the index that describes them, and a name for manifests."""

    folds: list[TokenScores]
    name: str
    index: dict[str, Any]

    @property
    def family(self) -> str:
        """The model family whose scores these are (folders written before families existed: the network's)."""
        return str(self.index.get("family", "bilstm"))

    @property
    def pooled(self) -> TokenScores:
        return TokenScores.concatenate(self.folds)

    def check_family(self, family: str, members: Sequence[tuple[str, float]] | None = None) -> None:
        """ValueError unless these are scores of a model of `family`: another model's P(safe) tunes nothing.

        An ensemble's scores tune only an ensemble of the same member families with the same
        (normalised) weights, in the same order: `members` lists the model's (family, weight).
        """
        if self.family != family:
            raise ValueError(f"these out-of-fold scores are a {self.family} model's, the model to tune is a "
                             f"{family} model: pool scores of its own family (jobs.oof_scores --family {family})")
        if family == "ensemble":
            mine = _normalised([(str(m["family"]), float(m["weight"])) for m in self.index.get("members", [])])
            theirs = _normalised(list(members or []))
            if [f for f, _ in mine] != [f for f, _ in theirs] or not all(
                    abs(a - b) < 1e-9 for (_, a), (_, b) in zip(mine, theirs, strict=True)):
                raise ValueError(f"these out-of-fold scores are of an ensemble of {mine}, the model to tune is "
                                 f"an ensemble of {theirs}: make its own (jobs.oof_scores --family ensemble)")

    def check_model(self, model_dir: Path) -> None:
        """`check_family` for the model in `model_dir` (an ensemble: its members' families and weights too),
        and for a network `check_inputs` with its input layout."""
        from deid_core.ensemble import member_families
        from deid_core.models import read_manifest

        manifest = read_manifest(model_dir)
        family = manifest.family
        self.check_family(family, member_families(model_dir) if family == "ensemble" else None)
        if family == "bilstm":
            self.check_inputs(list(getattr(manifest, "feature_names", [])))

    def check_inputs(self, feature_names: Sequence[str]) -> None:
        """ValueError unless the fold networks read the same per-token inputs as the model to tune.

        A network that reads which pattern matched (`rule_categories`) scores other tokens high
        than one that does not: the folds' scores would tune the wrong operating point. Folders
        written before the layout was recorded are of networks without those inputs.
        """
        from deid_core.deep.features import FAMILY_FEATURES

        recorded = self.index.get("feature_names")
        if recorded is None:
            if set(FAMILY_FEATURES) & set(feature_names):
                raise ValueError("these out-of-fold scores are of networks without the rule-category inputs, "
                                 "the model to tune reads them: make its own (jobs.oof_scores with its config)")
        elif list(recorded) != list(feature_names):
            raise ValueError("these out-of-fold scores are of networks with other per-token inputs than the "
                             "model to tune: make its own (jobs.oof_scores with its config)")

    def pooled_with(self, scores: TokenScores, name: str) -> tuple[TokenScores, str]:
        """A tuning set's scores with these appended, and the pooled set's name for the manifest."""
        return TokenScores.concatenate([scores, self.pooled]), f"{name}+{self.name}"


def _normalised(members: list[tuple[str, float]]) -> list[tuple[str, float]]:
    total = sum(w for _, w in members) or 1.0
    return [(f, w / total) for f, w in members]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_oof(folder: Path) -> OutOfFold:
    """Load a folder of out-of-fold scores; ValueError if it is missing, incomplete or changed."""
    index_path = folder / OOF_INDEX
    if not index_path.exists():
        raise ValueError(f"no {OOF_INDEX} in {folder}: run `python -m jobs.oof_scores --out {folder}`")
    index = json.loads(index_path.read_text(encoding="utf-8"))
    if len(index.get("folds", [])) != index.get("folds_total"):
        raise ValueError(f"{folder} holds {len(index.get('folds', []))} of {index.get('folds_total')} folds: "
                         "the run did not finish")
    parts = []
    for f in index["folds"]:
        path = folder / f["scores"]
        if not path.exists() or file_sha256(path) != f["sha256"]:
            raise ValueError(f"out-of-fold scores {path.name} missing or changed since {OOF_INDEX} was written")
        parts.append(TokenScores.load(path))
    family = index.get("family", "bilstm")
    tag = "" if family == "bilstm" else f"{family};"
    name = f"oof({tag}{index['corpora']};{len(parts)}folds;{index['sha256'][:12]})"
    return OutOfFold(parts, name, index)


def write_index(folder: Path, *, setup: str, folds_total: int, fold_key: str, corpora: str,
                entries: list[dict[str, Any]], family: str = "bilstm",
                members: list[dict[str, Any]] | None = None, feature_names: Sequence[str] | None = None) -> None:
    """Record the finished folds; the combined hash names the whole set in manifests.

    `members`: an ensemble's member families, weights and the out-of-fold setups they came from.
    `feature_names`: the fold networks' per-token input layout (`OutOfFold.check_inputs`).
    """
    entries = sorted(entries, key=lambda e: e["fold"])
    h = hashlib.sha256()
    for e in entries:
        h.update(e["sha256"].encode())
    index: dict[str, Any] = {"setup": setup, "family": family, "folds_total": folds_total, "fold_key": fold_key,
                             "corpora": corpora, "sha256": h.hexdigest(), "folds": entries}
    if members is not None:
        index["members"] = members
    if feature_names is not None:
        index["feature_names"] = list(feature_names)
    (folder / OOF_INDEX).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
