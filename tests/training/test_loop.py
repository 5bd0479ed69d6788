"""deid_core/training/loop.py: the network's own dev F1 that each epoch records, and the mean of the weights."""

from __future__ import annotations

import numpy as np
import pytest

from deid_core.training.loop import network_f1


def test_network_f1_counts_tokens() -> None:
    gold = np.array([True, True, True, False, False, False])
    predicted = np.array([True, True, False, True, False, False])
    # tp 2, fn 1, fp 1: precision 2/3, recall 2/3
    assert network_f1(gold, predicted) == pytest.approx(2 / 3)


def test_network_f1_edge_cases() -> None:
    none = np.zeros(4, dtype=bool)
    assert network_f1(none, none) == 0.0
    assert network_f1(np.ones(4, dtype=bool), none) == 0.0
    assert network_f1(none, np.ones(4, dtype=bool)) == 0.0
    assert network_f1(np.ones(4, dtype=bool), np.ones(4, dtype=bool)) == 1.0


def _tiny_model():  # type: ignore[no-untyped-def]
    import keras

    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    return model


def test_weight_average_keeps_the_mean_of_the_epochs_from_its_start() -> None:
    import keras

    from deid_core.training.loop import WeightAverage

    class Snapshot(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.after: list[list[np.ndarray]] = []

        def on_epoch_end(self, epoch: int, logs: dict[str, float] | None = None) -> None:
            self.after.append([np.array(w) for w in self.model.get_weights()])

    keras.utils.set_random_seed(3)
    model = _tiny_model()
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 3)), rng.normal(size=(32, 2))
    snap, avg = Snapshot(), WeightAverage(start=2)
    model.fit(x, y, epochs=4, batch_size=8, verbose=0, callbacks=[snap, avg])
    assert avg.count == 3
    expected = [np.mean([s[i] for s in snap.after[1:]], axis=0) for i in range(len(snap.after[0]))]
    for got, want in zip(model.get_weights(), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the mean is not the last epoch's weights
    assert not np.allclose(model.get_weights()[0], snap.after[-1][0])


def test_weight_average_leaves_the_weights_when_training_stops_before_its_start() -> None:
    from deid_core.training.loop import WeightAverage

    model = _tiny_model()
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))
    avg = WeightAverage(start=5)
    model.fit(x, y, epochs=2, verbose=0, callbacks=[avg])
    last = [np.array(w) for w in model.get_weights()]
    assert avg.count == 0 and avg.mean is None
    for got, want in zip(model.get_weights(), last, strict=True):
        np.testing.assert_array_equal(got, want)


def test_learning_rate_is_constant_unless_a_cosine_schedule_is_configured() -> None:
    from deid_core.config import load_config
    from deid_core.training.loop import learning_rate

    tcfg = load_config().deep.training.model_copy(update={"learning_rate": 0.01})
    assert tcfg.learning_rate_schedule == "constant"
    assert learning_rate(tcfg, 100) == 0.01
    cosine = tcfg.model_copy(update={"learning_rate_schedule": "cosine", "learning_rate_floor": 0.1})
    # without a step count (a caller that does not know the epochs) the rate stays constant
    assert learning_rate(cosine, None) == 0.01
    schedule = learning_rate(cosine, 100)
    rates = [float(schedule(step)) for step in (0, 50, 100, 150)]
    assert rates[0] == pytest.approx(0.01)
    assert rates[1] == pytest.approx(0.01 * (0.1 + 0.9 * 0.5))  # half way down the half cosine
    assert rates[2] == pytest.approx(0.001) and rates[3] == pytest.approx(0.001)  # the floor, then held


def test_fit_with_a_cosine_schedule_ends_at_the_floor() -> None:
    """The schedule spans all epochs' steps: the optimizer's rate after the last step is the floor."""
    import keras

    from deid_core.config import load_config
    from deid_core.training.loop import learning_rate

    tcfg = load_config().deep.training.model_copy(
        update={"learning_rate": 0.05, "learning_rate_schedule": "cosine", "learning_rate_floor": 0.2})
    model = _tiny_model()
    steps = 4 * 3  # 32 rows in batches of 8, three epochs
    model.compile(optimizer=keras.optimizers.SGD(learning_rate(tcfg, steps)), loss="mse")
    rng = np.random.default_rng(2)
    model.fit(rng.normal(size=(32, 3)), rng.normal(size=(32, 2)), epochs=3, batch_size=8, verbose=0)
    assert int(model.optimizer.iterations) == steps
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05 * 0.2)
