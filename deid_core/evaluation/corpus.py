"""Run a detector over gold-annotated documents and score it: the one evaluation loop.

Every evaluation in the project goes through `evaluate_corpus`: `deid eval`,
the model-refresh gate (`jobs.model_refresh.evaluate_model`), the accuracy
and ambiguity benchmarks and the acceptance tests. It batches the
documents, calls the detector (or looks predictions up by doc_id), scores
each document with `evaluate_document` and adds the counts up. What a caller
reports beyond the corpus totals (a breakdown per source, per bucket, per
document) it builds from the per-document records passed to `on_document`.

The detector is anything with `detect(texts) -> [[token with start, end,
label], ...]` (the methods' detectors), so this module depends on no
de-identification method.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from deid_core.corpus.document import Document
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.dictionaries.flags import Lex
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts, Span, evaluate_document

#: Documents per call to the detector; bounded so memory stays flat.
BATCH = 64


class Masked(Protocol):
    """A predicted (masked) token: what the detectors return (`MaskedToken`)."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def label(self) -> str: ...


class Detector(Protocol):
    def detect(self, texts: Sequence[str]) -> Sequence[Sequence[Masked]]: ...


class MissingPredictions(LookupError):
    """Predictions given by doc_id lack some documents of a batch (ids in `doc_ids`, in corpus order)."""

    def __init__(self, doc_ids: list[str]) -> None:
        super().__init__(f"no prediction for {len(doc_ids)} gold documents")
        self.doc_ids = doc_ids


@dataclass(frozen=True)
class DocumentResult:
    """One scored document, for callers that aggregate further (e.g. by `doc.meta` source)."""

    doc: Document
    gold: list[Span]
    predicted: list[Span]
    counts: Counts


@dataclass
class CorpusResult:
    counts: Counts
    #: wall time of the whole evaluation: reading (when `docs` is lazy), detecting, scoring
    seconds: float
    #: time spent inside the detector's `detect` calls (0 when scoring given predictions)
    detect_seconds: float


def drug_names(artifact: DictionaryArtifact) -> Callable[[str], bool]:
    """`is_drug` for the retention metric: the artifact's complete drug names."""

    def is_drug(word: str) -> bool:
        return bool(artifact.flags(word) & Lex.DRUG_NAME)

    return is_drug


def _batched(docs: Iterable[Document], size: int | None) -> Iterator[list[Document]]:
    if size is None:
        yield list(docs)
        return
    if size < 1:
        raise ValueError("batch_size must be at least 1 (or None for one batch)")
    it = iter(docs)
    while batch := list(itertools.islice(it, size)):
        yield batch


def evaluate_corpus(
    docs: Iterable[Document],
    hipaa: HipaaMap,
    *,
    detector: Detector | None = None,
    predictions: Mapping[str, Sequence[Span]] | None = None,
    is_drug: Callable[[str], bool] | None = None,
    batch_size: int | None = BATCH,
    on_document: Callable[[DocumentResult], None] | None = None,
) -> CorpusResult:
    """Score `detector` (or `predictions`, by doc_id) against the gold spans of `docs`.

    Exactly one of `detector` and `predictions` is given. `docs` is consumed
    once, `batch_size` documents at a time (None: all in one detector call);
    a batch with documents missing from `predictions` raises
    `MissingPredictions` before any of it is scored. `is_drug` enables the
    drug-name retention metric (see `drug_names`). `on_document` sees every
    scored document in corpus order. Keep-retention is counted for the
    documents' keep spans (`Document.keep`; none, none counted).
    """
    if (detector is None) == (predictions is None):
        raise ValueError("give exactly one of detector and predictions")
    t0 = time.perf_counter()
    total = Counts()
    detect_seconds = 0.0
    for batch in _batched(docs, batch_size):
        if not batch:
            continue
        if predictions is not None:
            missing = [d.doc_id for d in batch if d.doc_id not in predictions]
            if missing:
                raise MissingPredictions(missing)
            preds = [list(predictions[d.doc_id]) for d in batch]
        else:
            assert detector is not None
            t_detect = time.perf_counter()
            results = detector.detect([d.text for d in batch])
            detect_seconds += time.perf_counter() - t_detect
            preds = [[Span(m.start, m.end, m.label) for m in r] for r in results]
        for doc, pred in zip(batch, preds, strict=True):
            gold = [Span(s.start, s.end, s.label) for s in doc.spans]
            keep = [Span(k.start, k.end, k.label) for k in doc.keep]
            counts = evaluate_document(doc.text, gold, pred, hipaa, is_drug, keep)
            total = total.merge(counts)
            if on_document is not None:
                on_document(DocumentResult(doc, gold, pred, counts))
    return CorpusResult(total, time.perf_counter() - t0, detect_seconds)
