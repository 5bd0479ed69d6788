"""Fitting the network: tf.data batches in, weights and history out.

Loss weighting: padding has weight 0 (it never trains the model), PHI tokens
`phi_class_weight`, SAFE tokens 1, because PHI is under 1% of tokens and an
unweighted loss learns to call everything safe. Word dropout replaces a
share of known words by the unknown id so the network also learns to use
characters and context for words it has not seen (most names at inference).
Early stopping watches the hybrid's precision on dev at a fixed recall (see
`HybridDevScore`) and restores the best epoch's weights, or, with
`average_from_epoch`, keeps the mean of the weights after each epoch from
that one on (`WeightAverage`): the dev score jumps from epoch to epoch, and
the best one is partly the luck of the dev notes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import keras
import numpy as np

from deid_core.config import TrainingConfig
from deid_core.deep.model import Network
from deid_core.deep.vocabulary import UNK_ID


def make_batch_transform(
    window: int, width: int, n_features: int, tcfg: TrainingConfig, *, train: bool
) -> Callable[[Any], tuple[dict[str, Any], Any, Any]]:
    """Map a petastorm batch (flat arrays) to (inputs, labels, sample weights).

    This runs inside tf.data, not inside the model, so it may use TensorFlow.
    """
    import tensorflow as tf

    phi_w = float(tcfg.phi_class_weight)
    drop = float(tcfg.word_dropout) if train else 0.0

    def transform(batch: Any) -> tuple[dict[str, Any], Any, Any]:
        words = tf.reshape(tf.cast(batch.words, tf.int32), (-1, window))
        chars = tf.reshape(tf.cast(batch.chars, tf.int32), (-1, window, width))
        labels = tf.reshape(tf.cast(batch.labels, tf.int32), (-1, window))
        weights = tf.reshape(tf.cast(batch.weights, tf.float32), (-1, window))
        if drop > 0:
            hit = (tf.random.uniform(tf.shape(words)) < drop) & (words > UNK_ID)
            words = tf.where(hit, tf.fill(tf.shape(words), UNK_ID), words)
        sw = weights * tf.where(labels > 0, phi_w, 1.0)
        x = {"words": words, "chars": chars}
        if n_features:
            x["features"] = tf.reshape(tf.cast(batch.features, tf.float32), (-1, window, n_features))
        return x, labels, sw

    return transform


@dataclass
class DevSet:
    """Dev windows in memory, with the rules' gate per token for hybrid scoring."""

    x: dict[str, np.ndarray]
    labels: np.ndarray
    weights: np.ndarray
    gates: np.ndarray

    @property
    def keras_data(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        return self.x, self.labels, self.weights


def arrays_to_inputs(pdf: Any, window: int, width: int, n_features: int, tcfg: TrainingConfig) -> DevSet:
    """The same mapping for an in-memory (pandas) set of window rows: the dev set."""
    words = np.stack(pdf["words"].to_numpy()).astype(np.int32).reshape(-1, window)
    chars = np.stack(pdf["chars"].to_numpy()).astype(np.int32).reshape(-1, window, width)
    labels = np.stack(pdf["labels"].to_numpy()).astype(np.int32).reshape(-1, window)
    weights = np.stack(pdf["weights"].to_numpy()).astype(np.float32).reshape(-1, window)
    x: dict[str, np.ndarray] = {"words": words, "chars": chars}
    if n_features:
        x["features"] = np.stack(pdf["features"].to_numpy()).astype(np.float32).reshape(-1, window, n_features)
    sw = weights * np.where(labels > 0, tcfg.phi_class_weight, 1.0).astype(np.float32)
    gates = np.stack(pdf["gates"].to_numpy()).astype(np.int32).reshape(-1, window)
    return DevSet(x, labels, sw, gates)


class HybridDevScore(keras.callbacks.Callback):
    """Scores the hybrid on dev after each epoch: best precision at the target recall.

    This is what the model is for, so model selection watches it rather than
    the dev loss, which a few confidently wrong tokens dominate. Thresholds
    are searched afresh each epoch with the same sweep as `deid tune-thresholds`.
    """

    def __init__(self, network: Network, dev: DevSet, target_recall: float, batch_size: int) -> None:
        super().__init__()
        self.network = network
        self.dev = dev
        self.target = target_recall
        self.batch_size = batch_size

    def score(self) -> tuple[float, float]:
        """(hybrid precision at the target recall, the network's own F1) on the dev windows."""
        from deid_core.training.tuning import TokenScores, sweep
        from deid_core.training.data import GATE_NEVER, GATE_SAFE

        logits = np.asarray(self.network.tagger.predict(self.dev.x, batch_size=self.batch_size, verbose=0))
        lengths = (self.dev.x["words"] > 0).sum(axis=1)
        probs = self.network.probabilities(logits, lengths)
        valid = self.dev.x["words"] > 0
        gates = self.dev.gates[valid]
        gold_phi = self.dev.labels[valid] > 0
        scores = TokenScores(
            gold_phi=gold_phi,
            rules_unsafe=gates != GATE_SAFE,
            never_release=gates == GATE_NEVER,
            p_safe=np.clip(probs[..., 0][valid].astype(np.float64), 0.0, 1.0),
        )
        best = sweep(scores).best_at_recall(self.target)
        hybrid = 0.0 if best is None else float(best.precision)
        return hybrid, network_f1(gold_phi, probs[valid].argmax(axis=-1) > 0)

    def on_epoch_end(self, epoch: int, logs: dict[str, float] | None = None) -> None:
        if logs is not None:
            logs["val_hybrid_precision"], logs["val_network_f1"] = self.score()


class WeightAverage(keras.callbacks.Callback):
    """Stochastic weight averaging: the running mean of the weights after each epoch from `start` (1-based) on.

    At the end of training the network takes the mean, and, with a dev set,
    its scores are added to the history as `avg_val_hybrid_precision` and
    `avg_val_network_f1`. The network has no batch statistics, so the mean
    needs no extra pass over the data. When training stops before `start`,
    the weights stay what the earlier callbacks left: the best epoch's, with
    early stopping after a dev score (it restores them before this runs).
    """

    def __init__(self, start: int, scorer: HybridDevScore | None = None) -> None:
        super().__init__()
        self.start = start
        self.scorer = scorer
        self.mean: list[np.ndarray] | None = None
        self.count = 0
        self.scores: dict[str, float] = {}

    def on_epoch_end(self, epoch: int, logs: dict[str, float] | None = None) -> None:
        if epoch + 1 < self.start:
            return
        weights = [np.asarray(w, dtype=np.float64) for w in self.model.get_weights()]
        self.count += 1
        if self.mean is None:
            self.mean = weights
        else:
            self.mean = [m + (w - m) / self.count for m, w in zip(self.mean, weights, strict=True)]

    def on_train_end(self, logs: dict[str, float] | None = None) -> None:
        if self.mean is None:
            return
        dtypes = [np.asarray(w).dtype for w in self.model.get_weights()]
        self.model.set_weights([m.astype(d) for m, d in zip(self.mean, dtypes, strict=True)])
        if self.scorer is not None:
            hybrid, f1 = self.scorer.score()
            self.scores = {"avg_val_hybrid_precision": hybrid, "avg_val_network_f1": f1}


def network_f1(gold_phi: np.ndarray, predicted_phi: np.ndarray) -> float:
    """Token F1 of the network alone (its most likely class is not SAFE), as `deid eval` counts it.

    Recorded beside the hybrid's score, so a training's history shows when the network starts to learn
    its training notes by heart (the dev F1 falls while the hybrid score may still rise). Overlapping
    windows count a token more than once.
    """
    from deid_core.evaluation.metrics import Counts

    return Counts(gold_tokens=int(np.sum(gold_phi)), caught=int(np.sum(gold_phi & predicted_phi)),
                  false_positives=int(np.sum(~gold_phi & predicted_phi))).f1


@dataclass
class FitResult:
    epochs: int
    best_epoch: int
    seconds: float
    history: dict[str, list[float]]


class _EpochLog(keras.callbacks.Callback):
    """One line per epoch on stderr: losses only (never data)."""

    def __init__(self, printer: Callable[[str], None]) -> None:
        super().__init__()
        self.printer = printer
        self.t0 = time.perf_counter()

    def on_epoch_end(self, epoch: int, logs: dict[str, float] | None = None) -> None:
        logs = logs or {}
        parts = ", ".join(f"{k} {v:.4f}" for k, v in sorted(logs.items()) if isinstance(v, (int, float)))
        self.printer(f"epoch {epoch + 1}: {parts} ({time.perf_counter() - self.t0:.0f}s)")


def learning_rate(tcfg: TrainingConfig, total_steps: int | None = None) -> float | keras.optimizers.schedules.LearningRateSchedule:
    """The optimizer's rate: a constant, or a cosine decay over ``total_steps`` (all epochs' steps).

    Why a decay: with a constant rate the dev scores of successive epochs jump by several points
    (hybrid precision 0.57-0.65 between epochs 6 and 10 of one run), so which epoch is kept is
    partly luck; a rate that falls towards the end lets training settle.
    """
    if tcfg.learning_rate_schedule == "constant" or not total_steps:
        return tcfg.learning_rate
    return keras.optimizers.schedules.CosineDecay(
        tcfg.learning_rate, decay_steps=total_steps, alpha=tcfg.learning_rate_floor
    )


def compile_network(network: Network, tcfg: TrainingConfig, total_steps: int | None = None) -> None:
    loss = None if network.crf is not None else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    network.tagger.compile(optimizer=keras.optimizers.Adam(learning_rate(tcfg, total_steps)), loss=loss)


def fit(
    network: Network,
    train_ds: Any,
    steps_per_epoch: int,
    dev: DevSet | None,
    tcfg: TrainingConfig,
    *,
    max_epochs: int | None = None,
    printer: Callable[[str], None] = print,
) -> FitResult:
    keras.utils.set_random_seed(tcfg.seed)
    planned_epochs = max_epochs or tcfg.max_epochs
    # a cosine schedule spans every planned step; early stopping may end before its floor
    compile_network(network, tcfg, total_steps=steps_per_epoch * planned_epochs)
    callbacks: list[keras.callbacks.Callback] = []
    scorer = HybridDevScore(network, dev, tcfg.select_at_recall, tcfg.batch_size) if dev is not None else None
    if scorer is not None:
        callbacks.append(scorer)
    callbacks.append(_EpochLog(printer))
    if scorer is not None:
        callbacks.append(
            keras.callbacks.EarlyStopping(
                monitor="val_hybrid_precision", mode="max", patience=tcfg.patience, restore_best_weights=True,
                verbose=0,
            )
        )
    # after early stopping, whose end restores the best epoch: the mean, when there is one, replaces it
    average = WeightAverage(tcfg.average_from_epoch, scorer) if tcfg.average_from_epoch is not None else None
    if average is not None:
        callbacks.append(average)
    t0 = time.perf_counter()
    hist = network.tagger.fit(
        train_ds,
        epochs=planned_epochs,
        steps_per_epoch=steps_per_epoch,
        validation_data=dev.keras_data if dev is not None else None,
        validation_batch_size=tcfg.batch_size,
        callbacks=callbacks,
        verbose=0,
    )
    history = {k: [float(v) for v in vs] for k, vs in hist.history.items()}
    epochs = len(history.get("loss", []))
    if average is not None and average.count:
        best = epochs  # the weights are the mean up to the last epoch
        history.update({k: [v] for k, v in average.scores.items()})
        if average.scores:
            printer("weights averaged from epoch {}: ".format(average.start)
                    + ", ".join(f"{k} {v:.4f}" for k, v in sorted(average.scores.items())))
    elif history.get("val_hybrid_precision"):
        best = int(np.argmax(history["val_hybrid_precision"])) + 1
    else:
        best = epochs
    return FitResult(epochs=epochs, best_epoch=best, seconds=time.perf_counter() - t0, history=history)
