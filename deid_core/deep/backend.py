"""Which Keras backend and device run the network, chosen before Keras is imported.

Keras 3 reads ``KERAS_BACKEND`` once, at its first import, and the choice
holds for the whole process. The same committed model (pure Keras ops,
`deid_core.deep.model`) loads on TensorFlow and on JAX; which one runs is a
setting (``deep.inference`` in `conf/deid.yaml`), and this module turns the
setting plus what the machine has into one decision with a reason that is
logged (no text, so nothing of a report can reach the log).

Facts the decision rests on:

* the project pins ``tensorflow-cpu``: TensorFlow never has a GPU here, so
  a GPU means JAX with a CUDA jaxlib (the GPU executors' image);
* on CPU, ``auto`` takes the backend that `bench/inference.py` measured
  faster for this network (:data:`CPU_PREFERENCE`, figures in
  docs/measurements.md), falling back to whichever is installed;
* once Keras is imported the backend cannot change: a later, different
  choice keeps the loaded backend and says so;
* with ``backend: auto``, a ``KERAS_BACKEND`` already set in the
  environment is honoured (Keras's own convention).

Spark binds a task's GPU before this runs (`udfs.runtime`): it sets
``CUDA_VISIBLE_DEVICES`` to the address Spark assigned, so "the GPU" here is
always the one the scheduler gave the worker.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

BackendName = Literal["tensorflow", "jax"]
BackendPref = Literal["auto", "tensorflow", "jax"]
DevicePref = Literal["auto", "cpu", "gpu"]

#: CPU backends, fastest first, as measured by `bench/inference.py` on this project's network
CPU_PREFERENCE: tuple[BackendName, ...] = ("jax", "tensorflow")


class BackendError(RuntimeError):
    """No Keras backend is installed that can run the network."""


@dataclass(frozen=True)
class BackendChoice:
    """The backend and device that run the network, and why (for the log and benchmarks)."""

    backend: BackendName
    device: Literal["cpu", "gpu"]
    reason: str


def installed_backends() -> frozenset[BackendName]:
    """The backends whose package is importable (found without importing it)."""
    found: set[BackendName] = set()
    if importlib.util.find_spec("tensorflow") is not None:
        found.add("tensorflow")
    if importlib.util.find_spec("jax") is not None:
        found.add("jax")
    return frozenset(found)


def jax_gpu_count() -> int:
    """GPUs JAX can use in this process (0 without a CUDA jaxlib or a visible GPU)."""
    if importlib.util.find_spec("jax") is None:
        return 0
    import jax

    try:
        return len(jax.devices("gpu"))
    except RuntimeError:  # no GPU backend in this jaxlib, or no device visible
        return 0


def choose(backend: BackendPref, device: DevicePref, *, installed: frozenset[BackendName],
           gpus: int) -> BackendChoice:
    """The decision, from the settings and the machine's facts (pure: tested without a GPU)."""
    if not installed:
        raise BackendError("neither TensorFlow nor JAX is installed (make setup)")
    cpu_order = [b for b in CPU_PREFERENCE if b in installed]

    def on_cpu(why: str) -> BackendChoice:
        if backend != "auto" and backend in installed:
            return BackendChoice(backend, "cpu", why)
        lead = f"{backend} is not installed; " if backend != "auto" else ""
        return BackendChoice(cpu_order[0], "cpu", f"{lead}{why}; {cpu_order[0]} is the faster CPU backend installed")

    if device in ("gpu", "auto") and backend in ("auto", "jax"):
        if "jax" in installed and gpus > 0:
            return BackendChoice("jax", "gpu", f"JAX sees {gpus} GPU(s)")
        if device == "gpu":
            return on_cpu("a GPU was asked for but JAX sees none (no CUDA jaxlib or no device); running on CPU")
        return on_cpu("no GPU visible to JAX")
    if device == "gpu":  # backend == "tensorflow"
        return on_cpu("a GPU was asked for with TensorFlow, which is CPU-only here (tensorflow-cpu); running on CPU")
    if device == "cpu":
        return on_cpu("CPU asked for")
    return on_cpu("TensorFlow runs on CPU here (tensorflow-cpu)")


