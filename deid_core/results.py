"""What detection and de-identification hand back, and the one fail-closed output.

Every layer produces or reads these types: the rules, the combiner and the
network methods return `MaskedToken`s; replacement turns them into a
`DocumentResult` of `Replacement`s; the CLI, the Spark UDFs and the
benchmarks consume both. Defined here, below all of them, a consumer names
a result without importing the detector or the engine that made it.

`mask_everything` is the project's first rule in code: a text that any
step cannot process is masked token by token, category unknown, instead of
passing through. Every fallback (a failing detector, inconsistent spans, a
failing replacement, a pipeline that cannot even load) uses this one helper.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from deid_core.categories import UNKNOWN_LABEL
from deid_core.text.tokenize import tokenize


@dataclass(frozen=True, slots=True)
class MaskedToken:
    """A masked token as written to output: offsets, category and score.

    `group` ties the tokens of one detector match (a date, a phone number, a
    titled name) together so that replacement treats them as one entity;
    -1 means the token stands alone.
    """

    start: int
    end: int
    label: str
    score: float
    group: int = -1


def mask_everything(text: str) -> list[MaskedToken]:
    """The fail-closed output: every token masked, unknown category, score 1."""
    return [MaskedToken(t.start, t.end, UNKNOWN_LABEL, 1.0) for t in tokenize(text)]


@dataclass(frozen=True, slots=True)
class Replacement:
    """One replaced entity: original offsets, category, and the text put there."""

    start: int
    end: int
    label: str
    replacement: str

    def to_json(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "label": self.label, "replacement": self.replacement}


@dataclass
class DocumentResult:
    """One de-identified text: what every caller of the pipeline consumes."""

    text: str
    replacements: list[Replacement]
    #: entities the policy leaves in clear, by category (counts only)
    kept: Counter[str] = field(default_factory=Counter)
    #: entities whose surrogate could not be made and were tagged instead
    failures: int = 0
    #: the detector failed on this text, so every token was masked
    detection_failed: bool = False
    #: seconds of detection and replacement spent on this text (`DeidPipeline.process`)
    seconds: float = 0.0
