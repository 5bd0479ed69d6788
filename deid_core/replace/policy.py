"""Policy profiles: per category, whether a masked entity is replaced and how.

A profile is a YAML file in `conf/policies/` (a centre writes its own next
to the shipped ones). It is validated strictly: an unknown category or an
action that makes no sense for a category (shifting a name, pseudonymising a
date) is a configuration error at start-up, not a surprise in the output.

Fail-closed defaults: a category the profile does not mention is replaced by
its tag, and the unknown category ("PHI": masked, but nobody knows what it
is) can only ever be tagged.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from deid_core.categories import UNKNOWN_LABEL, Category, PatternCategory
from deid_core.config import ConfigError


class Action(str, Enum):
    keep = "keep"            # leave the original text (the profile does not count it as PHI)
    tag = "tag"              # "[NAME]", "[DATE]", ...
    shift = "shift"          # date moved by the per-case offset, original format kept
    pseudonym = "pseudonym"  # keyed, consistent surrogate name or place
    surrogate = "surrogate"  # keyed, format-preserving digits/letters (phone, ID, IP, e-mail)
    bucket = "bucket"        # ages at or above the limit become "[AGE>89]"


#: What each category may be turned into. "keep" is everywhere but PHI.
ALLOWED: dict[str, frozenset[Action]] = {
    "NAME": frozenset({Action.keep, Action.tag, Action.pseudonym}),
    "LOCATION": frozenset({Action.keep, Action.tag, Action.pseudonym}),
    "DATE": frozenset({Action.keep, Action.tag, Action.shift}),
    "AGE": frozenset({Action.keep, Action.tag, Action.bucket}),
    "PHONE": frozenset({Action.keep, Action.tag, Action.surrogate}),
    "EMAIL": frozenset({Action.keep, Action.tag, Action.surrogate}),
    "IP": frozenset({Action.keep, Action.tag, Action.surrogate}),
    "ID": frozenset({Action.keep, Action.tag, Action.surrogate}),
    "URL": frozenset({Action.keep, Action.tag}),
    "OTHER": frozenset({Action.keep, Action.tag}),
    UNKNOWN_LABEL: frozenset({Action.tag}),
}
#: Actions that derive values from the secret key.
KEYED = frozenset({Action.shift, Action.pseudonym, Action.surrogate})

PlaceKind = Literal["country", "us_state"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CategoryRule(_Strict):
    action: Action
    #: DATE: a date that is only a year stays (HIPAA Safe Harbor allows years)
    keep_year_only: bool = False
    #: AGE with `bucket`: ages under the limit stay in clear (else tagged)
    keep_below_limit: bool = True
    #: LOCATION: places of these kinds stay (Safe Harbor allows states, countries)
    keep_kinds: list[PlaceKind] = Field(default_factory=list)


class Policy(_Strict):
    name: str
    description: str
    categories: dict[Category, CategoryRule]
    #: tokens these detectors found stay masked whatever the network says
    #: (e.g. every age when the profile counts all ages as PHI)
    force_mask: list[PatternCategory] = Field(default_factory=list)

    @model_validator(mode="after")
    def _actions_fit(self) -> Policy:
        for cat, rule in self.categories.items():
            if rule.action not in ALLOWED[cat]:
                allowed = ", ".join(sorted(a.value for a in ALLOWED[cat]))
                raise ValueError(f"{cat}: action {rule.action.value!r} is not allowed (use one of {allowed})")
        return self

    def rule(self, category: str) -> CategoryRule:
        """The rule for a category; unknown or unlisted categories are tagged."""
        if category in self.categories:
            return self.categories[category]  # type: ignore[index]
        return CategoryRule(action=Action.tag)

    @property
    def masked_patterns(self) -> list[PatternCategory]:
        """The detector categories the hybrid must never release under this policy.

        `force_mask`, plus AGE when the policy replaces ages under the HIPAA
        limit too: by default the combiner shows an age the AGE detector found
        when it is under that limit (no PHI under Safe Harbor), so a policy
        that tags every age has to keep them all masked.
        """
        out = list(self.force_mask)
        age = self.rule("AGE")
        keeps_young = age.action is Action.keep or (age.action is Action.bucket and age.keep_below_limit)
        if not keeps_young and "AGE" not in out:
            out.append("AGE")
        return out

    @property
    def needs_key(self) -> bool:
        return any(r.action in KEYED for r in self.categories.values())

    @property
    def version(self) -> str:
        """Name plus a short hash of the validated content: recorded with outputs."""
        import hashlib

        digest = hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:10]
        return f"{self.name}-{digest}"


def available_policies(policies_dir: Path) -> list[str]:
    return sorted(p.stem for p in policies_dir.glob("*.yaml"))


def load_policy(name_or_path: str | Path, policies_dir: Path) -> Policy:
    """A profile by name (a file in `policies_dir`) or by path to a YAML file."""
    candidate = Path(name_or_path)
    path = candidate if candidate.suffix in (".yaml", ".yml") else policies_dir / f"{name_or_path}.yaml"
    if not path.is_file():
        known = ", ".join(available_policies(policies_dir)) or "none"
        raise ConfigError(f"policy {str(name_or_path)!r} not found (available: {known})")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Policy.model_validate(raw)
    except (yaml.YAMLError, ValueError) as exc:
        raise ConfigError(f"policy file {path} is invalid:\n{exc}") from exc
