"""The detectors behind `--method` (rules, deep, hybrid), `build_detector`, and fail-closed wrapping.

Every detector turns a batch of texts into masked tokens. `FailClosed` makes
sure that a text the method cannot process is masked completely instead of
passing through, as the project's first rule demands.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from deid_core.config import DeidConfig
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.hybrid.combiner import Combiner, NeverRelease, never_release_from
from deid_core.models import TokenModel, load_model
from deid_core.results import MaskedToken, mask_everything
from deid_core.rules.deidentifier import RuleAnalysis, RuleDeidentifier
from deid_core.thresholds import Thresholds

log = logging.getLogger(__name__)


class Method(str, Enum):
    """`hybrid` is the method of the project: rules corrected by the network."""

    hybrid = "hybrid"
    deep = "deep"
    rules = "rules"


class Detector(Protocol):
    @property
    def version(self) -> str: ...

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]: ...


_T = TypeVar("_T")


def _timed(fn: Callable[..., _T], *args: Any) -> tuple[_T, float]:
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


class RulesDetector:
    def __init__(self, rules: RuleDeidentifier) -> None:
        self.rules = rules
        #: seconds spent on each text of the last call
        self.last_seconds: list[float] = []

    @property
    def version(self) -> str:
        return self.rules.version

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
        timed = [_timed(lambda t: self.rules.analyse(t).masked(), t) for t in texts]
        self.last_seconds = [s for _, s in timed]
        return [m for m, _ in timed]


@dataclass
class FailClosed:
    """Run a detector; on any error mask the affected texts entirely.

    A failing batch is retried text by text so that one bad document does not
    mask its neighbours. Errors are logged by type only: the exception text
    could quote PHI.
    """

    inner: Detector
    failures: int = 0
    #: positions (in the last call's texts) that were fully masked after an error
    last_failed: list[int] = field(default_factory=list)
    #: seconds spent on each text of the last call: the text's own work plus its
    #: share (by tokens) of batched network inference; a retried text, its retry
    last_seconds: list[float] = field(default_factory=list)

    @property
    def version(self) -> str:
        return self.inner.version

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
        self.last_failed = []
        try:
            out, total = _timed(self.inner.detect, texts)
            self.last_seconds = _per_text(self.inner, texts, total)
            return out
        except Exception:  # noqa: BLE001 - fail closed on anything
            out = []
            self.last_seconds = []
            for i, text in enumerate(texts):
                t0 = time.perf_counter()
                try:
                    out.extend(self.inner.detect([text]))
                except Exception as exc:  # noqa: BLE001
                    self.failures += 1
                    self.last_failed.append(i)
                    log.error("de-identification failed (%s); text fully masked", type(exc).__name__)  # phi-safe
                    out.append(mask_everything(text))
                self.last_seconds.append(time.perf_counter() - t0)
            return out


def _per_text(inner: Detector, texts: Sequence[str], total: float) -> list[float]:
    """The inner detector's per-text seconds, or the call's time spread by text length when it keeps none."""
    own = getattr(inner, "last_seconds", None)
    if isinstance(own, list) and len(own) == len(texts):
        return own
    sizes = [max(1, len(t)) for t in texts]
    return [total * n / sum(sizes) for n in sizes]


class NetworkDetector:
    """The deep and hybrid methods: both read the rules' analysis and the model's P(class) per token.

    The model is the BiLSTM or a classical CRF or SVM (`deid_core.models`):
    all give the same probabilities. `deep` masks every token whose most
    likely class is not SAFE; `hybrid` applies the adaptive-threshold
    combiner. Thresholds come from the model manifest when it carries tuned
    ones (and the config allows), else from the config.
    """

    def __init__(
        self,
        rules: RuleDeidentifier,
        model: TokenModel,
        combiner: Combiner | None,
        deep_policy: NeverRelease | None = None,
    ) -> None:
        self.rules = rules
        self.model = model
        self.combiner = combiner
        #: deep method only: ages (masked at 90 and over, shown under) and what a policy wants
        #: masked, whatever the network's most likely class
        self.deep_policy = deep_policy
        #: seconds spent on each text of the last `detect`: its rules and combiner
        #: time plus its share, by tokens, of the batched network call
        self.last_seconds: list[float] = []

    @property
    def version(self) -> str:
        kind = "hybrid" if self.combiner else "deep"
        return f"{kind}+{self.model.version}+{self.rules.artifact.version}"

    def analyse(self, texts: Sequence[str]) -> list[tuple[RuleAnalysis, np.ndarray]]:
        timed = [_timed(self.rules.analyse, t) for t in texts]
        analyses = [a for a, _ in timed]
        probs, network = _timed(self.model.predict, analyses)
        tokens = [max(1, len(a.tokens)) for a in analyses]
        self.last_seconds = [s + network * n / sum(tokens) for (_, s), n in zip(timed, tokens, strict=True)]
        return list(zip(analyses, probs, strict=True))

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
        out: list[list[MaskedToken]] = []
        for i, (analysis, probs) in enumerate(self.analyse(texts)):
            t0 = time.perf_counter()
            if self.combiner is not None:
                out.append(self.combiner.combine(analysis, probs))
            else:
                forced = shown = None
                if self.deep_policy is not None:
                    forced, shown = self.deep_policy.decide(analysis)
                out.append(_argmax_masks(analysis, probs, self.model.classes, forced, shown))
            self.last_seconds[i] += time.perf_counter() - t0
        return out


def _argmax_masks(
    analysis: RuleAnalysis,
    probs: np.ndarray,
    classes: Sequence[str],
    forced: np.ndarray | None = None,
    shown: np.ndarray | None = None,
) -> list[MaskedToken]:
    """The deep method: each token's most likely class; `forced` tokens masked, `shown` ones not."""
    best = probs.argmax(axis=1) if len(probs) else np.zeros(0, dtype=np.int64)
    if shown is not None and shown.any():
        best = np.where(shown, 0, best)
    if forced is not None and forced.any():
        # a forced token keeps the detector's category (class ids follow `classes`)
        best = best.copy()
        for i in np.flatnonzero(forced):
            label = analysis.labels[i]
            best[i] = classes.index(label) if label in classes else int(probs[i, 1:].argmax()) + 1
    groups = analysis.groups or [-1] * len(analysis.tokens)
    return [
        MaskedToken(t.start, t.end, classes[int(best[i])], round(float(1.0 - probs[i, 0]), 6), groups[i])
        for i, t in enumerate(analysis.tokens)
        if best[i] != 0
    ]


