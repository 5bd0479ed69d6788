"""What a Spark Python worker loads once and keeps: the de-identification pipeline.

Executors get everything by Spark's own means, never from a shared folder:
the configuration folder and the model travel as archives
(`SparkContext.addArchive`, or `spark-submit --archives`) and are found with
`SparkFiles`; the dictionary artifact and the secret key travel as
broadcast variables (loaded once per executor, never written to logs or to
the Spark configuration, which the UI would show).

A worker process is reused across tasks (Spark's default), so the module
level cache below means one model load per worker, not per batch.

On GPU executors (the driver sets `PipelineSpec.device` to "gpu" only when
the Spark configuration gives executors GPUs), the worker binds the GPU
address Spark's resource scheduler assigned to its task before the network
backend starts, so concurrent workers of one executor never pick a device
by themselves.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from deid_core.config import load_config, with_inference
from deid_core.detectors import Method
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.pipeline import DeidPipeline
from deid_core.replace.keys import SecretKey
from deid_core.replace.policy import load_policy

CONF_ARCHIVE = "deid_conf"
MODEL_ARCHIVE = "deid_model"
#: where the driver puts the chosen policy file inside the configuration archive
#: (a profile may live outside the configuration folder, or be given as a path)
SHIPPED_POLICY = ".deid-shipped/policy.yaml"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PipelineSpec:
    """Everything a worker needs to rebuild the driver's pipeline (picklable, no secrets)."""

    method: str
    policy: str
    #: the configuration file the driver resolved, inside the configuration folder
    config_name: str = "deid.yaml"
    #: sha256 of the bytes the driver validated; a worker that reads other bytes
    #: refuses to build a pipeline (None: not checked, for tests of a local folder)
    config_sha256: str | None = None
    #: a local folder for tests and local mode, else None: use the shipped archive
    conf_dir: str | None = None
    model_dir: str | None = None
    #: names of the shipped archives; they carry a content hash, so a new model or
    #: configuration is a new archive and never a stale cached pipeline
    conf_archive: str = CONF_ARCHIVE
    model_archive: str = MODEL_ARCHIVE
    #: (name, version) pairs of the pipeline the driver built; a worker whose
    #: pipeline reports other versions refuses to run it (empty: not checked)
    versions: tuple[tuple[str, str], ...] = ()
    #: where the network runs on the executors: "gpu" only when the driver found GPU
    #: resources in the Spark configuration (`jobs.deidentify.executor_device`)
    device: str = "cpu"
    #: Keras backend preference (deep.inference.backend)
    backend: str = "auto"

    @property
    def cache_key(self) -> str:
        return hashlib.sha256(repr(self).encode()).hexdigest()


def _shipped(name: str) -> Path:
    from pyspark import SparkFiles

    return Path(SparkFiles.get(name))


def _resolve(spec: PipelineSpec) -> tuple[Path, str | Path, Path]:
    """The configuration file, the policy (a name, or a file) and the model folder of `spec`."""
    conf = Path(spec.conf_dir) if spec.conf_dir else _shipped(spec.conf_archive)
    model = Path(spec.model_dir) if spec.model_dir else _shipped(spec.model_archive)
    policy: str | Path = spec.policy
    if Path(spec.policy).suffix in (".yaml", ".yml") and not Path(spec.policy).is_absolute():
        policy = conf / spec.policy
    return conf / spec.config_name, policy, model


def task_gpu_addresses() -> list[str]:
    """The GPU addresses Spark assigned to the running task (empty outside a task or without GPUs)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return []
    info = ctx.resources().get("gpu")
    return list(info.addresses) if info is not None else []


def bind_gpu(addresses: list[str]) -> str | None:
    """Make the task's GPU the only one this Python worker sees; returns the address bound.

    Must run before JAX initialises (the worker's first pipeline build):
    CUDA_VISIBLE_DEVICES is read once per process. A worker is reused for
    later tasks of the same executor, which Spark gives the same address
    when, as documented, each executor owns one GPU shared by its tasks.
    """
    if not addresses:
        return None
    os.environ["CUDA_VISIBLE_DEVICES"] = addresses[0]
    return addresses[0]


def _check_config(spec: PipelineSpec, config_file: Path) -> None:
    if spec.config_sha256 is None:
        return
    try:
        found = hashlib.sha256(config_file.read_bytes()).hexdigest()
    except OSError:
        raise VersionMismatch("the worker cannot read the configuration the driver shipped") from None
    if found != spec.config_sha256:
        raise VersionMismatch("the worker's configuration differs from the one the driver checked")


_lock = threading.Lock()
_cache: dict[str, DeidPipeline] = {}


def pipeline_for(spec: PipelineSpec, dictionary_bytes: bytes, key_material: bytes | None) -> DeidPipeline:
    """The cached pipeline of this worker for `spec`; built on first use.

    Raises VersionMismatch when the pipeline is not the one the driver
    checked (another configuration file, model, dictionary or policy than
    the spec names).
    """
    ident = spec.cache_key + hashlib.sha256(dictionary_bytes).hexdigest()[:16]
    if key_material is not None:
        ident += SecretKey(key_material).fingerprint
    with _lock:
        pipe = _cache.get(ident)
        if pipe is None:
            config_file, policy_ref, model_dir = _resolve(spec)
            _check_config(spec, config_file)
            device = spec.device
            if device == "gpu" and bind_gpu(task_gpu_addresses()) is None:
                device = "cpu"  # the scheduler gave this task no GPU: never guess one
                log.warning("no GPU address assigned to this task; the network runs on CPU")
            cfg = with_inference(load_config(config_file), backend=spec.backend, device=device)
            artifact = DictionaryArtifact.from_bytes(dictionary_bytes)
            policy = load_policy(policy_ref, cfg.replacement.policies_dir)
            key = SecretKey(key_material) if key_material is not None else None
            pipe = DeidPipeline.build(cfg, policy, key, method=Method(spec.method), artifact=artifact,
                                      model_dir=model_dir)
            if spec.versions and pipe.versions() != dict(spec.versions):
                raise VersionMismatch("the worker's pipeline differs from the one the driver checked")
            _cache[ident] = pipe
        return pipe


class VersionMismatch(RuntimeError):
    """A worker found another configuration or built another pipeline than the driver checked.

    Its rows are failed (E_LOAD): fully masked in silver, and quarantined.
    """
