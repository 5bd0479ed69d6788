"""Airflow runs in its own virtualenv (`make airflow-setup`): these tests drive it as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
AF_PYTHON = REPO / ".venv-airflow" / "bin" / "python"
LAUNCHER = REPO / "airflow_dags" / "airflow.sh"


@pytest.fixture(scope="session")
def af_python() -> Path:
    if not AF_PYTHON.exists():
        pytest.skip("Airflow's virtualenv is missing: `make airflow-setup` (part of `make test`) creates it")
    return AF_PYTHON


def airflow_env(tmp: Path, config: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYSPARK_GATEWAY"))}
    env.update({
        "AIRFLOW_HOME": str(tmp / "airflow_home"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "airflow_dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW_CONN_DEID_SPARK": json.dumps({"conn_type": "spark", "host": "local[2]"}),
    })
    if config is not None:
        env["DEID_AIRFLOW_CONFIG"] = str(config)
    return env


def write_settings(tmp: Path, **updates: object) -> Path:
    """conf/airflow.yaml with absolute paths into `tmp` and the given top-level/nightly updates."""
    raw = yaml.safe_load((REPO / "conf" / "airflow.yaml").read_text())
    raw["project_dir"] = str(REPO)
    nightly = updates.pop("nightly", {})
    raw.update(updates)
    raw["nightly"].update(nightly)
    path = tmp / "airflow.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def run_airflow(args: list[str], env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHER), *args], env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)
