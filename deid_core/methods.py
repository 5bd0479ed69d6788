"""The de-identification methods behind `--method`, with fail-closed wrapping.

Every method turns a batch of texts into masked tokens. `FailClosed` makes
sure that a text the method cannot process is masked completely instead of
passing through, as the project's first rule demands.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from deid_core.config import DeidConfig
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.rules.deidentifier import UNKNOWN_LABEL, MaskedToken, RuleDeidentifier
from deid_core.text.tokenize import tokenize

log = logging.getLogger(__name__)


class Method(str, Enum):
    rules = "rules"


class Detector(Protocol):
    @property
    def version(self) -> str: ...

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]: ...


class RulesDetector:
    def __init__(self, rules: RuleDeidentifier) -> None:
        self.rules = rules

    @property
    def version(self) -> str:
        return self.rules.version

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
        return [self.rules.analyse(t).masked() for t in texts]


def mask_everything(text: str) -> list[MaskedToken]:
    """The fail-closed output: every token masked, unknown category, score 1."""
    return [MaskedToken(t.start, t.end, UNKNOWN_LABEL, 1.0) for t in tokenize(text)]


@dataclass
class FailClosed:
    """Run a detector; on any error mask the affected texts entirely.

    A failing batch is retried text by text so that one bad document does not
    mask its neighbours. Errors are logged by type only: the exception text
    could quote PHI.
    """

    inner: Detector
    failures: int = 0

    @property
    def version(self) -> str:
        return self.inner.version

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
        try:
            return self.inner.detect(texts)
        except Exception:  # noqa: BLE001 - fail closed on anything
            out: list[list[MaskedToken]] = []
            for text in texts:
                try:
                    out.extend(self.inner.detect([text]))
                except Exception as exc:  # noqa: BLE001
                    self.failures += 1
                    log.error("de-identification failed (%s); text fully masked", type(exc).__name__)  # phi-safe
                    out.append(mask_everything(text))
            return out


def build_detector(method: Method, cfg: DeidConfig, artifact: DictionaryArtifact | None = None) -> FailClosed:
    """Load what the method needs once; raise if it cannot be loaded (no output then)."""
    if method is Method.rules:
        return FailClosed(RulesDetector(RuleDeidentifier.from_config(cfg, artifact)))
    raise ValueError(f"unknown method {method}")
