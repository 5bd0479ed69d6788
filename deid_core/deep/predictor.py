"""Batched inference: rule analyses in, per-token class probabilities out.

The model is loaded once per process. Windows of all documents in a call
are sorted by length and packed into batches of at most
`inference_batch_tokens` positions, so padding stays low whatever the mix
of short and long narratives. Within a batch each distinct character row
(token plus post-space) is encoded once and gathered, because the
character BiLSTM would otherwise dominate CPU time on repetitive text.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from deid_core.config import DeidConfig, read_word_list
from deid_core.deep.encoding import EncodedDoc, Encoder, char_width, pad_batch, slice_doc, stitch, window_bounds
from deid_core.deep.manifest import VOCABULARY_FILE, WEIGHTS_FILE, ModelError, ModelManifest
from deid_core.deep.model import Network, build_network
from deid_core.deep.vocabulary import Vocabulary
from deid_core.rules.deidentifier import RuleAnalysis

log = logging.getLogger(__name__)

_LENGTH_STEP = 8
_UNIQUE_STEP = 64


def _round_up(n: int, step: int) -> int:
    return max(step, -(-n // step) * step)


def load_salutations(cfg: DeidConfig) -> frozenset[str]:
    return frozenset(w.lower().rstrip(".") for w in read_word_list(cfg.rules.salutations))


class DeepModel:
    """A loaded network with its encoder; thread-compatible, not thread-safe."""

    def __init__(self, network: Network, encoder: Encoder, manifest: ModelManifest, batch_tokens: int) -> None:
        self.network = network
        self.encoder = encoder
        self.manifest = manifest
        self.batch_tokens = batch_tokens
        self.classes = list(manifest.classes)

    @property
    def version(self) -> str:
        return self.manifest.model_version

    @classmethod
    def load(cls, model_dir: Path, cfg: DeidConfig, *, dictionary_version: str | None = None) -> DeepModel:
        manifest = ModelManifest.read(model_dir)
        try:
            vocab = Vocabulary.from_json((model_dir / VOCABULARY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot read the vocabulary in {model_dir}: {type(exc).__name__}") from exc
        if vocab.sha256 != manifest.vocabulary_sha256:
            raise ModelError(f"vocabulary in {model_dir} does not match its manifest")
        encoder = Encoder(vocab, manifest.architecture, manifest.classes, load_salutations(cfg))
        if list(encoder.feature_names) != manifest.feature_names:
            raise ModelError("the model was trained with another feature layout; retrain or use a matching release")
        if char_width(manifest.architecture) != manifest.char_width:
            raise ModelError("the model's character width does not match its architecture")
        if dictionary_version is not None and dictionary_version != manifest.dictionary_version:
            # Features come from the dictionaries; a site's own allow/deny
            # lists legitimately change them, so this is a warning, not a refusal.
            log.warning(
                "dictionary artifact %s differs from the one the model was trained with (%s)",
                dictionary_version,
                manifest.dictionary_version,
            )
        network = build_network(
            manifest.architecture,
            n_words=manifest.n_words,
            n_chars=manifest.n_chars,
            char_width=manifest.char_width,
            n_features=len(manifest.feature_names),
            n_classes=len(manifest.classes),
        )
        try:
            network.tagger.load_weights(model_dir / WEIGHTS_FILE)
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load the weights in {model_dir}: {type(exc).__name__}") from exc
        return cls(network, encoder, manifest, cfg.deep.inference_batch_tokens)

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        """Probabilities (n_tokens, n_classes) per analysis, in `self.classes` order."""
        encoded = [self.encoder.encode(a) for a in analyses]
        return self.predict_encoded(encoded)

    def predict_encoded(self, docs: Sequence[EncodedDoc]) -> list[np.ndarray]:
        seq = self.manifest.sequence
        k = len(self.classes)
        pieces: list[tuple[int, int, EncodedDoc]] = []
        doc_bounds: list[list[tuple[int, int]]] = []
        for d_i, doc in enumerate(docs):
            bounds = window_bounds(len(doc), seq.window_tokens, seq.overlap) if len(doc) else []
            doc_bounds.append(bounds)
            for w_i, (s, e) in enumerate(bounds):
                pieces.append((d_i, w_i, slice_doc(doc, s, e)))
        results: dict[tuple[int, int], np.ndarray] = {}
        order = sorted(range(len(pieces)), key=lambda i: -len(pieces[i][2]))
        start = 0
        while start < len(order):
            length = _round_up(len(pieces[order[start]][2]), _LENGTH_STEP)
            per_batch = max(1, self.batch_tokens // length)
            chunk = order[start : start + per_batch]
            start += len(chunk)
            probs = self._run([pieces[i][2] for i in chunk], length)
            for row, i in enumerate(chunk):
                d_i, w_i, piece = pieces[i]
                results[(d_i, w_i)] = probs[row, : len(piece)]
        out: list[np.ndarray] = []
        for d_i, doc in enumerate(docs):
            bounds = doc_bounds[d_i]
            if not bounds:
                out.append(np.zeros((0, k), dtype=np.float32))
                continue
            out.append(stitch([results[(d_i, w)] for w in range(len(bounds))], bounds, len(doc)))
        return out

    def _run(self, batch: Sequence[EncodedDoc], length: int) -> np.ndarray:
        enc = self.encoder
        arrays = pad_batch(batch, length, enc.n_chars, enc.n_features)
        b = len(batch)
        flat = arrays["chars"].reshape(b * length, enc.n_chars)
        unique, inverse = np.unique(flat, axis=0, return_inverse=True)
        n_unique = unique.shape[0]
        padded = np.zeros((_round_up(n_unique, _UNIQUE_STEP), enc.n_chars), dtype=np.int32)
        padded[:n_unique] = unique
        vectors = np.asarray(self.network.char_encoder.predict_on_batch(padded))[:n_unique]
        char_vectors = vectors[inverse.reshape(-1)].reshape(b, length, -1)
        inputs = {"words": arrays["words"], "char_vectors": char_vectors}
        if enc.n_features:
            inputs["features"] = arrays["features"]
        logits = np.asarray(self.network.sequence.predict_on_batch(inputs), dtype=np.float32)
        lengths = np.fromiter((len(d) for d in batch), dtype=np.int64, count=b)
        if self.network.crf is None and self.manifest.temperature != 1.0:
            logits = logits / np.float32(self.manifest.temperature)  # calibrated softmax, same argmax
        return self.network.probabilities(logits, lengths)
