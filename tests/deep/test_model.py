from __future__ import annotations

import json
import shutil
from pathlib import Path

import keras
import numpy as np
import pytest

from deid_core.deep.encoding import pad_batch, slice_doc, window_bounds
from deid_core.deep.manifest import MANIFEST_FILE, VOCABULARY_FILE, ModelError
from deid_core.deep.model import build_network
from deid_core.deep.predictor import DeepModel

from .conftest import TEXTS, make_model_dir, tiny_arch

DEEP = Path(__file__).resolve().parents[2] / "deid_core" / "deep"


def test_model_code_uses_keras_ops_only() -> None:
    """The network must run on the JAX backend: no TensorFlow in model code."""
    import ast

    for name in ("model.py", "layers.py", "crf.py", "predictor.py", "encoding.py"):
        tree = ast.parse((DEEP / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""]
            else:
                continue
            assert not any(m.split(".")[0] in ("tensorflow", "tf") for m in mods), name


def test_predictions_are_distributions(cfg, rules, tiny_model_dir) -> None:  # type: ignore[no-untyped-def]
    model = DeepModel.load(tiny_model_dir, cfg)
    analyses = [rules.analyse(t) for t in TEXTS + [""]]
    probs = model.predict(analyses)
    for a, p in zip(analyses, probs):
        assert p.shape == (len(a.tokens), len(cfg.deep.classes))
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)


def _direct(model: DeepModel, analysis) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Reference: the end-to-end tagger on each window, no de-duplication, no length sorting."""
    doc = model.encoder.encode(analysis)
    seq = model.manifest.sequence
    out = np.zeros((len(doc), len(model.classes)), dtype=np.float32)
    best = np.full(len(doc), -1)
    for s, e in window_bounds(len(doc), seq.window_tokens, seq.overlap):
        piece = slice_doc(doc, s, e)
        arrays = pad_batch([piece], e - s, model.encoder.n_chars, model.encoder.n_features)
        x = {"words": arrays["words"], "chars": arrays["chars"]}
        if model.encoder.n_features:
            x["features"] = arrays["features"]
        logits = np.asarray(model.network.tagger.predict_on_batch(x))
        p = model.network.probabilities(logits, np.array([e - s]))[0]
        for i in range(s, e):
            m = min(i - s, e - 1 - i)
            if m > best[i]:
                best[i], out[i] = m, p[i - s]
    return out


@pytest.mark.parametrize("head", ["softmax", "crf", "window"])
def test_batched_inference_matches_direct_run(cfg, artifact, rules, tmp_path, head) -> None:  # type: ignore[no-untyped-def]
    model_dir = make_model_dir(cfg, artifact, tmp_path / head, head=head)
    model = DeepModel.load(model_dir, cfg)
    long_text = " ".join(TEXTS * 3)  # several windows of 8 tokens
    analyses = [rules.analyse(t) for t in TEXTS + [long_text]]
    together = model.predict(analyses)
    for a, p in zip(analyses, together):
        np.testing.assert_allclose(p, _direct(model, a), atol=1e-5)
        np.testing.assert_allclose(model.predict([a])[0], p, atol=1e-5)  # batch-composition invariant


def test_a_model_with_rule_categories_round_trips(cfg, artifact, rules, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The switch travels in the manifest: the loaded model encodes with the layout it was built with."""
    model_dir = make_model_dir(cfg, artifact, tmp_path / "cat", rule_categories=True)
    model = DeepModel.load(model_dir, cfg)
    assert model.manifest.architecture.rule_categories
    a = rules.analyse(TEXTS[1])
    p = model.predict([a])[0]
    np.testing.assert_allclose(p, _direct(model, a), atol=1e-5)
    plain = DeepModel.load(make_model_dir(cfg, artifact, tmp_path / "plain", rule_categories=False), cfg)
    assert not plain.manifest.architecture.rule_categories


def test_load_refuses_mismatched_parts(cfg, tiny_model_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelError):
        DeepModel.load(tmp_path / "nowhere", cfg)
    bad = tmp_path / "bad_vocab"
    shutil.copytree(tiny_model_dir, bad)
    vocab = json.loads((bad / VOCABULARY_FILE).read_text())
    vocab["words"].append("extra")
    (bad / VOCABULARY_FILE).write_text(json.dumps(vocab))
    with pytest.raises(ModelError, match="vocabulary"):
        DeepModel.load(bad, cfg)
    bad2 = tmp_path / "bad_features"
    shutil.copytree(tiny_model_dir, bad2)
    m = json.loads((bad2 / MANIFEST_FILE).read_text())
    m["feature_names"] = m["feature_names"][:-1]
    (bad2 / MANIFEST_FILE).write_text(json.dumps(m))
    with pytest.raises(ModelError, match="feature"):
        DeepModel.load(bad2, cfg)


@pytest.mark.parametrize("head", ["softmax", "crf", "window"])
def test_heads_learn_a_toy_labelling(cfg, head) -> None:  # type: ignore[no-untyped-def]
    """Capitalised words after token id 2 are class 1: every head must fit this quickly."""
    from deid_core.training.loop import compile_network

    keras.utils.set_random_seed(0)
    arch = tiny_arch(cfg, head=head, variant="a", dropout=0.0)
    net = build_network(arch, n_words=6, n_chars=5, char_width=4, n_features=0, n_classes=3)
    rng = np.random.default_rng(0)
    words = rng.integers(1, 6, size=(16, 10)).astype("int32")
    words[:, 7:] = 0
    chars = rng.integers(1, 5, size=(16, 10, 4)).astype("int32")
    labels = np.zeros((16, 10), dtype="int32")
    labels[:, 1:][words[:, :-1] == 2] = 1
    labels[words == 0] = 0
    weights = (words > 0).astype("float32")
    compile_network(net, cfg.deep.training.model_copy(update={"learning_rate": 0.02}))
    x = {"words": words, "chars": chars}
    first = float(net.tagger.train_on_batch(x, labels, sample_weight=weights))
    for _ in range(60):
        last = float(net.tagger.train_on_batch(x, labels, sample_weight=weights))
    assert last < 0.5 * first
