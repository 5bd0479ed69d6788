from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.config import ConfigError
from deid_core.replace.policy import Action, available_policies, load_policy


def test_shipped_profiles_load(cfg) -> None:
    names = available_policies(cfg.replacement.policies_dir)
    assert {"hipaa_safe_harbor", "i2b2", "strict", "tags"} <= set(names)
    for n in names:
        p = load_policy(n, cfg.replacement.policies_dir)
        assert p.name == n
        assert p.rule("PHI").action is Action.tag


def test_profiles_differ_where_the_issue_says(policy_of) -> None:
    hipaa, i2b2, strict, tags = (policy_of(n) for n in ("hipaa_safe_harbor", "i2b2", "strict", "tags"))
    assert hipaa.rule("DATE").keep_year_only and not i2b2.rule("DATE").keep_year_only
    assert hipaa.rule("AGE").keep_below_limit and not i2b2.rule("AGE").keep_below_limit
    assert "country" in hipaa.rule("LOCATION").keep_kinds and not i2b2.rule("LOCATION").keep_kinds
    assert "AGE" in i2b2.force_mask and set(strict.force_mask) >= {"DATE", "AGE", "PHONE", "ID"}
    assert hipaa.needs_key and not tags.needs_key
    assert hipaa.version != i2b2.version


def test_unlisted_category_is_tagged(tmp_path: Path, cfg) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text("name: mine\ndescription: d\ncategories:\n  NAME: {action: pseudonym}\n")
    p = load_policy(f, cfg.replacement.policies_dir)
    assert p.rule("DATE").action is Action.tag
    assert p.rule("NOT-A-CATEGORY").action is Action.tag


@pytest.mark.parametrize(
    "body",
    [
        "categories:\n  NAME: {action: shift}\n",           # a name cannot be shifted
        "categories:\n  PHI: {action: keep}\n",            # unknown PHI is never kept
        "categories:\n  DATE: {action: pseudonym}\n",
        "categories:\n  SHOE: {action: tag}\n",            # unknown category
        "categories:\n  NAME: {action: tag, colour: red}\n",  # unknown option
        "categories: {}\nforce_mask: [NAME]\n",            # not a detector category
    ],
)
def test_invalid_profiles_are_refused(tmp_path: Path, cfg, body: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("name: bad\ndescription: d\n" + body)
    with pytest.raises(ConfigError):
        load_policy(f, cfg.replacement.policies_dir)


def test_unknown_profile_name_lists_the_known_ones(cfg) -> None:
    with pytest.raises(ConfigError, match="hipaa_safe_harbor"):
        load_policy("nope", cfg.replacement.policies_dir)
