"""Configuration checks added with clinical-value evidence and per-reason thresholds."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from deid_core.config import ConfigError, load_config
from tests.site_config import write_site_config


def _write(folder: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    """A copy of conf/ whose site.yaml is edited by `edit` (a function of the parsed YAML)."""
    site = write_site_config(folder)
    raw = yaml.safe_load(site.read_text(encoding="utf-8"))
    edit(raw)
    site.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return site


def test_an_unknown_rule_reason_in_the_combiner_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "c", lambda raw: raw["deep"]["combiner"].__setitem__("by_reason", {"clinicl": 0.0}))
    with pytest.raises(ConfigError, match="unknown rule reasons"):
        load_config(path)


def test_a_family_is_either_fixed_or_capped(tmp_path: Path) -> None:
    def both(raw) -> None:  # type: ignore[no-untyped-def]
        raw["deep"]["combiner"]["by_reason"] = {"near_word": 0.9}
        raw["deep"]["combiner"]["by_reason_ceiling"] = {"near_word": 0.98}

    with pytest.raises(ConfigError, match="both fixed"):
        load_config(_write(tmp_path / "c", both))


def test_clinical_evidence_is_optional_and_its_lists_are_required_when_present(tmp_path: Path) -> None:
    without = _write(tmp_path / "a", lambda raw: raw["rules"].pop("clinical"))
    broken = _write(tmp_path / "b", lambda raw: raw["rules"]["clinical"].pop("analytes"))
    assert load_config(without).rules.clinical is None
    with pytest.raises(ConfigError, match="analytes"):
        load_config(broken)
