"""The manifest of a CRF or SVM model directory, and the checks every load makes.

Why: a classical model is only valid with the exact window features it was
trained on and the lexicon that decides which words it may name. The manifest
adds those to the fields every family shares (`deid_core.model_files`): the
window radius and affix lengths, the lexicon's hash, and the sha256 of each
model file, checked before a file is handed to CRFsuite or numpy, so a
truncated or swapped file is refused with a `ModelError` instead of being read.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from deid_core.classic.features import Lexicon, WindowFeatures
from deid_core.config import DeidConfig
from deid_core.deep.features import load_salutations
from deid_core.model_files import ManifestBase, ModelError, file_sha256

LEXICON_FILE = "lexicon.json"
FORMAT_VERSION = 1

log = logging.getLogger(__name__)


class ClassicManifest(ManifestBase):
    FAMILIES_READ: ClassVar[tuple[str, ...]] = ("crf", "svm")

    format_version: int = FORMAT_VERSION
    family: Literal["crf", "svm"]
    window_radius: int = Field(ge=0)
    affix_lengths: list[int]
    lexicon_sha256: str
    #: sha256 of every file the model reads (the lexicon included), checked at load
    files: dict[str, str]
    #: python-crfsuite or scikit-learn version that trained it
    library_version: str = ""


def checked_file(model_dir: Path, manifest: ClassicManifest, name: str) -> Path:
    """The path of a model file whose content is the one the manifest recorded; ModelError otherwise."""
    path = model_dir / name
    expected = manifest.files.get(name)
    if expected is None:
        raise ModelError(f"the manifest in {model_dir} records no {name}")
    try:
        found = file_sha256(path)
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {type(exc).__name__}") from exc
    if found != expected:
        raise ModelError(f"{path} is not the file its manifest records (sha256 differs): retrain or restore it")
    return path


def load_features(model_dir: Path, manifest: ClassicManifest, cfg: DeidConfig,
                  dictionary_version: str | None) -> WindowFeatures:
    """The window features a model was trained with; refuses another layout or a changed lexicon."""
    path = checked_file(model_dir, manifest, LEXICON_FILE)
    try:
        lexicon = Lexicon.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"cannot read the lexicon in {model_dir}: {type(exc).__name__}") from exc
    if lexicon.sha256 != manifest.lexicon_sha256:
        raise ModelError(f"lexicon in {model_dir} does not match its manifest")
    features = WindowFeatures(lexicon, load_salutations(cfg), radius=manifest.window_radius,
                              affix_lengths=manifest.affix_lengths)
    if features.names != manifest.feature_names:
        raise ModelError("the model was trained with another feature layout; retrain or use a matching release")
    if dictionary_version is not None and dictionary_version != manifest.dictionary_version:
        # as for the network: a site's own allow/deny lists legitimately change the dictionary features
        log.warning("dictionary artifact %s differs from the one the model was trained with (%s)",
                    dictionary_version, manifest.dictionary_version)
    return features
