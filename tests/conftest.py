"""Shared fixtures: configuration, the dictionary artifact, the rules, shared data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deid_core.config import DeidConfig, load_config
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.rules.deidentifier import RuleDeidentifier

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
#: the suite's Spark defaults (shorter-lived JVMs, small Delta snapshots); set before any JVM starts,
#: and inherited by every subprocess (spark-submit, Airflow, bench scripts). A developer's own wins.
SPARK_TEST_CONF = REPO / "tests" / "fixtures" / "spark_conf"
os.environ.setdefault("SPARK_CONF_DIR", str(SPARK_TEST_CONF))


@pytest.fixture(scope="session")
def cfg() -> DeidConfig:
    return load_config()


@pytest.fixture(scope="session")
def artifact(cfg: DeidConfig, tmp_path_factory: pytest.TempPathFactory) -> DictionaryArtifact:
    """The configured artifact (built by `make dictionaries`), or one built now."""
    path = cfg.dictionaries.artifact
    if not path.exists():
        from deid_core.dictionaries.build import build_artifact

        return build_artifact(cfg, tmp_path_factory.mktemp("dict") / "deid_dictionaries.json.gz")
    return DictionaryArtifact.load(path)


@pytest.fixture(scope="session")
def rules(cfg: DeidConfig, artifact: DictionaryArtifact) -> RuleDeidentifier:
    return RuleDeidentifier(artifact, cfg.rules)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, or skip with a message saying what is missing."""
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data not found at {SHARED_DATA} (CI provides it)")
    return SHARED_DATA
