"""Batched inference: rule analyses in, per-token class probabilities out.

The model is loaded once per process, on the Keras backend and device that
`deid_core.deep.backend` chose. Windows of all documents in a call are
sorted by length and packed into batches of at most
`deep.inference.batch_tokens` positions, so padding stays low whatever the
mix of short and long narratives.

What an accelerator needs, and how it is met here:

* **few shapes**: a batch is padded to a length that is a multiple of 8
  (up to the window), a power-of-two number of rows and a power-of-two
  number of distinct character rows, so the compiled function (XLA under
  JAX, a traced graph under TensorFlow) is built for a bounded set of
  shapes and reused, never once per batch (`batch_shape`);
* **each distinct word once**: within a batch each distinct character row
  (token plus post-space) is encoded once and gathered, because the
  character BiLSTM would otherwise dominate (on CPU too);
* **one copy each way per batch**: the host sends the distinct rows, their
  index per token, the words and the features; the gather and both BiLSTMs
  run in one compiled function (`Network.forward`), and only the logits
  come back.

`InferenceTimes` records where the time goes (encoding, packing, transfer,
network, the rest) for `bench/inference.py`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from deid_core.config import DeidConfig
from deid_core.deep.backend import BackendChoice, active_backend
from deid_core.deep.encoding import EncodedDoc, Encoder, char_width, pad_batch, slice_doc, stitch, window_bounds
from deid_core.deep.features import load_salutations
from deid_core.deep.manifest import VOCABULARY_FILE, WEIGHTS_FILE, ModelError, ModelManifest
from deid_core.deep.model import Network, build_network
from deid_core.deep.vocabulary import Vocabulary
from deid_core.rules.deidentifier import RuleAnalysis

log = logging.getLogger(__name__)

_LENGTH_STEP = 8
_MIN_UNIQUE = 64


def _pow2(n: int, floor: int = 1) -> int:
    """The smallest power of two >= max(n, floor)."""
    n = max(n, floor)
    return 1 << (n - 1).bit_length()


def _ladder(n: int, floor: int) -> int:
    """n rounded up on a ladder of four steps per doubling (64, 80, 96, 112, 128, 160, ...): at most 25% waste."""
    n = max(n, floor)
    step = max(1, 1 << max(0, (n - 1).bit_length() - 3))
    return -(-n // step) * step


def batch_shape(rows: int, longest: int, n_unique: int, *, window: int, batch_tokens: int) -> tuple[int, int, int]:
    """Padded (rows, length, distinct character rows) of a batch: a small fixed set of shapes.

    Length: a multiple of 8 up to the window (8 lengths for the default
    64-token window; multiples of 8 rather than powers of two because on CPU
    every padded position costs as much as a real one, and short narratives
    are common). Rows: a power of two, capped at what the token budget
    allows at that length (only the last batch of a length is partial).
    Distinct rows: from 64 on a ladder of four steps per doubling, capped
    at rows x length: the character BiLSTM runs on every padded row, so a
    power of two (up to 2x the work) measured 30% slower on a CPU core.
    """
    cap = -(-window // _LENGTH_STEP) * _LENGTH_STEP
    length = min(-(-max(longest, 1) // _LENGTH_STEP) * _LENGTH_STEP, cap)
    per_batch = max(1, batch_tokens // length)
    padded_rows = min(_pow2(rows), per_batch) if rows <= per_batch else rows
    unique = min(_ladder(n_unique, _MIN_UNIQUE), max(padded_rows * length, n_unique))
    return padded_rows, length, unique


def rows_per_batch(length: int, batch_tokens: int) -> int:
    """How many windows of a padded length one batch takes."""
    return max(1, batch_tokens // length)


@dataclass
class InferenceTimes:
    """Seconds per stage and counts, summed over calls since the last `reset`."""

    encode: float = 0.0
    pack: float = 0.0
    transfer: float = 0.0
    network: float = 0.0
    post: float = 0.0
    tokens: int = 0
    padded_tokens: int = 0
    batches: int = 0
    shapes: set[tuple[int, int, int]] = field(default_factory=set)

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def as_dict(self) -> dict[str, float | int]:
        return {"encode_s": self.encode, "pack_s": self.pack, "transfer_s": self.transfer,
                "network_s": self.network, "post_s": self.post, "tokens": self.tokens,
                "padded_tokens": self.padded_tokens, "batches": self.batches, "shapes": len(self.shapes)}


class DeepModel:
    """A loaded network with its encoder; thread-compatible, not thread-safe."""

    def __init__(self, network: Network, encoder: Encoder, manifest: ModelManifest, batch_tokens: int,
                 backend: BackendChoice | None = None) -> None:
        self.network = network
        self.encoder = encoder
        self.manifest = manifest
        self.batch_tokens = batch_tokens
        self.classes = list(manifest.classes)
        #: the backend and device the network runs on (None: Keras's own default, e.g. in tests)
        self.backend = backend
        self.times = InferenceTimes()
        #: block on the host-to-device copy to time it apart from the network (benchmarks)
        self.profile = False

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
        return cls(network, encoder, manifest, cfg.deep.inference.batch_tokens, active_backend())

    def predict(self, analyses: Sequence[RuleAnalysis]) -> list[np.ndarray]:
        """Probabilities (n_tokens, n_classes) per analysis, in `self.classes` order."""
        t0 = time.perf_counter()
        encoded = [self.encoder.encode(a) for a in analyses]
        self.times.encode += time.perf_counter() - t0
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
            _, length, _ = batch_shape(1, len(pieces[order[start]][2]), 1, window=seq.window_tokens,
                                       batch_tokens=self.batch_tokens)
            chunk = order[start : start + rows_per_batch(length, self.batch_tokens)]
            start += len(chunk)
            probs = self._run([pieces[i][2] for i in chunk])
            for row, i in enumerate(chunk):
                d_i, w_i, piece = pieces[i]
                results[(d_i, w_i)] = probs[row, : len(piece)]
        t0 = time.perf_counter()
        out: list[np.ndarray] = []
        for d_i, doc in enumerate(docs):
            bounds = doc_bounds[d_i]
            if not bounds:
                out.append(np.zeros((0, k), dtype=np.float32))
                continue
            out.append(stitch([results[(d_i, w)] for w in range(len(bounds))], bounds, len(doc)))
        self.times.post += time.perf_counter() - t0
        return out

    def _run(self, batch: Sequence[EncodedDoc]) -> np.ndarray:
        """One compiled call: logits of a batch of windows, as probabilities (rows of `batch` only)."""
        t0 = time.perf_counter()
        enc = self.encoder
        b = len(batch)
        longest = max(len(d) for d in batch)
        seq = self.manifest.sequence
        rows, length, _ = batch_shape(b, longest, 1, window=seq.window_tokens, batch_tokens=self.batch_tokens)
        arrays = pad_batch(batch, length, enc.n_chars, enc.n_features)
        if rows > b:  # padding rows: all ids 0 (padding), their outputs are dropped
            arrays = {k: np.concatenate([v, np.zeros((rows - b, *v.shape[1:]), dtype=v.dtype)]) for k, v in arrays.items()}
        flat = arrays["chars"].reshape(rows * length, enc.n_chars)
        unique, inverse = np.unique(flat, axis=0, return_inverse=True)
        n_unique = unique.shape[0]
        _, _, u_pad = batch_shape(rows, length, n_unique, window=seq.window_tokens, batch_tokens=self.batch_tokens)
        padded = np.zeros((u_pad, enc.n_chars), dtype=np.int32)
        padded[:n_unique] = unique
        inputs: dict[str, np.ndarray] = {
            "unique_chars": padded,
            "char_index": inverse.reshape(rows, length).astype(np.int32),
            "words": arrays["words"],
        }
        if enc.n_features:
            inputs["features"] = arrays["features"]
        times = self.times
        times.shapes.add((rows, length, u_pad))
        times.batches += 1
        times.tokens += sum(len(d) for d in batch)
        times.padded_tokens += rows * length
        t1 = time.perf_counter()
        times.pack += t1 - t0
        if self.profile:
            from deid_core.deep.backend import to_device

            inputs = to_device(inputs)  # type: ignore[assignment]
            t2 = time.perf_counter()
            times.transfer += t2 - t1
            t1 = t2
        logits = np.asarray(self.network.forward.predict_on_batch(inputs), dtype=np.float32)[:b]
        t2 = time.perf_counter()
        times.network += t2 - t1
        lengths = np.fromiter((len(d) for d in batch), dtype=np.int64, count=b)
        if self.network.crf is None and self.manifest.temperature != 1.0:
            logits = logits / np.float32(self.manifest.temperature)  # calibrated softmax, same argmax
        probs = self.network.probabilities(logits, lengths)
        times.post += time.perf_counter() - t2
        return probs
