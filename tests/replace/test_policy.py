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


def test_a_policy_that_replaces_young_ages_keeps_every_age_masked(policy_of) -> None:
    """The hybrid shows an age under the limit by default; a profile that tags it must mask them all."""
    hipaa, i2b2, strict, tags = (policy_of(n) for n in ("hipaa_safe_harbor", "i2b2", "strict", "tags"))
    assert hipaa.masked_patterns == []
    assert i2b2.masked_patterns == ["AGE"]
    assert tags.masked_patterns == ["AGE"] and tags.force_mask == []
    assert set(strict.masked_patterns) == set(strict.force_mask)


def test_masked_patterns_reach_the_pipelines_detector(cfg) -> None:
    """Shown under Safe Harbor, masked under a profile that tags every age (same network, same text)."""
    from deid_core.detectors import Method
    from deid_core.pipeline import DeidPipeline, throwaway_key

    text = "A 45 yo man developed a rash."
    out = {}
    for name in ("hipaa_safe_harbor", "tags"):
        policy = load_policy(name, cfg.replacement.policies_dir)
        pipe = DeidPipeline.build(cfg, policy, throwaway_key() if policy.needs_key else None, method=Method.hybrid)
        out[name] = {text[m.start:m.end] for m in pipe.detector.detect([text])[0]}
    assert "45" not in out["hipaa_safe_harbor"]
    assert "45" in out["tags"]


def test_an_age_read_from_its_place_alone_is_tagged_not_shown(cfg) -> None:
    """"Piazza Irma, 58," may be a house number: Safe Harbor shows ages under 90, but not this one."""
    from deid_core.detectors import Method
    from deid_core.pipeline import DeidPipeline, throwaway_key

    pipe = DeidPipeline.build(cfg, load_policy("hipaa_safe_harbor", cfg.replacement.policies_dir), throwaway_key(),
                              method=Method.hybrid)
    text = "The reporter's address was updated to Piazza Irma, 58, 34126 Bassano. A 45 yo man."
    [masked] = pipe.detector.detect([text])
    found = {text[m.start:m.end]: m.label for m in masked}
    assert found.get("58") == "PHI" and "45" not in found
    [out] = pipe.process([text], ["case-1"])
    # the age under 90 is shown ("man" is also a city's name: the network's call, not this test's)
    assert ", 58," not in out.text and ", [PHI]," in out.text and "A 45 yo " in out.text
