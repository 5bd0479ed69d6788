"""The deep de-identifier network (Dernoncourt et al. 2017; thesis ch. 4.3).

Characters of each token (optionally followed by its post-space characters)
go through a character BiLSTM; its final states are concatenated with a
token embedding and the extra features, then dropout and a token BiLSTM
give per-token logits over SAFE and the PHI classes. Heads:

* ``softmax``: per-token class-weighted cross-entropy (the default);
* ``crf``: a linear-chain CRF trained on sequence likelihood, whose
  forward-backward marginals give P(safe) for the combiner;
* ``window``: the Anonimatik-style baseline, a BiLSTM over each token's
  9-token window instead of the whole sequence.

The model is split into a character encoder and a sequence model so that
inference can encode each distinct (token, post-space) string once per batch
and gather, which is where most of the CPU time would otherwise go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
from keras import ops

from deid_core.config import ArchitectureConfig
from deid_core.deep.crf import LinearChainCRF
from deid_core.deep.layers import (
    FoldTokens,
    GatherRows,
    NeighbourWindows,
    NonPadMask,
    TrainedPart,
    TrainedWordIds,
    UnfoldTokens,
    ZeroPadding,
)


class Tagger(keras.Model):
    """The trainable end-to-end model; with a CRF head it trains on sequence likelihood."""

    def __init__(self, *args: Any, crf: LinearChainCRF | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crf = crf

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):  # type: ignore[no-untyped-def,override]
        if self.crf is None:
            return super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
        mask = ops.greater(sample_weight, 0) if sample_weight is not None else NonPadMask()(x["words"])
        ll = self.crf.log_likelihood(y_pred, ops.cast(y, "int32"), mask)
        tokens = ops.maximum(ops.sum(ops.cast(mask, "float32")), 1.0)
        loss = -ops.sum(ll) / tokens
        extra = [ops.sum(v) for v in self.losses]
        return loss + sum(extra) if extra else loss


class CRFMarginals(keras.layers.Layer):
    """Forward-backward marginals with a trained CRF's weights, as a layer so it compiles."""

    def __init__(self, crf: LinearChainCRF, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.crf = crf

    # not named `mask`: Keras treats an argument of that name as an implicit mask
    def call(self, logits: Any, valid: Any) -> Any:
        return self.crf.marginals(logits, valid)

    def compute_output_shape(self, logits_shape: tuple, valid_shape: tuple) -> tuple:
        return logits_shape


@dataclass
class Network:
    """The views of one set of weights.

    `tagger` trains end to end; `forward` is what inference calls: distinct
    character rows, the index of each token's row, words and features in,
    logits out, as one compiled function per padded shape.
    """

    tagger: Tagger
    char_encoder: keras.Model
    sequence: keras.Model
    crf: LinearChainCRF | None
    forward: keras.Model
    _marginals: keras.Model | None = None

    def probabilities(self, logits: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Class probabilities per token: softmax, or CRF marginals."""
        if self.crf is None:
            z = logits - logits.max(axis=-1, keepdims=True)
            e = np.exp(z)
            return e / e.sum(axis=-1, keepdims=True)
        if self._marginals is None:
            k = logits.shape[-1]
            lg = keras.Input(shape=(None, k), dtype="float32")
            m = keras.Input(shape=(None,), dtype="bool")
            self._marginals = keras.Model([lg, m], CRFMarginals(self.crf)(lg, m))
        t = logits.shape[1]
        mask = np.arange(t)[None, :] < lengths[:, None]
        return np.asarray(self._marginals.predict_on_batch([logits, mask]), dtype=np.float32)


def build_network(
    arch: ArchitectureConfig,
    *,
    n_words: int,
    n_chars: int,
    char_width: int,
    n_features: int,
    n_classes: int,
    pretrained: np.ndarray | None = None,
) -> Network:
    char_in = keras.Input(shape=(char_width,), dtype="int32", name="token_chars")
    c = keras.layers.Embedding(n_chars, arch.char_embedding_dim, mask_zero=True, name="char_embedding")(char_in)
    c = keras.layers.Bidirectional(keras.layers.LSTM(arch.char_lstm_units), name="char_bilstm")(c)
    char_encoder = keras.Model(char_in, c, name="char_encoder")
    char_dim = 2 * arch.char_lstm_units

    words = keras.Input(shape=(None,), dtype="int32", name="words")
    char_vecs = keras.Input(shape=(None, char_dim), dtype="float32", name="char_vectors")
    seq_inputs: dict[str, Any] = {"words": words, "char_vectors": char_vecs}
    if arch.pretrained_dim:
        # frozen pretrained vectors for every word, a trained vector for the words training saw
        trained = arch.trained_words or n_words
        pre = keras.layers.Embedding(n_words, arch.pretrained_dim, trainable=False, name="pretrained_embedding")(words)
        ids = TrainedWordIds(trained, name="trained_word_ids")(words)
        own = keras.layers.Embedding(trained, arch.token_embedding_dim, name="token_embedding")(ids)
        own = TrainedPart(trained, arch.trained_part_dropout, name="trained_part")(own, words)
        parts = [pre, own, char_vecs]
    else:
        w = keras.layers.Embedding(n_words, arch.token_embedding_dim, name="token_embedding")(words)
        parts = [w, char_vecs]
    if n_features:
        feats = keras.Input(shape=(None, n_features), dtype="float32", name="features")
        seq_inputs["features"] = feats
        parts.append(feats)
    x = keras.layers.Concatenate(name="token_representation")(parts)
    x = keras.layers.Dropout(arch.dropout, name="dropout")(x)
    mask = NonPadMask(name="token_mask")(words)
    if arch.head == "window":
        win = NeighbourWindows(arch.window_radius, name="neighbour_windows")(ZeroPadding(name="zero_padding")(x, mask))
        h = keras.layers.Bidirectional(keras.layers.LSTM(arch.token_lstm_units), name="window_bilstm")(win)
        h = UnfoldTokens(name="unfold_windows")(h, words)
    else:
        h = keras.layers.Bidirectional(
            keras.layers.LSTM(arch.token_lstm_units, return_sequences=True), name="token_bilstm"
        )(x, mask=mask)
    logits = keras.layers.Dense(n_classes, name="logits")(h)
    crf: LinearChainCRF | None = None
    if arch.head == "crf":
        crf = LinearChainCRF(n_classes, name="crf")
        logits = crf(logits)
    sequence = keras.Model(seq_inputs, logits, name="sequence_model")

    t_words = keras.Input(shape=(None,), dtype="int32", name="words")
    t_chars = keras.Input(shape=(None, char_width), dtype="int32", name="chars")
    t_inputs: dict[str, Any] = {"words": t_words, "chars": t_chars}
    folded = FoldTokens(name="fold_tokens")(t_chars)
    encoded = UnfoldTokens(name="unfold_tokens")(char_encoder(folded), t_words)
    seq_args: dict[str, Any] = {"words": t_words, "char_vectors": encoded}
    if n_features:
        t_feats = keras.Input(shape=(None, n_features), dtype="float32", name="features")
        t_inputs["features"] = t_feats
        seq_args["features"] = t_feats
    out = sequence(seq_args)
    tagger = Tagger(t_inputs, out, crf=crf, name="deid_tagger")

    f_unique = keras.Input(shape=(char_width,), dtype="int32", name="unique_chars")
    f_index = keras.Input(shape=(None,), dtype="int32", name="char_index")
    f_words = keras.Input(shape=(None,), dtype="int32", name="words")
    f_inputs: dict[str, Any] = {"unique_chars": f_unique, "char_index": f_index, "words": f_words}
    f_args: dict[str, Any] = {"words": f_words,
                              "char_vectors": GatherRows(name="gather_char_vectors")(char_encoder(f_unique), f_index)}
    if n_features:
        f_feats = keras.Input(shape=(None, n_features), dtype="float32", name="features")
        f_inputs["features"] = f_feats
        f_args["features"] = f_feats
    forward = keras.Model(f_inputs, sequence(f_args), name="deid_forward")
    if pretrained is not None:
        if not arch.pretrained_dim or pretrained.shape != (n_words, arch.pretrained_dim):
            raise ValueError("pretrained vectors do not match the vocabulary and architecture")
        sequence.get_layer("pretrained_embedding").set_weights([pretrained])
    return Network(tagger=tagger, char_encoder=char_encoder, sequence=sequence, crf=crf, forward=forward)
