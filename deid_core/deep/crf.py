"""Linear-chain CRF on top of the deep de-identifier's per-token emissions.

Role in the pipeline
--------------------
The BiLSTM tagger (Dernoncourt et al. 2017) scores every token independently;
its label-sequence optimisation layer is a linear-chain CRF that adds
tag-to-tag transition scores, so that e.g. the inside of a multi-token name is
not tagged "safe" while its neighbours are tagged as a name. We use the CRF
for two things:

* training: ``-log p(tags | emissions)`` (:func:`crf_log_likelihood`) is the
  loss, so the emission network and the transitions are learnt jointly;
* inference: the engine is *inverse* (every token starts masked and is only let
  back in when we are confident it is safe), so a single best path is not
  enough. The adaptive-threshold combiner needs a calibrated per-token
  probability, P(y_t = safe | whole narrative), which is the forward-backward
  posterior marginal (:func:`crf_marginals`). The Viterbi path
  (:func:`crf_viterbi`) is kept for evaluation and for span reporting.

The pure functions take the weights explicitly so that inference code (Spark
UDFs, batch jobs) can run them with weights loaded from a saved model without
rebuilding a Keras graph; :class:`LinearChainCRF` only owns the weights so that
they are trained and saved with the model.

Conventions
-----------
* Shapes: emissions ``(B, T, K)``, tags ``(B, T)`` integer, mask ``(B, T)``
  bool or 0/1. ``T`` may be dynamic (``None``): the time recursion is a
  ``keras.ops.scan``, so one traced function serves documents of any padded
  length.
* Transitions are ``transitions[i, j]`` = score of moving *from* tag ``i`` *to*
  tag ``j``; ``start[k]`` / ``end[k]`` score a sequence beginning / ending in
  ``k``. The end score is applied at each row's true last position
  (``length - 1``), not at ``T - 1``.
* Padding is on the **right**: a row's valid positions are ``0 .. length-1``.
  Padded steps carry the recursion state through unchanged, and emissions and
  tags at padded positions are ignored (they may hold anything, even NaN, or an
  out-of-range tag such as -1). A mask with holes or left padding is not
  supported (results would be silently wrong).
* Outputs at padded positions: marginals are **zeros** (not uniform), so a
  padded position can never look "safe" to a threshold and sums over valid
  positions stay correct; the Viterbi path is 0. A row of length 0 gets
  log-likelihood 0, all-zero marginals and an all-zero path (no NaN).
* Dtypes: computation happens in the emissions' dtype (float32 or float64);
  half-precision emissions are promoted to float32 because a 512-step
  log-space recursion in float16 loses too much precision. Weights are cast to
  that dtype.
* Only ``keras.ops`` is used, so the same code runs on the TensorFlow and JAX
  backends (and under ``tf.function`` / ``jax.jit``).

Numerical stability: all recursions are in log space with ``logsumexp`` and
each step's state is re-centred on its maximum (the shift is accumulated for the
partition function), so T=512 with emissions of magnitude 50 stays finite and
the marginals keep float32 precision. Scores of ``-inf`` (hard-forbidden
transitions) are not supported; use a large finite negative such as -1e4.
"""

from __future__ import annotations

from typing import Any

import keras
from keras import ops

__all__ = [
    "LinearChainCRF",
    "crf_log_likelihood",
    "crf_marginals",
    "crf_viterbi",
]

Tensor = Any  # a backend tensor or anything keras.ops accepts


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _compute_dtype(emissions: Tensor) -> str:
    """float32/float64 stay as they are; anything else (half, int) -> float32.

    Half precision is promoted because the accumulated log-partition of a long
    narrative exceeds what float16 represents accurately.
    """
    dtype = keras.backend.standardize_dtype(emissions.dtype)
    return dtype if dtype in ("float32", "float64") else "float32"


