"""Tests of the linear-chain CRF against brute-force enumeration of all tag paths.

The CRF's marginals become P(safe) for the threshold combiner, so they are
checked exactly (to 1e-4) against the definition, not only for plausibility.
TensorFlow is used here only for GradientTape / tf.function (this machine's
backend); the module under test uses keras.ops only.
"""

from __future__ import annotations

import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf

from deid_core.deep.crf import (
    LinearChainCRF,
    crf_log_likelihood,
    crf_marginals,
    crf_viterbi,
)

K = 3
T = 5
TOL = 1e-4


# --------------------------------------------------------------------------
# brute force reference (float64 numpy)
# --------------------------------------------------------------------------


def path_score(e: np.ndarray, path: tuple[int, ...], tr: np.ndarray, s: np.ndarray, en: np.ndarray) -> float:
    """Unnormalised score of one path over the valid prefix e (L, K), in float64."""
    e, tr, s, en = (np.asarray(a, dtype=np.float64) for a in (e, tr, s, en))
    score = s[path[0]] + en[path[-1]]
    for t, y in enumerate(path):
        score += e[t, y]
        if t > 0:
            score += tr[path[t - 1], y]
    return float(score)


def brute_force(e: np.ndarray, tr: np.ndarray, s: np.ndarray, en: np.ndarray):
    """All-path enumeration for one row of valid length L = len(e).

    Returns (log Z, marginals (L, K), best path, score function).
    """
    e = e.astype(np.float64)
    length = e.shape[0]
    paths = list(itertools.product(range(tr.shape[0]), repeat=length))
    scores = np.array([path_score(e, p, tr, s, en) for p in paths])
    log_z = np.logaddexp.reduce(scores)
    probs = np.exp(scores - log_z)
    marg = np.zeros((length, tr.shape[0]))
    for p, pr in zip(paths, probs):
        for t, y in enumerate(p):
            marg[t, y] += pr
    best = paths[int(np.argmax(scores))]
    return log_z, marg, best


def random_problem(seed: int, lengths: list[int], t_max: int = T, scale: float = 2.0):
    rng = np.random.default_rng(seed)
    b = len(lengths)
    e = (rng.normal(size=(b, t_max, K)) * scale).astype(np.float32)
    tags = rng.integers(0, K, size=(b, t_max)).astype(np.int32)
    mask = np.arange(t_max)[None, :] < np.array(lengths)[:, None]
    tr = (rng.normal(size=(K, K)) * scale).astype(np.float32)
    s = (rng.normal(size=(K,)) * scale).astype(np.float32)
    en = (rng.normal(size=(K,)) * scale).astype(np.float32)
    return e, tags, mask, tr, s, en


LENGTHS = [5, 3, 1, 4, 2]


