"""spark-submit against a real standalone cluster (a master and two workers on localhost).

The cluster is started from the pyspark distribution by the test itself.
Model and configuration reach the executors as archives shipped by the
driver, dictionaries and key as broadcasts: the executors' working folders
are their own, as on a real cluster.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.conftest import write_synthetic_e2b

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def test_spark_submit_on_a_standalone_cluster(tmp_path: Path, key_file: Path) -> None:
    from jobs.spark_session import delta_jars
    from jobs.standalone_cluster import spark_home, standalone_cluster

    src = tmp_path / "in"
    write_synthetic_e2b(src, 6, seed=41)
    lake = tmp_path / "lake"
    submit = str(spark_home() / "bin" / "spark-submit")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_HOME": str(spark_home())}
    jars = ",".join(str(j) for j in delta_jars())
    logs = tmp_path / "logs"
    logs.mkdir()
    with standalone_cluster(workers=2, cores_per_worker=1, memory_per_worker="2g", log_dir=logs) as cluster:
        common = [submit, "--master", cluster.master_url, "--jars", jars,
                  "--conf", "spark.executor.memory=1g", "--conf", "spark.cores.max=2",
                  "--conf", f"spark.pyspark.python={sys.executable}",
                  # the jobs refuse to run with local disk encryption off
                  "--conf", "spark.io.encryption.enabled=true"]
        ingest = subprocess.run([*common, str(REPO / "jobs" / "ingest_e2b.py"), "--input", str(src),
                                 "--tables", str(lake)], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert ingest.returncode == 0, ingest.stderr[-3000:]
        assert "6 report versions" in ingest.stdout or "report versions" in ingest.stdout
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
