"""Small shape-plumbing layers, in Keras 3 ops only so the model runs on JAX too."""

from __future__ import annotations

from typing import Any

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="deid")
class FoldTokens(keras.layers.Layer):
    """(B, T, C) -> (B*T, C): every token's characters become one sequence."""

    def call(self, x: Any) -> Any:
        return ops.reshape(x, (-1, ops.shape(x)[-1]))

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return (None, input_shape[-1])


@keras.saving.register_keras_serializable(package="deid")
class UnfoldTokens(keras.layers.Layer):
    """(B*T, D) back to (B, T, D), taking B and T from a reference tensor."""

    def call(self, x: Any, reference: Any) -> Any:
        shape = ops.shape(reference)
        return ops.reshape(x, (shape[0], shape[1], ops.shape(x)[-1]))

    def compute_output_shape(self, x_shape: tuple, reference_shape: tuple) -> tuple:
        return (reference_shape[0], reference_shape[1], x_shape[-1])


@keras.saving.register_keras_serializable(package="deid")
class GatherRows(keras.layers.Layer):
    """(U, D) rows gathered by (B, T) indices into (B, T, D), on the device that holds them.

    Inference encodes each distinct character row of a batch once and
    gathers here, inside the compiled function, so the encoded vectors never
    travel back to the host between the two halves of the network.
    """

    def call(self, rows: Any, index: Any) -> Any:
        return ops.take(rows, index, axis=0)

    def compute_output_shape(self, rows_shape: tuple, index_shape: tuple) -> tuple:
        return (*index_shape, rows_shape[-1])


@keras.saving.register_keras_serializable(package="deid")
class NonPadMask(keras.layers.Layer):
    """True where a token id is not padding (id 0)."""

    def call(self, ids: Any) -> Any:
        return ops.not_equal(ids, 0)

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return input_shape


@keras.saving.register_keras_serializable(package="deid")
class NeighbourWindows(keras.layers.Layer):
    """(B, T, D) -> (B*T, 2r+1, D): the window of each token, zero beyond the edges.

    This is the Anonimatik-style baseline's input: each token is classified
    from its own 9-token window instead of the whole sequence.
    """

    def __init__(self, radius: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.radius = radius

    def call(self, x: Any) -> Any:
        r = self.radius
        t = ops.shape(x)[1]
        padded = ops.pad(x, [[0, 0], [r, r], [0, 0]])
        stacked = ops.stack([padded[:, i : i + t, :] for i in range(2 * r + 1)], axis=2)
        return ops.reshape(stacked, (-1, 2 * r + 1, ops.shape(x)[-1]))

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return (None, 2 * self.radius + 1, input_shape[-1])

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "radius": self.radius}


@keras.saving.register_keras_serializable(package="deid")
class ZeroPadding(keras.layers.Layer):
    """Zero the vectors at padded positions.

    The window head sees neighbours directly, without an RNN mask; zeroing
    makes a padded neighbour identical to one beyond the document's edge, so
    predictions do not depend on how much padding a batch happened to have.
    """

    def call(self, x: Any, valid: Any) -> Any:
        return x * ops.expand_dims(ops.cast(valid, x.dtype), -1)

    def compute_output_shape(self, x_shape: tuple, valid_shape: tuple) -> tuple:
        return x_shape


@keras.saving.register_keras_serializable(package="deid")
class TrainedWordIds(keras.layers.Layer):
    """Word ids past the trained part of the vocabulary mapped to 0, so a small trainable table serves them.

    With pretrained vectors the vocabulary is the words seen in training
    (ids below `limit`) followed by frequent words of the vector source that
    training did not give a vector of their own.
    """

    def __init__(self, limit: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = limit

    def call(self, ids: Any) -> Any:
        return ops.where(ops.less(ids, self.limit), ids, ops.zeros_like(ids))

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return input_shape

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "limit": self.limit}


@keras.saving.register_keras_serializable(package="deid")
class TrainedPart(keras.layers.Layer):
    """A word's trained vector, zero for words training never saw; sometimes zero in training too.

    Dropping the trained part of seen words now and then (`rate`) teaches
    the network to read a word from its pretrained vector alone, which is
    all it has for the words training never saw (most names at inference).
    """

    def __init__(self, limit: int, rate: float, seed: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = limit
        self.rate = rate
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, vectors: Any, ids: Any, training: bool = False) -> Any:
        keep = ops.cast(ops.logical_and(ops.greater(ids, 0), ops.less(ids, self.limit)), vectors.dtype)
        if training and self.rate > 0:
            draw = keras.random.uniform(ops.shape(ids), seed=self.seed_generator)
            keep = keep * ops.cast(ops.greater_equal(draw, self.rate), vectors.dtype)
        return vectors * ops.expand_dims(keep, -1)

    def compute_output_shape(self, vectors_shape: tuple, ids_shape: tuple) -> tuple:
        return vectors_shape

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "limit": self.limit, "rate": self.rate, "seed": self.seed}
