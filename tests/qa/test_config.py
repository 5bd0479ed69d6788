"""conf/qa.yaml is validated: a wrong value stops the job instead of loosening the gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.config import ConfigError
from deid_core.qa.config import load_qa_config


def test_the_shipped_config_loads_with_absolute_paths() -> None:
    cfg = load_qa_config()
    assert cfg.qa_dir.is_absolute() and cfg.inbox_dir == cfg.qa_dir / "inbox"
    assert 0 < cfg.gate.max_residual_phi_upper < 0.01 and cfg.review.confidence == 0.95


@pytest.mark.parametrize("body", [
    "version: 1\nqa_dir: q\ngate: {max_residual_phi_upper: 0}\n",
    "version: 1\nqa_dir: q\nsample: {length_buckets: [1000, 300]}\n",
    "version: 1\nqa_dir: q\nreview: {confidence: 0.3}\n",
    "version: 1\nqa_dir: q\ngate: {max_residual_phi: 0.01}\n",
    "version: 2\nqa_dir: q\n",
])
def test_invalid_settings_are_refused(tmp_path: Path, body: str) -> None:
    (tmp_path / "qa.yaml").write_text(body)
    with pytest.raises(ConfigError):
        load_qa_config(tmp_path / "qa.yaml")


def test_environment_override_and_relative_qa_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "qa.yaml").write_text("version: 1\nqa_dir: reviews\n")
    monkeypatch.setenv("DEID_QA_CONFIG", str(tmp_path / "qa.yaml"))
    assert load_qa_config().qa_dir == (tmp_path / "reviews").resolve()