def _prepare(
    emissions: Tensor,
    mask: Tensor | None,
    transitions: Tensor,
    start: Tensor,
    end: Tensor,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Cast everything to one float dtype and neutralise padded emissions.

    Padded emissions are replaced by 0 (not just ignored by `where` later)
    because a NaN/inf there would otherwise leak NaN into gradients through the
    unselected branch of `where`.
    """
    emissions = ops.convert_to_tensor(emissions)
    dtype = _compute_dtype(emissions)
    emissions = ops.cast(emissions, dtype)
    if mask is None:
        mask = ops.ones(ops.shape(emissions)[:2], dtype="bool")
    else:
        mask = ops.cast(ops.convert_to_tensor(mask), "bool")
    emissions = ops.where(mask[:, :, None], emissions, ops.zeros_like(emissions))
    transitions = ops.cast(ops.convert_to_tensor(transitions), dtype)
    start = ops.cast(ops.convert_to_tensor(start), dtype)
    end = ops.cast(ops.convert_to_tensor(end), dtype)
    return emissions, mask, transitions, start, end


def _time_major(x: Tensor) -> Tensor:
    """(B, T, ...) -> (T, B, ...), because scan iterates over the leading axis."""
    perm = [1, 0] + list(range(2, len(x.shape)))
    return ops.transpose(x, perm)


def _scan_inputs(emissions: Tensor, mask: Tensor) -> Tensor:
    """Steps 1..T-1 as ONE time-major tensor (T-1, B, K+1): emissions, then the mask.

    A single scanned tensor rather than an (emissions, mask) tuple because
    Keras 3.15's TensorFlow `scan` crashes on nested `xs` whose leading (time)
    dimension is unknown, which is exactly the dynamic-T case we need.
    """
    packed = ops.concatenate([emissions, ops.cast(mask, emissions.dtype)[:, :, None]], axis=-1)
    return _time_major(packed)[1:]


def _unpack_step(x: Tensor) -> tuple[Tensor, Tensor]:
    """Inverse of `_scan_inputs` for one step: (emissions (B, K), valid (B,) bool)."""
    return x[:, :-1], x[:, -1] > 0.5


def _recentre(scores: Tensor) -> tuple[Tensor, Tensor]:
    """Shift each row to max 0; return (shifted, shift of shape (B,)).

    The shift is excluded from differentiation: the recursions are exactly
    invariant to any constant shift, so treating it as a constant still gives
    the exact gradient while skipping the max's (useless) backward pass.
    """
    shift = ops.stop_gradient(ops.max(scores, axis=-1, keepdims=True))
    return scores - shift, shift[:, 0]


def _forward(
    emissions: Tensor, mask: Tensor, transitions: Tensor, start: Tensor
) -> tuple[Tensor, Tensor]:
    """Forward algorithm.

    Returns (alphas (T, B, K) re-centred per step, log_offset (B,)) where the
    unnormalised final alpha equals ``alphas[-1] + log_offset[:, None]`` for
    every row (padded steps carry the state, so ``alphas[-1]`` is the alpha at
    each row's true last position).
    """
    alpha0, offset0 = _recentre(start[None, :] + emissions[:, 0])
    trans = transitions[None, :, :]

    def step(carry: tuple[Tensor, Tensor], x: Tensor):
        alpha, offset = carry
        e_t, m_t = _unpack_step(x)
        # scores[b, i, j]: be in i at t-1, move to j, emit e_t[j]
        new = ops.logsumexp(alpha[:, :, None] + trans, axis=1) + e_t
        new, shift = _recentre(new)
        alpha = ops.where(m_t[:, None], new, alpha)
        offset = offset + ops.where(m_t, shift, ops.zeros_like(shift))
        # TF's scan requires per-step outputs to mirror the carry structure.
        return (alpha, offset), (alpha, offset)

    (_, offset), (alphas, _) = ops.scan(
        step, (alpha0, offset0), _scan_inputs(emissions, mask)
    )
    alphas = ops.concatenate([alpha0[None], alphas], axis=0)
    return alphas, offset


def _backward(emissions: Tensor, mask: Tensor, transitions: Tensor, end: Tensor) -> Tensor:
    """Backward algorithm; returns betas (T, B, K), re-centred per step.

    Starting every row from ``end`` at T-1 and carrying it through padded
    steps makes each row's beta at its true last position equal to ``end``.
    """
    beta_last = ops.zeros_like(emissions[:, 0]) + end[None, :]
    trans = transitions[None, :, :]

    def step(beta_next: Tensor, x: Tensor):
        e_next, m_next = _unpack_step(x)
        # scores[b, i, j]: be in i at t, move to j at t+1, emit, continue
        new = ops.logsumexp(trans + (e_next + beta_next)[:, None, :], axis=2)
        new, _ = _recentre(new)
        beta = ops.where(m_next[:, None], new, beta_next)
        return beta, beta

    # reverse=True keeps ys aligned with xs: ys[t] is beta_t for t = 0..T-2.
    _, betas = ops.scan(step, beta_last, _scan_inputs(emissions, mask), reverse=True)
    return ops.concatenate([betas, beta_last[None]], axis=0)


# --------------------------------------------------------------------------
# public pure functions
# --------------------------------------------------------------------------


def crf_log_likelihood(
    emissions: Tensor,
    tags: Tensor,
    mask: Tensor | None,
    transitions: Tensor,
    start: Tensor,
    end: Tensor,
) -> Tensor:
    """log p(tags | emissions) per row, shape (B,); the training loss is its negative mean.

    ``mask=None`` means every position is valid. Rows of length 0 give 0, so
    a stray empty document in a batch does not poison the loss with NaN.
    """
    emissions, mask, transitions, start, end = _prepare(emissions, mask, transitions, start, end)
    num_tags = transitions.shape[0]
    tags = ops.cast(ops.convert_to_tensor(tags), "int32")
    # Padded tags may be -1 or garbage; gathering them would fail on TF.
    tags = ops.where(mask, tags, ops.zeros_like(tags))
    zeros_bt = ops.zeros_like(emissions[:, :, 0])

    lengths = ops.sum(ops.cast(mask, "int32"), axis=1)
    nonempty = lengths > 0

    # score of the given path
    emit = ops.take_along_axis(emissions, tags[:, :, None], axis=2)[:, :, 0]
    emit = ops.sum(ops.where(mask, emit, zeros_bt), axis=1)
    pair_idx = tags[:, :-1] * num_tags + tags[:, 1:]
    trans = ops.take(ops.reshape(transitions, (-1,)), pair_idx)
    # pair (t-1, t) exists iff t is valid (right padding)
    trans = ops.sum(ops.where(mask[:, 1:], trans, zeros_bt[:, 1:]), axis=1)
    first = ops.take(start, tags[:, 0])
    last_pos = ops.maximum(lengths - 1, 0)
    last_tag = ops.take_along_axis(tags, last_pos[:, None], axis=1)[:, 0]
    last = ops.take(end, last_tag)
    score = first + emit + trans + last

    # log partition function
    alphas, offset = _forward(emissions, mask, transitions, start)
    log_z = offset + ops.logsumexp(alphas[-1] + end[None, :], axis=-1)

    ll = score - log_z
    return ops.where(nonempty, ll, ops.zeros_like(ll))


def crf_marginals(
    emissions: Tensor,
    mask: Tensor | None,
    transitions: Tensor,
    start: Tensor,
    end: Tensor,
) -> Tensor:
    """Posterior P(y_t = k | x), shape (B, T, K); zeros at padded positions.

    This is what the threshold combiner consumes as P(safe): unlike the
    Viterbi path it says how sure the model is about each token given the
    whole narrative. Each position is normalised with a softmax over
    alpha + beta (both re-centred), which equals exp(alpha + beta - log Z) but
    sums to 1 exactly and does not lose precision for long documents.
    """
    emissions, mask, transitions, start, end = _prepare(emissions, mask, transitions, start, end)
    alphas, _ = _forward(emissions, mask, transitions, start)
    betas = _backward(emissions, mask, transitions, end)
    probs = _time_major(ops.softmax(alphas + betas, axis=-1))
    return ops.where(mask[:, :, None], probs, ops.zeros_like(probs))


def crf_viterbi(
    emissions: Tensor,
    mask: Tensor | None,
    transitions: Tensor,
    start: Tensor,
    end: Tensor,
) -> Tensor:
    """Most probable tag path, shape (B, T) int32; 0 at padded positions.

    Backpointers at padded steps are the identity, so backtracking from T-1
    passes unchanged through the padding to each row's true last position.
    """
    emissions, mask, transitions, start, end = _prepare(emissions, mask, transitions, start, end)
    num_tags = transitions.shape[0]
    score0, _ = _recentre(start[None, :] + emissions[:, 0])
    bp0 = ops.zeros_like(score0, dtype="int32")
    identity = ops.arange(num_tags, dtype="int32")[None, :]
    trans = transitions[None, :, :]

    def forward_step(carry: tuple[Tensor, Tensor], x: Tensor):
        score, _ = carry
        e_t, m_t = _unpack_step(x)
        cand = score[:, :, None] + trans  # (B, from, to)
        best_prev = ops.cast(ops.argmax(cand, axis=1), "int32")
        new, _ = _recentre(ops.max(cand, axis=1) + e_t)
        score = ops.where(m_t[:, None], new, score)
        bp = ops.where(m_t[:, None], best_prev, ops.zeros_like(best_prev) + identity)
        return (score, bp), (score, bp)

    (score, _), (_, bps) = ops.scan(
        forward_step, (score0, bp0), _scan_inputs(emissions, mask)
    )
    last_tag = ops.cast(ops.argmax(score + end[None, :], axis=-1), "int32")

    def back_step(tag_t: Tensor, bp_t: Tensor):
        # emit y_t, carry y_{t-1} = bp_t[y_t]
        prev = ops.take_along_axis(bp_t, tag_t[:, None], axis=1)[:, 0]
        return prev, tag_t

    first_tag, tags_rest = ops.scan(back_step, last_tag, bps, reverse=True)
    path = ops.concatenate([first_tag[None], tags_rest], axis=0)
    path = _time_major(path)
    return ops.where(mask, path, ops.zeros_like(path))


# --------------------------------------------------------------------------
# layer
# --------------------------------------------------------------------------


@keras.saving.register_keras_serializable(package="deid")
class LinearChainCRF(keras.layers.Layer):
    """Holds transition weights; call() is the identity on emissions (B,T,K).

    The layer sits in the model graph only so that its weights are tracked,
    trained and saved with the model; the CRF's computations need the gold tags
    (training) or a different output (marginals/path), so they are separate
    methods rather than the layer output. Keras masks pass through unchanged.
    """

    def __init__(self, num_tags: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if int(num_tags) < 1:
            raise ValueError(f"num_tags must be >= 1, got {num_tags}")
        self.num_tags = int(num_tags)
        self.supports_masking = True

    def build(self, input_shape: tuple[int | None, ...]) -> None:
        """Create the weights; zeros mean 'no preference' until training moves them."""
        if input_shape is not None and input_shape[-1] is not None:
            if int(input_shape[-1]) != self.num_tags:
                raise ValueError(
                    f"emissions last dimension {input_shape[-1]} != num_tags {self.num_tags}"
                )
        k = self.num_tags
        self.transitions = self.add_weight(name="transitions", shape=(k, k), initializer="zeros")
        self.start = self.add_weight(name="start", shape=(k,), initializer="zeros")
        self.end = self.add_weight(name="end", shape=(k,), initializer="zeros")

    def call(self, emissions: Tensor, mask: Tensor | None = None) -> Tensor:
        return emissions

    def compute_output_shape(self, input_shape: tuple[int | None, ...]) -> tuple[int | None, ...]:
        return input_shape

    def _ensure_built(self, emissions: Tensor) -> None:
        """Let the methods be used before the layer was called once (e.g. standalone)."""
        if not self.built:
            self.build(tuple(emissions.shape))

    def log_likelihood(self, emissions: Tensor, tags: Tensor, mask: Tensor | None) -> Tensor:
        """log p(tags | emissions), (B,); see :func:`crf_log_likelihood`."""
        self._ensure_built(emissions)
        return crf_log_likelihood(emissions, tags, mask, self.transitions, self.start, self.end)

    def marginals(self, emissions: Tensor, mask: Tensor | None) -> Tensor:
        """P(y_t = k | x), (B, T, K), zeros at padding; see :func:`crf_marginals`."""
        self._ensure_built(emissions)
        return crf_marginals(emissions, mask, self.transitions, self.start, self.end)

    def viterbi(self, emissions: Tensor, mask: Tensor | None) -> Tensor:
        """Best path, (B, T) int32, 0 at padding; see :func:`crf_viterbi`."""
        self._ensure_built(emissions)
        return crf_viterbi(emissions, mask, self.transitions, self.start, self.end)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update({"num_tags": self.num_tags})
        return config
