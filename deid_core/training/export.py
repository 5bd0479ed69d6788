"""Writing a model directory: weights, vocabulary, manifest (atomically per file)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path

import keras

from deid_core.config import ArchitectureConfig, SequenceConfig
from deid_core.corpus.atomic import atomic_text_writer
from deid_core.deep.encoding import char_width
from deid_core.deep.features import arch_feature_names
from deid_core.deep.manifest import VOCABULARY_FILE, WEIGHTS_FILE, ModelManifest, file_sha256, model_version
from deid_core.deep.model import Network, build_network
from deid_core.deep.vocabulary import Vocabulary


def save_model(
    network: Network,
    vocabulary: Vocabulary,
    arch: ArchitectureConfig,
    seq: SequenceConfig,
    classes: Sequence[str],
    out: Path,
    *,
    dictionary_version: str,
    dictionary_sha256: str,
) -> ModelManifest:
    """Save and return the manifest; the model version is derived from the content."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ("." + WEIGHTS_FILE + ".tmp.weights.h5")
    # A compiled model would also save Adam's two moment tensors per weight
    # (3x the file); inference needs the weights only.
    clean = build_network(
        arch,
        n_words=vocabulary.n_words,
        n_chars=vocabulary.n_chars,
        char_width=char_width(arch),
        n_features=len(arch_feature_names(arch)),
        n_classes=len(classes),
    )
    clean.tagger.set_weights(network.tagger.get_weights())
    clean.tagger.save_weights(tmp)
    os.replace(tmp, out / WEIGHTS_FILE)
    with atomic_text_writer(out / VOCABULARY_FILE) as fh:
        fh.write(vocabulary.to_json())
    manifest = ModelManifest(
        model_version=model_version(vocabulary.sha256, file_sha256(out / WEIGHTS_FILE)),
        created=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        architecture=arch,
        sequence=seq,
        classes=list(classes),
        feature_names=list(arch_feature_names(arch)),
        char_width=char_width(arch),
        vocabulary_sha256=vocabulary.sha256,
        n_words=vocabulary.n_words,
        n_chars=vocabulary.n_chars,
        dictionary_version=dictionary_version,
        dictionary_sha256=dictionary_sha256,
        keras_version=keras.__version__,
    )
    manifest.write(out)
    return manifest
