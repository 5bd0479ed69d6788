"""spark-submit against a real standalone cluster (a master and two workers on localhost).

The cluster is started from the pyspark distribution by the test itself.
The executors run the packed environment `make dist` builds (`jobs.dist`),
shipped with ``--archives ...#environment`` and run as
``spark.pyspark.python=./environment/bin/python``, as on a real cluster
whose nodes do not have this checkout's `.venv`; the driver runs here
(client mode). Model and configuration reach the executors as archives
shipped by the driver, dictionaries and key as broadcasts: the executors'
working folders are their own, as on a real cluster.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.conftest import write_synthetic_e2b

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def packed_environment() -> Path:
    """The archive `make dist` builds, packed once and reused while its inputs are unchanged."""
    from jobs.dist import build

    return build().archive


def _site(environment: Path) -> Path:
    return environment / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def test_spark_submit_on_a_standalone_cluster(tmp_path: Path, key_file: Path, packed_environment: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from jobs.dist import ENV_ALIAS, submit_options
    from jobs.spark_session import delta_jars
    from jobs.standalone_cluster import spark_home, standalone_cluster

    # Nothing points the executors at this machine's interpreter: only the options below do. Bytecode
    # writing stays on, so the archived packages the executors import leave their caches behind.
    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH"):
        monkeypatch.delenv(var, raising=False)
    src = tmp_path / "in"
    write_synthetic_e2b(src, 6, seed=41)
    lake = tmp_path / "lake"
    submit = str(spark_home() / "bin" / "spark-submit")
    env = {**os.environ, "SPARK_HOME": str(spark_home())}
    logs = tmp_path / "logs"
    logs.mkdir()
    with standalone_cluster(workers=2, cores_per_worker=1, memory_per_worker="2g", log_dir=logs) as cluster:
        common = [submit, "--master", cluster.master_url,
                  *submit_options(packed_environment, delta_jars(), driver_python=sys.executable),
                  "--conf", "spark.executor.memory=1g", "--conf", "spark.cores.max=2"]
        ingest = subprocess.run([*common, str(REPO / "jobs" / "ingest_e2b.py"), "--input", str(src),
                                 "--tables", str(lake)], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert ingest.returncode == 0, ingest.stderr[-3000:]
        assert "report versions" in ingest.stdout
        run = subprocess.run([*common, str(REPO / "jobs" / "deidentify.py"), "--tables", str(lake),
                              "--key-file", str(key_file), "--policy", "hipaa_safe_harbor", "--device", "auto"],
                             cwd=tmp_path, env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]
    assert "0 failed" in run.stdout
    # no GPU resources on this cluster: auto runs the network on CPU and says why
    assert "network device:        cpu (no GPU resources in the Spark configuration" in run.stdout
    # the executors ran in the workers' own folders, where the shipped archives were unpacked
    unpacked = list(logs.glob("work*/app-*/*/deid_model_*"))
    assert unpacked, "the model archive did not reach the executors"

    # Every executor of both jobs unpacked the environment in its own folder ...
    executors = sorted(p for p in logs.glob("work*/app-*/*") if p.is_dir())
    assert executors, "no executor folders"
    environments = [e / ENV_ALIAS for e in executors]
    missing = [str(e.relative_to(logs)) for e in environments if not (e / "bin" / "python").exists()]
    assert not missing, f"executors without the packed environment: {missing}"
    # ... a runtime environment: the project's code inside, no editable hook into this checkout, no TensorFlow
    site = _site(environments[0])
    assert (site / "deid_core" / "pipeline.py").is_file() and (site / "udfs" / "deidentify_fields.py").is_file()
    assert not list(site.glob("__editable__*")), "the editable install's hook into the checkout was packed"
    assert not (site / "tensorflow").exists()
    # ... and its interpreter imported the archived code: the archive holds no bytecode caches of the
    # project, so these were written by ./environment/bin/python importing from the archive's site-packages
    # (an interpreter outside it would have imported this checkout's copy)
    for pkg, module in (("udfs", "parse_e2b"), ("udfs", "deidentify_fields"), ("deid_core", "pipeline")):
        compiled = [c for e in environments for c in (_site(e) / pkg / "__pycache__").glob(f"{module}.*.pyc")]
        assert compiled, f"no executor imported {pkg}.{module} from the packed environment"
    # 1.2 GB per executor: the logs stay for a failed run, the unpacked copies go
    for environment in environments:
        shutil.rmtree(environment, ignore_errors=True)


def test_sigterm_stops_the_cluster_it_started(tmp_path: Path) -> None:
    """`kill` (SIGTERM) of `python -m jobs.standalone_cluster` stops its master and workers, as Ctrl-C does:
    a scheduler or a shell ending the process leaves no Spark daemon running."""
    import signal

    import psutil

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "jobs.standalone_cluster", "--workers", "1"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    daemons: list[psutil.Process] = []
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("master spark://"), "the cluster did not come up"
        daemons = [p for p in psutil.Process(proc.pid).children(recursive=True) if p.name() == "java"]
        assert len(daemons) == 2, "a master and a worker JVM"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        _, alive = psutil.wait_procs(daemons, timeout=30)
        assert not alive, "JVMs left running after SIGTERM"
    finally:
        for p in [proc, *daemons]:
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                p.kill()
