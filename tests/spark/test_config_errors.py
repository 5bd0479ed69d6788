"""A configuration that cannot work stops the job on the driver: exit 2, one line, nothing written.

Before, a missing model or an unknown method reached the executors, which
turned every row into fully masked E_LOAD output and overwrote good silver
rows; an unknown policy or a broken policy file ended in a traceback.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.conftest import write_synthetic_e2b

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def _tree_digest(root: Path) -> dict[str, str]:
    """Every file under `root` (data files and the Delta log) with its SHA-256."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory: pytest.TempPathFactory, key_file: Path) -> Path:  # type: ignore[no-untyped-def]
    from jobs.deidentify import prepare, run_batch
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    root = tmp_path_factory.mktemp("cfg")
    write_synthetic_e2b(root / "in", 4, seed=31)
    tables = Tables(root / "lake")
    ingest(spark, str(root / "in"), tables)
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file, model_dir=None)
    run_batch(spark, tables, ctx)
    return root


def _bad_inputs(root: Path) -> dict[str, list[str]]:
    broken_model = root / "broken-model"
    broken_model.mkdir(exist_ok=True)
    (broken_model / "manifest.json").write_text("{}")
    bad_yaml = root / "bad_yaml.yaml"
    bad_yaml.write_text("name: x\ncategories: [\n")
    bad_policy = root / "bad_policy.yaml"
    bad_policy.write_text("name: bad_policy\ndescription: shifts names\ncategories:\n  NAME: {action: shift}\n")
    return {
        "missing model": ["--model", str(root / "no-such-model")],
        "broken model": ["--model", str(broken_model)],
        "unknown method": ["--method", "bert"],
        "unknown policy": ["--policy", "no_such_policy"],
        "policy not YAML": ["--policy", str(bad_yaml)],
        "invalid policy": ["--policy", str(bad_policy)],
        "unknown mode": ["--mode", "nightly"],
        "unknown device": ["--device", "tpu"],
    }


def test_bad_configuration_exits_2_with_one_line_and_writes_nothing(lake: Path, key_file: Path) -> None:
    before = _tree_digest(lake / "lake")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "DEID_LOCAL_DIR": str(lake / "local")}
    for what, args in _bad_inputs(lake).items():
        proc = subprocess.run(
            [sys.executable, "-m", "jobs.deidentify", "--tables", str(lake / "lake"), "--key-file", str(key_file),
             "--master", "local[1]", *args],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        assert proc.returncode == 2, (what, proc.returncode, lines[-5:])
        assert len(lines) == 1 and lines[0].startswith("error: "), (what, lines)
        assert "Traceback" not in proc.stderr
        assert _tree_digest(lake / "lake") == before, f"{what}: the lake changed"
    # nothing was started that needed a private folder
    assert not (lake / "local").exists() or not any((lake / "local").iterdir())


def test_spark_submit_without_local_disk_encryption_is_refused(tmp_path: Path) -> None:
    from jobs.spark_session import delta_jars
    from jobs.standalone_cluster import spark_home

    write_synthetic_e2b(tmp_path / "in", 2, seed=5)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_HOME": str(spark_home()), "DEID_LOCAL_DIR": str(tmp_path / "local")}
    proc = subprocess.run(
        [str(spark_home() / "bin" / "spark-submit"), "--master", "local[1]",
         "--jars", ",".join(str(j) for j in delta_jars()), str(REPO / "jobs" / "ingest_e2b.py"),
         "--input", str(tmp_path / "in"), "--tables", str(tmp_path / "lake")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    # spark-submit hands the Python driver's stderr to its own stdout
    assert "error: local disk encryption is off" in proc.stdout + proc.stderr
    assert not (tmp_path / "lake").exists()