def single_threaded_lapack() -> None:
    """One thread for the OpenBLAS that JAX's CPU linear algebra calls (scipy's), here and in children.

    Building the network runs LAPACK once (the orthogonal initialiser's QR). OpenBLAS's threaded
    path can then spin for ever in `exec_blas_async_wait`: two of nine de-identification drivers
    on a standalone cluster hung so at exit, one core busy (docs/measurements.md, scale run). The
    network's arithmetic runs in XLA, not OpenBLAS, so one thread costs nothing. The variable covers
    a library loaded later; threadpoolctl (a well-kept library) one already loaded.
    A value the user set stays.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if os.environ["OPENBLAS_NUM_THREADS"] == "1":
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")


def activate(choice: BackendChoice, *, explicit: bool = False) -> BackendChoice:
    """Make `choice` the process's Keras backend; returns what is in force (and logs it).

    Call before the first ``import keras``. If Keras is already loaded with
    another backend, that one stays (a process cannot switch) and the
    returned choice says so.
    """
    if "keras" in sys.modules:
        import keras

        current = keras.backend.backend()
        if current != choice.backend:
            kept = BackendChoice(current, "cpu" if current == "tensorflow" else choice.device,  # type: ignore[arg-type]
                                 f"Keras was already loaded with {current}; {choice.backend} not used ({choice.reason})")
            # an explicit setting that cannot be honoured is worth a warning; `auto` is not
            log.log(logging.WARNING if explicit else logging.INFO,
                    "network backend: %s on %s (%s)", kept.backend, kept.device, kept.reason)
            return kept
    else:
        os.environ["KERAS_BACKEND"] = choice.backend
        if choice.backend == "jax" and choice.device == "cpu":
            single_threaded_lapack()
            # keep JAX off any accelerator it might find, as decided: in this process only
            # (an environment variable would reach Spark's workers, started after the driver
            # decided on CPU, and hide the GPU of a local-mode GPU run from them)
            import jax

            jax.config.update("jax_platforms", "cpu")
    log.info("network backend: %s on %s (%s)", choice.backend, choice.device, choice.reason)
    return choice


_active: BackendChoice | None = None


def ensure_backend(backend: BackendPref = "auto", device: DevicePref = "auto", *,
                   compile_cache_dir: str | Path | None = None) -> BackendChoice:
    """Decide once per process and activate; later calls return the first decision.

    A later call asking for something else (another backend or device)
    cannot change a loaded Keras; it gets the decision in force, with a
    reason saying so. `compile_cache_dir`: see `use_compile_cache` (first
    call only, like the backend).
    """
    global _active
    if _active is None:
        env = os.environ.get("KERAS_BACKEND")
        if backend == "auto" and env in ("tensorflow", "jax"):
            backend = env  # type: ignore[assignment]  # the user's environment names one
        gpus = jax_gpu_count() if device in ("gpu", "auto") and backend in ("auto", "jax") else 0
        _active = activate(choose(backend, device, installed=installed_backends(), gpus=gpus),
                           explicit=backend != "auto" or device != "auto")
        if _active.backend == "jax":
            use_compile_cache(compile_cache_dir)
        return _active
    wanted_backend = backend == "auto" or backend == _active.backend
    wanted_device = device == "auto" or device == _active.device
    if wanted_backend and wanted_device:
        return _active
    return replace(_active, reason=f"{_active.reason}; asked later for {backend} on {device}, "
                                   "but a process keeps its first backend")


#: bytes the compilation cache may hold before JAX drops the entries least recently used; setting
#: a size is also what makes JAX lock the folder (filelock) around every read and write, so
#: concurrent Spark workers never read an entry another is still writing
COMPILE_CACHE_BYTES = 1 << 30


def cache_folder(folder: str | Path) -> Path:
    """`deep.inference.compile_cache_dir` as a path: `$VARIABLES` and `~` expanded, relative left relative."""
    return Path(os.path.expandvars(str(folder))).expanduser()


def use_compile_cache(folder: str | Path | None) -> Path | None:
    """Keep JAX's compiled network calls in `folder` (made if missing); returns the folder, or None.

    Every padded batch shape (`deid_core.deep.predictor.batch_shape`) is
    compiled once, about a second each on a CPU core. In memory only, every
    Spark Python worker pays that again for each shape it meets, which at
    10,000 reports was a tenth of the de-identification stage. On disk, the
    first worker of a machine compiles and the others, and the next runs,
    load. Entries are keyed by the program, JAX version and device, never
    by data, and hold no data. `~` and `$VARIABLES` in `folder` are
    expanded; a relative folder is relative to the working folder, which
    on a Spark executor belongs to one application (hence the per-user
    default of `deep.inference.compile_cache_dir`). A folder that cannot
    be made leaves the cache off, with a warning (compiling is slower,
    never wrong).
    """
    if folder is None:
        return None
    if importlib.util.find_spec("filelock") is None:  # unlocked, a reader could see half an entry
        log.warning("compile cache off: the filelock package is missing; compiled calls kept in memory only")
        return None
    path = cache_folder(folder).absolute()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("compile cache folder cannot be made (%s); compiled calls kept in memory only",
                    type(exc).__name__)
        return None
    import jax

    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_compilation_cache_max_size", COMPILE_CACHE_BYTES)
    log.info("compiled network calls cached in %s", path)
    return path


def active_backend() -> BackendChoice | None:
    """The decision in force, if `ensure_backend` has run in this process."""
    return _active


def to_device(arrays: dict[str, object]) -> dict[str, object]:
    """The arrays as tensors on the backend's device, copied now (timed apart by benchmarks)."""
    import keras

    out = {k: keras.ops.convert_to_tensor(v) for k, v in arrays.items()}
    if keras.backend.backend() == "jax":
        import jax

        jax.block_until_ready(list(out.values()))
    return out
