"""Loading and validating `conf/deid.yaml`.

Configuration is validated up front (pydantic, unknown keys rejected) so that
a typo in a production config fails at start-up instead of silently falling
back to a default that might let PHI through.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Where the repository's own configuration lives (used when no path is given).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = PROJECT_ROOT / "conf" / "deid.yaml"
CONFIG_ENV = "DEID_CONFIG"

PatternCategory = Literal["DATE", "AGE", "PHONE", "EMAIL", "URL", "IP", "ID"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DictionarySources(_Strict):
    wordnet_dir: Path
    word_list: Path
    medical_word_list: Path
    stopwords: Path
    weekdays: Path
    months: Path
    holidays: Path
    street_words: Path
    written_numbers: Path
    institution_names: Path
    min_city_population: int = Field(ge=0)
    faker_locales: list[str]
    meddra_dir: Path | None = None
    whodrug_path: Path | None = None


class AmbiguityConfig(_Strict):
    """When a word on a safe list also appears on a name or place list.

    Unsafe lists overrule safe ones, so every ambiguous entry masks an
    everyday word everywhere. Keep such an entry only when it is common as a
    name or place; rarer ones are left to the context detectors and the deep
    model, which see the surrounding words.
    """

    never_unsafe_stopwords: bool = True
    common_word_max_first_name_rank: int = Field(ge=0)
    common_word_max_surname_rank: int = Field(ge=0)
    #: The most frequent English words ("see", "case", "doctor", "man") need
    #: a more frequent name to stay unsafe.
    very_common_words: Path | None = None
    very_common_word_max_first_name_rank: int = Field(ge=0)
    very_common_word_max_surname_rank: int = Field(ge=0)
    very_common_word_min_city_population: int = Field(ge=0)
    common_word_min_city_population: int = Field(ge=0)
    #: Faker's per-locale lists carry no frequencies: common words among them are dropped.
    keep_common_words_from_faker: bool = False


class DictionaryConfig(_Strict):
    artifact: Path
    sources: DictionarySources
    ambiguity: AmbiguityConfig
    user_allow: Path | None = None
    user_deny: Path | None = None


class ContextConfig(_Strict):
    titled_names: bool = True
    name_sequences: bool = True
    institutions: bool = True
    addresses: bool = True


class ScoreConfig(_Strict):
    pattern: float = Field(ge=0, le=1)
    context: float = Field(ge=0, le=1)
    unsafe_list: float = Field(ge=0, le=1)
    digit: float = Field(ge=0, le=1)
    single_letter: float = Field(ge=0, le=1)
    unknown: float = Field(ge=0, le=1)


class RulesConfig(_Strict):
    single_letters_unsafe: bool = True
    single_letter_exceptions: list[str] = Field(default_factory=list)
    pattern_categories: list[PatternCategory]
    #: ISO regions whose phone-number formats the PHONE detector recognises
    phone_regions: list[str] = Field(min_length=1)
    context: ContextConfig = ContextConfig()
    salutations: Path
    institution_heads: Path
    street_suffixes: Path
    saint_prefixes: Path
    institution_prefixes: Path
    scores: ScoreConfig

    @field_validator("single_letter_exceptions")
    @classmethod
    def _single_chars(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if len(x) != 1]
        if bad:
            raise ValueError("single_letter_exceptions must hold single characters")
        return v


class OutputConfig(_Strict):
    placeholder: str = "[PHI]"
    tag_format: str = "[{label}]"

    @field_validator("tag_format")
    @classmethod
    def _has_label(cls, v: str) -> str:
        if "{label}" not in v:
            raise ValueError("tag_format must contain {label}")
        return v


class EvaluationConfig(_Strict):
    label_map: Path
    #: Gold AGE tokens below this value are not HIPAA identifiers.
    hipaa_age_threshold: int = 90


class DeidConfig(_Strict):
    version: Literal[1]
    dictionaries: DictionaryConfig
    rules: RulesConfig
    output: OutputConfig = OutputConfig()
    evaluation: EvaluationConfig


def _resolve_paths(node: object, base: Path) -> object:
    """Make every Path in the validated model absolute, relative to `base`."""
    if isinstance(node, BaseModel):
        updates = {}
        for name in type(node).model_fields:
            value = getattr(node, name)
            new = _resolve_paths(value, base)
            if new is not value:
                updates[name] = new
        return node.model_copy(update=updates) if updates else node
    if isinstance(node, Path):
        return node if node.is_absolute() else (base / node).resolve()
    return node


def config_path(explicit: Path | None = None) -> Path:
    """The config file to use: explicit argument, then $DEID_CONFIG, then the repo's."""
    if explicit is not None:
        return explicit
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else DEFAULT_CONFIG


def load_config(path: Path | None = None) -> DeidConfig:
    """Read and validate the YAML config; relative paths are relative to its folder."""
    p = config_path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {p}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {p} is not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {p} must hold a mapping")
    try:
        cfg = DeidConfig.model_validate(raw)
    except ValueError as exc:
        raise ConfigError(f"config file {p} is invalid:\n{exc}") from exc
    resolved = _resolve_paths(cfg, p.resolve().parent)
    assert isinstance(resolved, DeidConfig)
    return resolved


class ConfigError(ValueError):
    """The configuration cannot be used; the message says which file and why."""


def read_word_list(path: Path) -> list[str]:
    """Read a one-entry-per-line list; '#' starts a comment, blanks are skipped."""
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            out.append(entry)
    return out
