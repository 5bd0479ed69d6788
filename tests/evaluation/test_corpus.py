"""The one evaluation loop: a stub detector with known output gives known counts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from deid_core.corpus.document import Document, GoldSpan
from deid_core.dictionaries.flags import Lex
from deid_core.evaluation.corpus import (
    DocumentResult,
    MissingPredictions,
    drug_names,
    evaluate_corpus,
)
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts, Span, evaluate_document
from deid_core.rules.deidentifier import MaskedToken
from deid_core.text.tokenize import token_spans

HIPAA = HipaaMap({"DOCTOR": None, "NAME": "NAME", "AGE": "AGE_OVER_89"}, age_threshold=90)


def _doc(doc_id: str, text: str, gold: dict[str, str], **meta: str) -> Document:
    """A document whose gold spans are the first occurrence of each word, with its label."""
    spans = [GoldSpan(text.index(w), text.index(w) + len(w), lab) for w, lab in gold.items()]
    return Document(doc_id, text, sorted(spans, key=lambda s: s.start), dict(meta))


DOCS = [
    # masked: Ann, Lee, 12, Dr, rash -> misses "03"; "Dr" and "rash" are false positives
    _doc("d1", "Seen by Dr Ann Lee on 12/03 for rash.", {"Ann Lee": "NAME", "12/03": "DATE"}, source="vaers"),
    # masked: Bo -> all caught, no false positive
    _doc("d2", "Bo took aspirin daily.", {"Bo": "NAME"}, source="faers"),
    # masked: 45 (labelled AGE: a false positive under PhysioNet, PHI under i2b2)
    _doc("d3", "Patient, 45, from Leeds.", {"Leeds": "LOCATION"}, source="vaers"),
]
MASK = {
    "d1": {"Ann": "NAME", "Lee": "NAME", "12": "DATE", "Dr": "NAME", "rash": "NAME"},
    "d2": {"Bo": "NAME"},
    "d3": {"45": "AGE"},
}


class StubDetector:
    """Masks the words listed in MASK for each text, with their labels; records its calls."""

    def __init__(self) -> None:
        self.by_text = {d.text: MASK[d.doc_id] for d in DOCS}
        self.calls: list[int] = []

    def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
        self.calls.append(len(texts))
        out = []
        for t in texts:
            words = self.by_text[t]
            out.append([MaskedToken(s, e, words[t[s:e]], 1.0) for s, e in token_spans(t) if t[s:e] in words])
        return out


def _predictions() -> dict[str, list[Span]]:
    return {d.doc_id: [Span(m.start, m.end, m.label) for m in r]
            for d, r in zip(DOCS, StubDetector().detect([d.text for d in DOCS]), strict=True)}


def test_known_detector_output_gives_known_metrics() -> None:
    c = evaluate_corpus(DOCS, HIPAA, detector=StubDetector()).counts
    assert c.docs == 3
    # gold tokens: Ann, Lee, 12, 03 | Bo | Leeds
    assert (c.gold_tokens, c.caught, c.false_positives) == (6, 4, 3)
    assert c.recall == pytest.approx(4 / 6)
    assert c.precision == pytest.approx(4 / 7)
    assert c.f1 == pytest.approx(2 * (4 / 6) * (4 / 7) / (4 / 6 + 4 / 7))
    # "45" predicted AGE: forgiven under the i2b2 reading
    assert c.false_positives_age_year == 1
    assert c.precision_i2b2_reading == pytest.approx(4 / 6)
    assert c.label_recall() == {"DATE": (1, 2, 0.5), "LOCATION": (0, 1, 0.0), "NAME": (3, 3, 1.0)}
    assert c.missed == {"DATE": 1, "LOCATION": 1}
    assert c.predicted_tokens == 7
    assert c.hipaa_gold == 6 and c.hipaa_caught == 4


def test_result_is_the_sum_of_the_documents() -> None:
    expected = Counts()
    for d in DOCS:
        gold = [Span(s.start, s.end, s.label) for s in d.spans]
        expected = expected.merge(evaluate_document(d.text, gold, _predictions()[d.doc_id], HIPAA))
    got = evaluate_corpus(DOCS, HIPAA, detector=StubDetector(), batch_size=2).counts
    assert got.as_dict() == expected.as_dict()
    assert got == expected


@pytest.mark.parametrize(("batch_size", "calls"), [(1, [1, 1, 1]), (2, [2, 1]), (64, [3]), (None, [3])])
def test_documents_go_to_the_detector_in_batches(batch_size: int | None, calls: list[int]) -> None:
    det = StubDetector()
    res = evaluate_corpus(iter(DOCS), HIPAA, detector=det, batch_size=batch_size)
    assert det.calls == calls
    assert res.counts.docs == 3
    assert 0.0 <= res.detect_seconds <= res.seconds


def test_bad_batch_size_is_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        evaluate_corpus(DOCS, HIPAA, detector=StubDetector(), batch_size=0)


def test_empty_corpus_calls_nothing() -> None:
    det = StubDetector()
    res = evaluate_corpus([], HIPAA, detector=det, batch_size=None)
    assert det.calls == [] and res.counts == Counts()


def test_predictions_by_doc_id_score_like_the_detector() -> None:
    res = evaluate_corpus(DOCS, HIPAA, predictions=_predictions())
    assert res.counts == evaluate_corpus(DOCS, HIPAA, detector=StubDetector()).counts
    assert res.detect_seconds == 0.0


def test_missing_predictions_stop_before_the_batch_is_scored() -> None:
    preds = _predictions()
    del preds["d3"]
    seen: list[str] = []
    with pytest.raises(MissingPredictions) as info:
        evaluate_corpus(DOCS, HIPAA, predictions=preds, batch_size=2,
                        on_document=lambda r: seen.append(r.doc.doc_id))
    assert info.value.doc_ids == ["d3"]
    assert seen == ["d1", "d2"]  # the first batch was complete and scored


def test_exactly_one_source_of_predictions() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        evaluate_corpus(DOCS, HIPAA)
    with pytest.raises(ValueError, match="exactly one"):
        evaluate_corpus(DOCS, HIPAA, detector=StubDetector(), predictions=_predictions())


def test_per_document_records_aggregate_per_source() -> None:
    by_source: dict[str, Counts] = {}
    records: list[DocumentResult] = []

    def collect(r: DocumentResult) -> None:
        records.append(r)
        src = r.doc.meta["source"]
        by_source[src] = by_source.get(src, Counts()).merge(r.counts)

    total = evaluate_corpus(DOCS, HIPAA, detector=StubDetector(), batch_size=2, on_document=collect).counts
    assert [r.doc.doc_id for r in records] == ["d1", "d2", "d3"]
    assert records[1].gold == [Span(0, 2, "NAME")] and records[1].predicted == [Span(0, 2, "NAME")]
    assert records[2].predicted == [Span(9, 11, "AGE")]
    assert (by_source["vaers"].gold_tokens, by_source["vaers"].caught) == (5, 3)
    assert (by_source["faers"].gold_tokens, by_source["faers"].caught) == (1, 1)
    assert by_source["vaers"].merge(by_source["faers"]) == total


class _Artifact:
    def flags(self, word: str) -> int:
        return int(Lex.DRUG_NAME) if word == "aspirin" else 0


def test_drug_retention_through_the_artifact_flags() -> None:
    is_drug = drug_names(_Artifact())  # type: ignore[arg-type]
    assert is_drug("aspirin") and not is_drug("daily")
    c = evaluate_corpus(DOCS, HIPAA, detector=StubDetector(), is_drug=is_drug).counts
    assert (c.drug_total, c.drug_kept) == (1, 1)
    assert evaluate_corpus(DOCS, HIPAA, detector=StubDetector()).counts.drug_total == 0


def test_a_stub_masking_a_dose_token_lowers_dose_retention_exactly() -> None:
    from deid_core.corpus.document import KeepSpan

    text = "Ann took aspirin 500 mg daily; ALT 80 U/L."
    keep = [KeepSpan(9, 16, "DRUG"), KeepSpan(17, 23, "DOSE"), KeepSpan(31, 41, "LAB")]
    docs = [Document("k1", text, [GoldSpan(0, 3, "NAME")], {}, keep), Document("k2", text, [GoldSpan(0, 3, "NAME")], {}, keep)]

    class DoseMasker:
        """Masks the name, and the dose number "500" in the first text it sees."""

        def __init__(self) -> None:
            self.seen = 0

        def detect(self, texts: Sequence[str]) -> list[list[MaskedToken]]:
            out = []
            for t in texts:
                words = {"Ann"} | ({"500"} if self.seen == 0 else set())
                self.seen += 1
                out.append([MaskedToken(s, e, "NAME", 1.0) for s, e in token_spans(t) if t[s:e] in words])
            return out

    c = evaluate_corpus(docs, HIPAA, detector=DoseMasker(), batch_size=1).counts
    per = c.keep_label_retention()
    assert per["DOSE"] == (3, 4, 0.75)  # "500" masked once out of 2 x {500, mg}
    assert per["DRUG"] == (2, 2, 1.0) and per["LAB"] == (8, 8, 1.0)  # ALT 80 U L, twice
    assert (c.keep_kept, c.keep_tokens) == (13, 14)
    assert c.recall == 1.0
    # documents without keep spans count nothing
    plain = evaluate_corpus(DOCS, HIPAA, detector=StubDetector()).counts
    assert plain.keep_tokens == 0
