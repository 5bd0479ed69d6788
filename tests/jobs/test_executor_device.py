"""Where executors run the network: decided from Spark's resource configuration, GPU bound per task."""

from __future__ import annotations

import os

import pytest

from jobs.deidentify import JobConfigError, executor_device
from udfs import runtime

GPU_CLUSTER = {"spark.master": "spark://head:7077", "spark.executor.resource.gpu.amount": "1",
               "spark.task.resource.gpu.amount": "0.25",
               "spark.executor.resource.gpu.discoveryScript": "./gpu_discovery.sh"}


def test_auto_uses_gpus_only_when_spark_schedules_them() -> None:
    assert executor_device(GPU_CLUSTER, "auto")[0] == "gpu"
    where, why = executor_device({"spark.master": "spark://head:7077"}, "auto")
    assert where == "cpu" and "no GPU resources" in why
    # executors with GPUs but tasks given no share: Spark would not assign addresses
    no_task = {k: v for k, v in GPU_CLUSTER.items() if k != "spark.task.resource.gpu.amount"}
    assert executor_device(no_task, "auto")[0] == "cpu"


def test_local_mode_reads_the_driver_resources() -> None:
    local = {"spark.master": "local[4]", "spark.driver.resource.gpu.amount": "1", "spark.task.resource.gpu.amount": "0.25"}
    assert executor_device(local, "gpu")[0] == "gpu"
    assert executor_device({"spark.master": "local[*]"}, "auto")[0] == "cpu"


def test_gpu_asked_for_without_resources_falls_back_and_says_so() -> None:
    where, why = executor_device({"spark.master": "yarn"}, "gpu")
    assert where == "cpu" and "running on CPU" in why


def test_cpu_asked_for_and_bad_values() -> None:
    assert executor_device(GPU_CLUSTER, "cpu") == ("cpu", "CPU asked for")
    with pytest.raises(JobConfigError):
        executor_device(GPU_CLUSTER, "tpu")
    with pytest.raises(JobConfigError):
        executor_device({**GPU_CLUSTER, "spark.executor.resource.gpu.amount": "one"}, "auto")


def test_the_task_gpu_is_bound_before_the_backend_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert runtime.bind_gpu([]) is None and "CUDA_VISIBLE_DEVICES" not in os.environ
    assert runtime.bind_gpu(["3", "4"]) == "3" and os.environ["CUDA_VISIBLE_DEVICES"] == "3"
    # outside a Spark task there is no assignment
    assert runtime.task_gpu_addresses() == []


def test_a_gpu_spec_without_an_assigned_gpu_builds_a_cpu_pipeline(monkeypatch: pytest.MonkeyPatch, cfg) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from tests.site_config import REPO

    seen = {}

    def fake_build(cfg, policy, key, **kw):  # type: ignore[no-untyped-def]
        seen["device"] = cfg.deep.inference.device
        raise RuntimeError("stop here")

    monkeypatch.setattr(runtime.DeidPipeline, "build", staticmethod(fake_build))
    monkeypatch.setattr(runtime, "task_gpu_addresses", lambda: [])
    runtime._cache.clear()
    spec = runtime.PipelineSpec("hybrid", "tags", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"),
                                device="gpu")
    with pytest.raises(RuntimeError, match="stop here"):
        runtime.pipeline_for(spec, Path(cfg.dictionaries.artifact).read_bytes(), None)
    assert seen["device"] == "cpu"