def thresholds_for(cfg: DeidConfig, manifest_thresholds: Thresholds | None) -> Thresholds:
    """The model's tuned pair when it has one and the config prefers it, else the config's.

    Per-reason thresholds: the manifest's tuned ones, except for the families
    the config sets. Those are policy (the threshold search keeps them fixed,
    so a manifest tuned under the same config holds the same values): when the
    policy changes after tuning, the config's value applies, not the one the
    manifest copied then. A manifest tuned before a reason existed leaves it to the config.
    A family with a ceiling (`by_reason_ceiling`) takes the manifest's value up to the ceiling,
    and the ceiling when the manifest has none.
    """
    comb = cfg.deep.combiner
    if comb.prefer_manifest_thresholds and manifest_thresholds is not None:
        tuned = manifest_thresholds.by_reason
        capped = {f: min(tuned.get(f, cap), cap) for f, cap in comb.by_reason_ceiling.items()}
        by_reason = {**tuned, **capped, **comb.by_reason}
        return manifest_thresholds.model_copy(update={"by_reason": by_reason})
    return Thresholds(comb.low, comb.high, by_reason={**comb.by_reason_ceiling, **comb.by_reason})


def build_detector(
    method: Method,
    cfg: DeidConfig,
    artifact: DictionaryArtifact | None = None,
    *,
    model_dir: Path | None = None,
    thresholds: Thresholds | None = None,
    force_mask: Sequence[str] = (),
) -> FailClosed:
    """Load what the method needs once; raise if it cannot be loaded (no output then).

    `force_mask`: detector categories (a policy's) that the hybrid never releases.
    """
    rules = RuleDeidentifier.from_config(cfg, artifact)
    if method is Method.rules:
        return FailClosed(RulesDetector(rules))
    if method in (Method.deep, Method.hybrid):
        # the family the directory holds (BiLSTM, CRF, SVM); Keras only for the BiLSTM
        model = load_model(model_dir or cfg.deep.model_dir, cfg, dictionary_version=rules.artifact.version)
        combiner = None
        # the deep method keeps the engine's age policy: ages over 89 (or unreadable) always masked,
        # younger ones the AGE detector found always shown; with a rendering policy, its categories
        # and the never-released word kinds are masked too, as before
        deep_policy = NeverRelease(age_min=cfg.deep.combiner.never_release_ages_from, patterns=force_mask,
                                   word_kinds=bool(force_mask))
        if method is Method.hybrid:
            t = thresholds or thresholds_for(cfg, model.manifest.thresholds)
            combiner = Combiner(model.classes, t, never_release_from(cfg, force_mask))
        return FailClosed(NetworkDetector(rules, model, combiner, deep_policy))
    raise ValueError(f"unknown method {method}")
