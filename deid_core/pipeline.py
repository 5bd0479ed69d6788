"""Detection followed by replacement: the whole de-identification of a text.

One object holds what is loaded once per process (rules, model, policy,
key, surrogate pools) so that the CLI, the Spark UDFs and the benchmarks run
exactly the same steps. A document that fails anywhere is tagged token by
token (fail closed) and counted, never passed through.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deid_core.config import DeidConfig
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.detectors import FailClosed, Method, build_detector
from deid_core.replace.engine import Replacer
from deid_core.replace.keys import SecretKey
from deid_core.replace.policy import Policy
from deid_core.results import DocumentResult, Replacement

log = logging.getLogger(__name__)


@dataclass
class DeidPipeline:
    detector: FailClosed
    replacer: Replacer
    #: entities or documents whose replacement failed and were tagged instead
    replace_failures: int = 0

    @classmethod
    def build(
        cls,
        cfg: DeidConfig,
        policy: Policy,
        key: SecretKey | None,
        *,
        method: Method = Method.hybrid,
        artifact: DictionaryArtifact | None = None,
        model_dir: Path | None = None,
    ) -> DeidPipeline:
        """Raises MissingKeyError before loading anything heavy when the policy needs a key."""
        replacer = Replacer(policy, cfg, key)
        detector = build_detector(method, cfg, artifact, model_dir=model_dir, force_mask=policy.masked_patterns)
        return cls(detector, replacer)

    @property
    def failures(self) -> int:
        """Texts the detector could not process plus replacement failures (all fail-closed)."""
        return self.detector.failures + self.replace_failures

    def versions(self) -> dict[str, str]:
        """Model, dictionary and policy versions, recorded with every output row."""
        inner = self.detector.inner
        model = getattr(getattr(inner, "model", None), "version", None) or "none"
        rules = getattr(inner, "rules", None)
        dictionary = rules.artifact.version if rules is not None else "unknown"
        return {"model": model, "dictionary": dictionary, "policy": self.replacer.version}

    @property
    def version(self) -> str:
        return f"{self.detector.version}+{self.replacer.version}"

    def process(self, texts: Sequence[str], case_ids: Sequence[str]) -> list[DocumentResult]:
        masked = self.detector.detect(texts)
        failed = set(self.detector.last_failed)
        detect_seconds = self.detector.last_seconds
        out: list[DocumentResult] = []
        for i, (text, case_id, m) in enumerate(zip(texts, case_ids, masked, strict=True)):
            t0 = time.perf_counter()
            try:
                result = self.replacer.replace(text, m, case_id)
            except Exception as exc:  # noqa: BLE001 - fail closed per document
                log.error("replacement failed (%s); document tagged token by token", type(exc).__name__)  # phi-safe
                result = self.replacer.replace_fully_masked(text, case_id)
            result.detection_failed = i in failed
            result.seconds = detect_seconds[i] + time.perf_counter() - t0
            out.append(result)
        self.replace_failures += sum(r.failures for r in out)
        return out


class RenderedSpans:
    """The pipeline seen as a detector: the spans its output changes, under its policy.

    Why: the detector's mask is not what a reader of the output sees. A
    policy keeps some detected entities in clear (HIPAA Safe Harbor keeps ages
    under 90, a year alone, a country or a US state), so "A 67-year-old"
    reads the same after de-identification although the age detector found
    "67". Scoring these spans (`deid eval --rendered`, `bench/accuracy.py
    --rendered`) measures the output: recall of what is really replaced and
    what survives for the reviewer. `detect` has the detectors' signature,
    so `deid_core.evaluation.corpus.evaluate_corpus` scores it unchanged.
    The pipeline's key only makes the surrogates; evaluation uses a throwaway
    key (`throwaway_key`), and nothing it writes is kept.
    """

    def __init__(self, pipeline: DeidPipeline) -> None:
        self.pipeline = pipeline

    @classmethod
    def build(cls, cfg: DeidConfig, policy: str | None, *, method: Method = Method.hybrid,
              artifact: DictionaryArtifact | None = None, model_dir: Path | None = None) -> RenderedSpans:
        """The pipeline under `policy` (a name or YAML path; None: the configured default), with a throwaway key."""
        from deid_core.replace.policy import load_policy

        prof = load_policy(policy or cfg.replacement.default_policy, cfg.replacement.policies_dir)
        return cls(DeidPipeline.build(cfg, prof, throwaway_key() if prof.needs_key else None, method=method,
                                      artifact=artifact, model_dir=model_dir))

    @property
    def version(self) -> str:
        return self.pipeline.version

    def detect(self, texts: Sequence[str]) -> list[list[Replacement]]:
        results = self.pipeline.process(texts, [f"eval-{i}" for i in range(len(texts))])
        return [list(r.replacements) for r in results]


def throwaway_key() -> SecretKey:
    """A random key for runs whose surrogates nobody keeps (evaluation of the rendered output)."""
    import secrets

    return SecretKey(secrets.token_bytes(32))