# --------------------------------------------------------------------------
# exactness against brute force
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mask_kind", ["bool", "int", "float"])
def test_log_likelihood_matches_brute_force(seed: int, mask_kind: str) -> None:
    e, tags, mask, tr, s, en = random_problem(seed, LENGTHS)
    mask_in = {"bool": mask, "int": mask.astype(np.int32), "float": mask.astype(np.float32)}[mask_kind]
    ll = np.asarray(crf_log_likelihood(e, tags, mask_in, tr, s, en))
    assert ll.shape == (len(LENGTHS),)
    for b, length in enumerate(LENGTHS):
        log_z, _, _ = brute_force(e[b, :length], tr, s, en)
        want = path_score(e[b, :length].astype(np.float64), tuple(tags[b, :length]), tr, s, en) - log_z
        assert ll[b] == pytest.approx(want, abs=TOL), (b, length)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_probabilities_of_all_paths_sum_to_one(seed: int) -> None:
    """exp(log_likelihood) summed over every path is 1: the partition function is right."""
    e, _, _, tr, s, en = random_problem(seed, [4], t_max=4)
    paths = np.array(list(itertools.product(range(K), repeat=4)), dtype=np.int32)
    e_rep = np.repeat(e, len(paths), axis=0)
    ll = np.asarray(crf_log_likelihood(e_rep, paths, None, tr, s, en), dtype=np.float64)
    assert np.exp(ll).sum() == pytest.approx(1.0, abs=TOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_marginals_match_brute_force(seed: int) -> None:
    e, _, mask, tr, s, en = random_problem(seed, LENGTHS)
    marg = np.asarray(crf_marginals(e, mask, tr, s, en))
    assert marg.shape == e.shape
    for b, length in enumerate(LENGTHS):
        _, want, _ = brute_force(e[b, :length], tr, s, en)
        np.testing.assert_allclose(marg[b, :length], want, atol=TOL)
        np.testing.assert_allclose(marg[b, :length].sum(-1), 1.0, atol=TOL)
        # documented convention: zeros at padded positions
        assert np.all(marg[b, length:] == 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_viterbi_matches_brute_force(seed: int) -> None:
    e, _, mask, tr, s, en = random_problem(seed, LENGTHS)
    path = np.asarray(crf_viterbi(e, mask, tr, s, en))
    assert path.dtype == np.int32
    assert path.shape == mask.shape
    for b, length in enumerate(LENGTHS):
        _, _, best = brute_force(e[b, :length], tr, s, en)
        assert tuple(path[b, :length]) == best, (b, length)
        assert np.all(path[b, length:] == 0)


def test_end_transition_applied_at_true_last_position() -> None:
    """A huge end score for tag 2 must pull a length-2 row's position 1 to tag 2, not position T-1."""
    e = np.zeros((1, 5, K), np.float32)
    mask = np.array([[1, 1, 0, 0, 0]], bool)
    tr = np.zeros((K, K), np.float32)
    s = np.zeros(K, np.float32)
    en = np.array([0.0, 0.0, 20.0], np.float32)
    marg = np.asarray(crf_marginals(e, mask, tr, s, en))
    assert marg[0, 1, 2] > 0.999
    assert marg[0, 0] == pytest.approx(np.full(K, 1 / K), abs=TOL)
    assert list(np.asarray(crf_viterbi(e, mask, tr, s, en))[0]) == [0, 2, 0, 0, 0]


def test_float64_is_kept_and_exact() -> None:
    e, tags, mask, tr, s, en = random_problem(7, LENGTHS)
    e64 = e.astype(np.float64)
    ll = crf_log_likelihood(e64, tags, mask, tr, s, en)
    marg = crf_marginals(e64, mask, tr, s, en)
    assert keras.backend.standardize_dtype(ll.dtype) == "float64"
    assert keras.backend.standardize_dtype(marg.dtype) == "float64"
    log_z, want_marg, _ = brute_force(e64[0], tr.astype(np.float64), s.astype(np.float64), en.astype(np.float64))
    want = path_score(e64[0], tuple(tags[0]), tr.astype(np.float64), s, en) - log_z
    assert float(ll[0]) == pytest.approx(want, abs=1e-9)
    np.testing.assert_allclose(np.asarray(marg)[0], want_marg, atol=1e-9)


def test_half_precision_is_promoted_to_float32() -> None:
    e, tags, mask, tr, s, en = random_problem(8, LENGTHS)
    ll16 = crf_log_likelihood(e.astype(np.float16), tags, mask, tr, s, en)
    assert keras.backend.standardize_dtype(ll16.dtype) == "float32"
    ll32 = np.asarray(crf_log_likelihood(e.astype(np.float16).astype(np.float32), tags, mask, tr, s, en))
    np.testing.assert_allclose(np.asarray(ll16), ll32, atol=TOL)


# --------------------------------------------------------------------------
# padding robustness
# --------------------------------------------------------------------------


def test_padding_content_is_ignored() -> None:
    """Garbage (NaN, huge, tag -1) at padded positions changes nothing and yields no NaN."""
    e, tags, mask, tr, s, en = random_problem(4, LENGTHS)
    e_bad = e.copy()
    e_bad[~mask] = np.nan
    e_bad[1, 4] = 1e30
    tags_bad = tags.copy()
    tags_bad[~mask] = -1
    e_t = tf.constant(e_bad)
    weights = tf.constant(np.random.default_rng(40).normal(size=e.shape).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(e_t)
        ll_bad = crf_log_likelihood(e_t, tags_bad, mask, tr, s, en)
        # a smooth function of the marginals, so the backward pass is differentiated too
        marg_score = tf.reduce_sum(crf_marginals(e_t, mask, tr, s, en) * weights)
    grad = tape.gradient(ll_bad, e_t).numpy()
    grad_marg = tape.gradient(marg_score, e_t).numpy()
    assert np.all(np.isfinite(grad_marg)) and np.all(grad_marg[~mask] == 0.0)
    assert np.abs(grad_marg[mask]).max() > 1e-3
    np.testing.assert_allclose(ll_bad.numpy(), np.asarray(crf_log_likelihood(e, tags, mask, tr, s, en)), atol=TOL)
    np.testing.assert_allclose(
        np.asarray(crf_marginals(e_bad, mask, tr, s, en)), np.asarray(crf_marginals(e, mask, tr, s, en)), atol=TOL
    )
    np.testing.assert_array_equal(
        np.asarray(crf_viterbi(e_bad, mask, tr, s, en)), np.asarray(crf_viterbi(e, mask, tr, s, en))
    )
    assert np.all(np.isfinite(grad))
    assert np.all(grad[~mask] == 0.0)


def test_padded_batch_equals_unpadded_rows() -> None:
    e, tags, mask, tr, s, en = random_problem(5, LENGTHS)
    ll = np.asarray(crf_log_likelihood(e, tags, mask, tr, s, en))
    marg = np.asarray(crf_marginals(e, mask, tr, s, en))
    for b, length in enumerate(LENGTHS):
        ll_b = np.asarray(crf_log_likelihood(e[b : b + 1, :length], tags[b : b + 1, :length], None, tr, s, en))
        marg_b = np.asarray(crf_marginals(e[b : b + 1, :length], None, tr, s, en))
        assert ll[b] == pytest.approx(ll_b[0], abs=TOL)
        np.testing.assert_allclose(marg[b, :length], marg_b[0], atol=TOL)


def test_empty_row_gives_zero_and_no_nan() -> None:
    e, tags, mask, tr, s, en = random_problem(6, [3, 0, 1])
    e_t = tf.constant(e)
    with tf.GradientTape() as tape:
        tape.watch(e_t)
        ll = crf_log_likelihood(e_t, tags, mask, tr, s, en)
    grad = tape.gradient(ll, e_t).numpy()
    assert ll.numpy()[1] == 0.0
    assert np.all(np.isfinite(ll.numpy())) and np.all(np.isfinite(grad))
    assert np.all(grad[1] == 0.0)
    marg = np.asarray(crf_marginals(e, mask, tr, s, en))
    assert np.all(np.isfinite(marg)) and np.all(marg[1] == 0.0)
    assert np.all(np.asarray(crf_viterbi(e, mask, tr, s, en))[1] == 0)


# --------------------------------------------------------------------------
# stability and gradients
# --------------------------------------------------------------------------


def test_long_sequences_with_large_scores_stay_finite() -> None:
    rng = np.random.default_rng(9)
    b, t_max = 3, 512
    e = rng.uniform(-50, 50, size=(b, t_max, K)).astype(np.float32)
    tags = rng.integers(0, K, size=(b, t_max)).astype(np.int32)
    mask = np.arange(t_max)[None, :] < np.array([512, 300, 1])[:, None]
    tr = rng.uniform(-50, 50, size=(K, K)).astype(np.float32)
    s = rng.uniform(-50, 50, size=K).astype(np.float32)
    en = rng.uniform(-50, 50, size=K).astype(np.float32)
    crf_w = [tf.Variable(tr), tf.Variable(s), tf.Variable(en)]

    @tf.function  # graph mode: an eager 512-step scan is needlessly slow
    def run(e_t, gold):
        with tf.GradientTape() as tape:
            tape.watch(e_t)
            ll = crf_log_likelihood(e_t, gold, mask, *crf_w)
        grads = tape.gradient(ll, [e_t, *crf_w])
        marg = crf_marginals(e_t, mask, *crf_w)
        path = crf_viterbi(e_t, mask, *crf_w)
        ll_best = crf_log_likelihood(e_t, path, mask, *crf_w)
        return ll, grads, marg, path, ll_best

    ll, grads, marg, path, ll_best = (
        tf.nest.map_structure(lambda t: t.numpy(), out) for out in run(tf.constant(e), tf.constant(tags))
    )
    assert np.all(np.isfinite(ll)) and np.all(ll <= 1e-3)
    for g in grads:
        assert np.all(np.isfinite(g))
    assert np.all(np.isfinite(marg))
    np.testing.assert_allclose(marg.sum(-1)[mask], 1.0, atol=TOL)
    assert np.all(marg[~mask] == 0.0)
    assert path.min() >= 0 and path.max() < K
    # the Viterbi path must score at least as well as the random gold path
    assert np.all(ll_best >= ll - 1e-2)
    assert np.all(ll_best <= 1e-3)


def test_gradient_is_observed_minus_expected() -> None:
    """d log p / d emission[t, k] = 1[y_t = k] - P(y_t = k): ties the gradient to the marginals."""
    e, tags, mask, tr, s, en = random_problem(10, LENGTHS)
    crf_w = [tf.Variable(tr), tf.Variable(s), tf.Variable(en)]
    e_t = tf.constant(e)
    with tf.GradientTape() as tape:
        tape.watch(e_t)
        loss = -tf.reduce_sum(crf_log_likelihood(e_t, tags, mask, *crf_w))
    g_e, g_tr, g_s, g_en = tape.gradient(loss, [e_t, *crf_w])
    marg = np.asarray(crf_marginals(e, mask, tr, s, en))
    want = (marg - np.eye(K)[tags]) * mask[:, :, None]
    np.testing.assert_allclose(g_e.numpy(), want, atol=TOL)
    for g in (g_tr, g_s, g_en):
        assert np.all(np.isfinite(g.numpy()))
        assert np.abs(g.numpy()).max() > 1e-3
    # d/d start[k] = P(y_0 = k) - 1[y_0 = k], summed over rows
    want_s = (marg[:, 0] - np.eye(K)[tags[:, 0]]).sum(0)
    np.testing.assert_allclose(g_s.numpy(), want_s, atol=TOL)


def test_dynamic_time_dimension_in_one_traced_function() -> None:
    """One trace with T=None must serve batches of different padded lengths."""
    layer = LinearChainCRF(K)
    layer.build((None, None, K))
    rng = np.random.default_rng(11)
    for w in (layer.transitions, layer.start, layer.end):
        w.assign(rng.normal(size=w.shape).astype(np.float32))

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None, K], tf.float32),
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([None, None], tf.bool),
        ],
        reduce_retracing=True,
    )
    def infer(e, tags, mask):
        return layer.log_likelihood(e, tags, mask), layer.marginals(e, mask), layer.viterbi(e, mask)

    for lengths, t_max in (([3, 1], 3), ([5, 2, 4], 5)):
        e, tags, mask, *_ = random_problem(12 + t_max, lengths, t_max=t_max)
        ll, marg, path = infer(e, tags, mask)
        np.testing.assert_allclose(ll.numpy(), np.asarray(layer.log_likelihood(e, tags, mask)), atol=TOL)
        np.testing.assert_allclose(marg.numpy(), np.asarray(layer.marginals(e, mask)), atol=TOL)
        np.testing.assert_array_equal(path.numpy(), np.asarray(layer.viterbi(e, mask)))
    assert infer.experimental_get_tracing_count() == 1


