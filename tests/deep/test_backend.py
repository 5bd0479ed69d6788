"""The backend and device decision: pure logic, tested without a GPU; and the process rule."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from deid_core.deep import backend as bk
from deid_core.deep.backend import BackendChoice, BackendError, choose

BOTH = frozenset({"tensorflow", "jax"})


def test_auto_takes_jax_on_a_gpu() -> None:
    c = choose("auto", "auto", installed=BOTH, gpus=2)
    assert (c.backend, c.device) == ("jax", "gpu") and "2 GPU" in c.reason


def test_auto_without_a_gpu_takes_the_measured_cpu_backend() -> None:
    c = choose("auto", "auto", installed=BOTH, gpus=0)
    assert (c.backend, c.device) == (bk.CPU_PREFERENCE[0], "cpu") and "no GPU" in c.reason
    # only what is installed
    assert choose("auto", "auto", installed=frozenset({"tensorflow"}), gpus=0).backend == "tensorflow"
    assert choose("auto", "cpu", installed=frozenset({"jax"}), gpus=4).backend == "jax"


def test_cpu_asked_for_never_uses_the_gpu() -> None:
    c = choose("auto", "cpu", installed=BOTH, gpus=1)
    assert c.device == "cpu"


def test_gpu_asked_for_without_one_falls_back_and_says_so() -> None:
    c = choose("auto", "gpu", installed=BOTH, gpus=0)
    assert c.device == "cpu" and "running on CPU" in c.reason
    # TensorFlow is CPU-only in this project
    t = choose("tensorflow", "gpu", installed=BOTH, gpus=1)
    assert (t.backend, t.device) == ("tensorflow", "cpu") and "tensorflow-cpu" in t.reason
    # JAX asked for but absent: the installed backend, with the reason
    j = choose("jax", "auto", installed=frozenset({"tensorflow"}), gpus=0)
    assert j.backend == "tensorflow" and "jax is not installed" in j.reason


def test_explicit_backend_is_kept_on_cpu() -> None:
    assert choose("tensorflow", "auto", installed=BOTH, gpus=0).backend == "tensorflow"
    assert choose("jax", "cpu", installed=BOTH, gpus=0).backend == "jax"


def test_nothing_installed_is_an_error() -> None:
    with pytest.raises(BackendError):
        choose("auto", "auto", installed=frozenset(), gpus=0)


def test_a_loaded_keras_keeps_its_backend(caplog: pytest.LogCaptureFixture) -> None:
    import keras  # the test process has Keras loaded already

    current = keras.backend.backend()
    other = "jax" if current == "tensorflow" else "tensorflow"
    with caplog.at_level(logging.INFO, logger="deid_core.deep.backend"):
        kept = bk.activate(BackendChoice(other, "cpu", "asked"), explicit=True)
    assert kept.backend == current and "already loaded" in kept.reason
    assert any(r.levelno == logging.WARNING for r in caplog.records)
    same = bk.activate(BackendChoice(current, "cpu", "asked"))
    assert same.backend == current and same.reason == "asked"


def test_ensure_backend_decides_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import keras

    monkeypatch.setattr(bk, "_active", None)
    first = bk.ensure_backend("auto", "cpu")
    assert first.backend == keras.backend.backend()
    assert bk.ensure_backend("auto", "auto") is first
    other = bk.ensure_backend("auto", "gpu")
    assert other.device == first.device and "keeps its first backend" in other.reason


def test_a_fresh_process_gets_the_decided_backend_without_leaking_platform_settings() -> None:
    import subprocess
    import sys

    code = ("import os; from deid_core.deep.backend import ensure_backend; c = ensure_backend('jax', 'cpu'); "
            "import keras, jax; print(c.backend, keras.backend.backend(), jax.devices()[0].platform, "
            "os.environ.get('JAX_PLATFORMS'), os.environ.get('KERAS_BACKEND'))")
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("KERAS_BACKEND", "JAX_PLATFORMS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["jax", "jax", "cpu", "None", "jax"]


def test_jax_on_cpu_runs_its_lapack_on_one_openblas_thread() -> None:
    """The QR of the network's orthogonal initialiser runs in scipy's OpenBLAS: one thread, here and in children.

    (Its threaded path hung two de-identification drivers of a scale run; the race itself is not
    reproducible on demand, so this checks the setting that takes that path out.)"""
    import subprocess
    import sys

    code = ("import os; from deid_core.deep.backend import ensure_backend; ensure_backend('jax', 'cpu'); "
            "import jax, jax.numpy as jnp; jnp.linalg.qr(jnp.ones((64, 64))); "
            "from threadpoolctl import threadpool_info; "
            "blas = [i for i in threadpool_info() if i.get('internal_api') == 'openblas']; "
            "print(os.environ['OPENBLAS_NUM_THREADS'], bool(blas), max(i['num_threads'] for i in blas))")
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("KERAS_BACKEND", "JAX_PLATFORMS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["1", "True", "1"]
    # a value the user set stays
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**env, "OPENBLAS_NUM_THREADS": "2"}, check=True)
    assert out.stdout.split()[0] == "2"


_CACHE_PROBE = (
    "import sys; from deid_core.deep.backend import ensure_backend; "
    "ensure_backend('jax', 'cpu', compile_cache_dir=sys.argv[1]); "
    "import jax, jax.numpy as jnp; events = []; "
    "jax.monitoring.register_event_listener(lambda name, **kw: events.append(name)); "
    "jax.jit(lambda x: x * 2 + 1)(jnp.ones((3, 5))).block_until_ready(); "
    "print(sum(e.endswith('/cache_hits') for e in events))"
)


def test_a_second_process_loads_what_the_first_compiled(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import subprocess
    import sys

    folder = tmp_path / "xla"
    env = {k: v for k, v in os.environ.items() if k not in ("KERAS_BACKEND", "JAX_PLATFORMS")}

    def run() -> int:
        out = subprocess.run([sys.executable, "-c", _CACHE_PROBE, str(folder)], capture_output=True, text=True,
                             env=env, check=True)
        return int(out.stdout.split()[-1])

    assert run() == 0 and any(folder.iterdir())  # compiled, and kept
    assert run() > 0  # loaded, not compiled


def test_the_default_cache_is_shared_by_processes_in_other_working_folders(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark gives every application's executor its own working folder: the default must not depend on it."""
    import os
    import subprocess
    import sys

    from deid_core.config import InferenceConfig

    default = InferenceConfig().compile_cache_dir
    assert default is not None
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("KERAS_BACKEND", "JAX_PLATFORMS", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                          env.get("PYTHONPATH")])))

    def run(app: str) -> int:
        work = tmp_path / app / "0"  # an executor's work folder, one per application
        work.mkdir(parents=True)
        out = subprocess.run([sys.executable, "-c", _CACHE_PROBE, default], capture_output=True, text=True,
                             env=env, cwd=work, check=True)
        return int(out.stdout.split()[-1])

    assert run("app-1") == 0
    assert run("app-2") > 0  # the second application loads what the first compiled
    assert any(home.rglob("*-cache")) and not any((tmp_path / "app-1").rglob("*-cache"))


def test_a_cache_folder_that_cannot_be_made_leaves_the_cache_off(tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with caplog.at_level(logging.WARNING):
        assert bk.use_compile_cache(blocker / "xla") is None
    assert "compile cache folder cannot be made" in caplog.text
    assert bk.use_compile_cache(None) is None


def test_without_filelock_the_cache_stays_off(monkeypatch: pytest.MonkeyPatch, tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]
    real = bk.importlib.util.find_spec
    monkeypatch.setattr(bk.importlib.util, "find_spec", lambda name, *a: None if name == "filelock" else real(name, *a))
    with caplog.at_level(logging.WARNING):
        assert bk.use_compile_cache(tmp_path / "xla") is None
    assert "filelock" in caplog.text and not (tmp_path / "xla").exists()