# --------------------------------------------------------------------------
# layer: identity, config, save/load
# --------------------------------------------------------------------------


def test_layer_is_identity_and_creates_weights() -> None:
    layer = LinearChainCRF(K)
    e = np.random.default_rng(13).normal(size=(2, 4, K)).astype(np.float32)
    out = layer(e)
    np.testing.assert_array_equal(np.asarray(out), e)
    assert {w.path.split("/")[-1] for w in layer.trainable_weights} == {"transitions", "start", "end"}
    assert tuple(layer.transitions.shape) == (K, K)
    with pytest.raises(ValueError):
        LinearChainCRF(K)(np.zeros((1, 2, K + 1), np.float32))


def test_methods_build_the_layer_when_not_called_yet() -> None:
    layer = LinearChainCRF(K)
    e, tags, mask, *_ = random_problem(14, [2, 1], t_max=2)
    ll = np.asarray(layer.log_likelihood(e, tags, mask))
    assert layer.built and np.all(np.isfinite(ll))
    # zero weights: the CRF is a per-token softmax
    probs = np.exp(e - np.logaddexp.reduce(e, axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(layer.marginals(e, mask))[mask], probs[mask], atol=TOL)


def test_get_config_round_trip() -> None:
    layer = LinearChainCRF(5, name="crf")
    config = layer.get_config()
    assert config["num_tags"] == 5
    clone = LinearChainCRF.from_config(config)
    assert clone.num_tags == 5 and clone.name == "crf"
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert isinstance(restored, LinearChainCRF) and restored.num_tags == 5


def _tiny_model(num_features: int = 4) -> tuple[keras.Model, LinearChainCRF]:
    inputs = keras.Input(shape=(None, num_features))
    crf = LinearChainCRF(K, name="crf")
    outputs = crf(keras.layers.Dense(K, name="emissions")(inputs))
    return keras.Model(inputs, outputs), crf


def test_model_save_and_load_keeps_crf_weights(tmp_path) -> None:
    model, crf = _tiny_model()
    rng = np.random.default_rng(15)
    for w in crf.trainable_weights:
        w.assign(rng.normal(size=w.shape).astype(np.float32))
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    crf2 = loaded.get_layer("crf")
    assert isinstance(crf2, LinearChainCRF)
    for name in ("transitions", "start", "end"):
        np.testing.assert_array_equal(np.asarray(getattr(crf2, name)), np.asarray(getattr(crf, name)))
    x = rng.normal(size=(2, 4, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], bool)
    e1, e2 = model(x), loaded(x)
    np.testing.assert_allclose(np.asarray(e2), np.asarray(e1), atol=1e-6)
    np.testing.assert_allclose(np.asarray(crf2.marginals(e2, mask)), np.asarray(crf.marginals(e1, mask)), atol=1e-6)
    # the pure functions work with the loaded weights, as inference code will use them
    np.testing.assert_array_equal(
        np.asarray(crf_viterbi(e2, mask, crf2.transitions, crf2.start, crf2.end)), np.asarray(crf.viterbi(e1, mask))
    )


# --------------------------------------------------------------------------
# learning
# --------------------------------------------------------------------------


def test_training_reduces_loss() -> None:
    """Dense -> CRF learns a tag sequence that is a deterministic function of the inputs."""
    keras.utils.set_random_seed(16)
    rng = np.random.default_rng(16)
    b, t_max, d = 64, 10, 6
    x = rng.normal(size=(b, t_max, d)).astype(np.float32)
    tags = np.argmax(x[:, :, :K], axis=-1).astype(np.int32)
    lengths = rng.integers(1, t_max + 1, size=b)
    mask = np.arange(t_max)[None, :] < lengths[:, None]
    model, crf = _tiny_model(d)
    optimizer = keras.optimizers.Adam(learning_rate=0.05)
    x_t, tags_t, mask_t = tf.constant(x), tf.constant(tags), tf.constant(mask)

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(crf.log_likelihood(model(x_t), tags_t, mask_t))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [float(train_step()) for _ in range(200)]
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
    assert losses[-1] < 0.2 * losses[0], (losses[0], losses[-1])
    path = np.asarray(crf.viterbi(model(x), mask))
    assert (path[mask] == tags[mask]).mean() > 0.9
    # the CRF weights were trained too (they start at zero)
    assert np.abs(np.asarray(crf.transitions)).max() > 1e-3
