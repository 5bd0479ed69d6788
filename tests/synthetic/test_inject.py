"""Tests for VAERS-based training documents with injected surrogate PHI.

What the network learns from these documents is only as good as their
labels, so the tests pin: dates in every common format are labelled and
date-shaped quantities are not; spans are exact after insertions (injected
spans cover exactly the surrogate written, pre-existing spans still cover
their string after shifts); output is deterministic by seed; and, on the
real shared file when present, documents validate and most carry PHI.
"""

from __future__ import annotations

import json
from pathlib import Path
from random import Random

import pytest

from deid_core.corpus.document import KEEP_LABELS, Document
from deid_core.synthetic import builder as builder_module
from deid_core.synthetic.inject import (
    INJECT_VERSION,
    inject_phi,
    is_clean,
    label_existing_phi,
    unclean_reasons,
    vaers_training_documents,
)

SHARED_VAERS = Path(__file__).resolve().parents[3] / "shared" / "data" / "vaers"


def _labelled(text: str) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label) for s in label_existing_phi(text)]


# --- labelling what is there ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("Fever started on 3/19 and resolved.", "3/19"),
        ("Fever started on 3/19/21 and resolved.", "3/19/21"),
        ("Vaccine given 1/1/2021 in clinic.", "1/1/2021"),
        ("Vaccine given 01/04/2021 in clinic.", "01/04/2021"),
        ("Swelling noted on 4-26-21.", "4-26-21"),
        ("Seen 2021-01-03 in ED.", "2021-01-03"),
        ("By Dec 25, hand very swollen.", "Dec 25"),
        ("on dec 22 I felt some myalgias", "dec 22"),
        ("Admitted December 25th, 2020 with dyspnea.", "December 25th, 2020"),
        ("Admitted on 25-Dec-2020 with dyspnea.", "25-Dec-2020"),
        ("Admitted on 25 Dec 2020 with dyspnea.", "25 Dec 2020"),
        ("BNT162B2 on 01JAN2021 at 10:00.", "01JAN2021"),
        ("first dose on 02Feb2021 in left arm", "02Feb2021"),
        ("Symptoms of Covid (Dec2020) resolved.", "Dec2020"),
        ("In November 2020, she had a rash.", "November 2020"),
        ("Onset in March, no treatment.", "March"),
        ("Due date March 12, 2021.", "March 12, 2021"),
        ("Test Date: 20201230; Test Name: Covid", "20201230"),
        ("admitted to Hospital 4/8-4/11.", "4/11"),
        ("admitted to Hospital 4/8-4/11.", "4/8"),
        ("Patient received doxycycline since 2019 for acne.", "2019"),
        ("Went to the ER on Friday night.", "Friday"),
        ("chills Fri, Sat, Sun- vomiting", "Sat"),
        ("became ill on Christmas Eve and recovered", "Christmas Eve"),
        ("I was tired on the 24th, worse later", "24th"),
        ("On Wed 4/21/21 she returned.", "Wed"),
    ],
)
def test_dates_in_every_common_format_are_labelled(text: str, date: str) -> None:
    assert (date, "DATE") in _labelled(text)


@pytest.mark.parametrize(
    "text",
    [
        "Received the 2nd dose in the left arm.",
        "Took 1/2 tablet of ibuprofen.",
        "Pfizer vaccine had 3-4x higher risk.",
        "BP 100/60, HR 88.",
        "Temperature 98.6 this morning.",
        "Strength 4/5 in both arms.",
        "Pain 8/10 at the site.",
        "Lasted 3 1/2 hours.",
        "O2 Sat 98% on room air.",
        "Sat in the car for 15 minutes.",
        "He may have had a reaction.",
        "Symptoms lasted 8-12 hrs.",
        "Received COVID-19 vaccine, 0.5 mL IM.",
        "WBC 13.5, platelets 150, sodium 135.",
        "Vision 20/20, pupils equal.",
        "Available 24/7 by phone.",
    ],
)
def test_date_shaped_quantities_are_not_dates(text: str) -> None:
    assert [label for _, label in _labelled(text) if label == "DATE"] == []


def test_ages_lots_and_contacts_are_labelled_without_their_cue() -> None:
    text = ("A 92 year old woman, 92 y/o F, age 95, in her 90s. Lot Number: EL9243. "
            "Call 555-123-4567 or mail jo.doe@example.org, see https://example.org/x.")
    found = _labelled(text)
    assert [t for t, label in found if label == "AGE"] == ["92", "92", "95", "90s"]
    assert ("EL9243", "ID") in found  # found by the scan; inject_phi keeps it as LOT (below)
    assert ("555-123-4567", "PHONE") in found
    assert ("jo.doe@example.org", "EMAIL") in found
    assert ("https://example.org/x", "URL") in found


@pytest.mark.parametrize(
    "text",
    [
        "Reported by Dr. Kimball after the visit.",
        "We got a call from a home health nurse Brandu Talamo.",
        "At 3:40am Cliff refused vitals.",
        "She ran a 10K in New Orleans in early February.",
        "Symptoms 1/2, then slept.",  # a fraction or January 2nd: cannot tell
        "Platelets 2000 on admission.",  # a year or a count
        "A friend named Kim drove her home.",
    ],
)
def test_narratives_that_cannot_be_labelled_safely_are_unclean(text: str) -> None:
    assert not is_clean(text), text
    assert unclean_reasons(text)
    # codes only: nothing of the narrative leaves through the reasons
    words = [w for w in text.replace(".", " ").split() if w[:1].isupper() or w[:1].isdigit()]
    assert not any(w in r for r in unclean_reasons(text) for w in words)


def test_ordinary_narratives_are_clean() -> None:
    text = ("Patient reports receiving the Janssen vaccine on 3/16/2021. She developed fever, "
            "chills and Bell's palsy; took 2 tablets of Tylenol 500 mg. BP 150/70, pain 6/10.")
    assert is_clean(text), unclean_reasons(text)


def test_a_known_lot_number_from_meta_is_labelled_and_clean() -> None:
    text = "Lot EX1234 was given; the site used XQ1234 stock."
    assert not is_clean(text)  # an unknown letter-and-digit code
    assert is_clean(text, lots=["XQ1234"])


# --- injection -----------------------------------------------------------------------

_NARRATIVE = (
    "On Friday night, 3/19/21, patient spiked a fever per his daughter. He received the vaccine "
    "at the pharmacy and was taken to the hospital by ambulance. His PCP saw him today. "
    "Pt is a 66 y/o male; took 60mg prednisone for 3 days. Patient died on 3/22/21."
)


def _spy_phi(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the text of every PHI piece the builder writes, in order (after casing)."""
    written: list[str] = []
    original = builder_module.NarrativeBuilder._add_one

    def spy(self: builder_module.NarrativeBuilder, piece: builder_module.Piece) -> None:
        if isinstance(piece, builder_module.Phi):
            written.append(self.casing(piece.text))
        original(self, piece)

    monkeypatch.setattr(builder_module.NarrativeBuilder, "_add_one", spy)
    return written


@pytest.mark.parametrize("seed", range(25))
def test_every_span_covers_exactly_the_value_written(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    written = _spy_phi(monkeypatch)
    doc = inject_phi(_NARRATIVE, Random(seed), rate=1.0, sentences=(0, 3))
    doc.validate()
    assert [doc.text[s.start:s.end] for s in doc.spans] == written
    assert all(a.end <= b.start for a, b in zip(doc.spans, doc.spans[1:])), "spans overlap"


@pytest.mark.parametrize("seed", range(25))
def test_existing_spans_still_cover_their_string_after_insertions(seed: int) -> None:
    doc = inject_phi(_NARRATIVE, Random(seed), rate=1.0, sentences=(1, 3))
    casing = {"upper": str.upper, "lower": str.lower}.get(doc.meta["casing"], lambda s: s)
    original = [(casing(_NARRATIVE[s.start:s.end]), s.label) for s in label_existing_phi(_NARRATIVE)
                if s.label != "AGE"]  # an age below 90 may be replaced by one above
    got = [(doc.text[s.start:s.end], s.label) for s in doc.spans]
    it = iter(got)
    assert all(item in it for item in original), "a pre-existing span moved off its string"
    assert doc.meta["injected_spans"] > 0
    # the dates sit after inserted text, so they really were shifted
    first_date = next(s for s in doc.spans if doc.text[s.start:s.end] == casing("3/19/21"))
    assert first_date.start >= _NARRATIVE.index("3/19/21")


def test_keep_spans_survive_and_never_touch_phi() -> None:
    meta = {"vaccines": [{"manu": "MODERNA", "lot": "039K20A"}], "vax_date": "2021-01-05"}
    text = "Moderna vaccine lot 039K20A given; took 400 mg ibuprofen and 0.5 mL epinephrine for 2 hours."
    for seed in range(10):
        doc = inject_phi(text, Random(seed), meta=meta, fields={"other_meds": "ibuprofen 200 mg"}, rate=1.0)
        doc.validate()
        kept = {(doc.text[k.start:k.end].lower(), k.label) for k in doc.keep}
        assert {("moderna", "DRUG"), ("ibuprofen", "DRUG"), ("400 mg", "DOSE"), ("0.5 ml", "DOSE"),
                ("2 hours", "DURATION"), ("039k20a", "LOT")} <= kept  # lot numbers are kept by default
        assert all(k.label in KEEP_LABELS for k in doc.keep)
        assert not any(k.start < s.end and s.start < k.end for k in doc.keep for s in doc.spans)
        assert "039K20A" not in {doc.text[s.start:s.end].upper() for s in doc.spans}  # injected IDs may remain
    as_phi = inject_phi(text, Random(0), meta=meta, lots="phi")  # the former convention, on request
    assert ("039K20A", "ID") in {(as_phi.text[s.start:s.end].upper(), s.label) for s in as_phi.spans}
    assert "LOT" not in {k.label for k in as_phi.keep}


def test_upper_case_narratives_get_upper_case_surrogates() -> None:
    text = "PT RECEIVED VACCINE AT THE PHARMACY ON 1/5/21. HIS WIFE DROVE HIM TO THE HOSPITAL."
    doc = inject_phi(text, Random(1), rate=1.0, sentences=(2, 2))
    assert doc.meta["casing"] == "upper"
    assert doc.text == doc.text.upper()
    assert doc.meta["injected_spans"] > 0


def test_injection_is_deterministic_by_rng_seed() -> None:
    a = inject_phi(_NARRATIVE, Random(7), rate=0.7, sentences=(1, 2))
    b = inject_phi(_NARRATIVE, Random(7), rate=0.7, sentences=(1, 2))
    c = inject_phi(_NARRATIVE, Random(8), rate=0.7, sentences=(1, 2))
    assert (a.text, a.spans, a.keep) == (b.text, b.spans, b.keep)
    assert a.text != c.text


# --- corpus -------------------------------------------------------------------------------


def _fake_jsonl(path: Path) -> Path:
    records = [
        {"doc_id": "VAERS-9000001", "text": "Sore arm and fever after the vaccine on 1/2/21; resolved in 2 days.",
         "spans": [], "meta": {"vax_date": "2021-01-02", "vaccines": [{"manu": "MODERNA", "lot": "011J20A"}]},
         "fields": {"lab_data": "COVID PCR negative on 1/4/21, CBC normal", "other_meds": "None",
                    "history": "Hypertension, asthma since 2015"}},
        {"doc_id": "VAERS-9000002", "text": "Reported by Dr. Kimball: rash on 12/30/2020.", "spans": [],
         "meta": {}},
        {"doc_id": "VAERS-9000003", "text": "Patient fainted 15 minutes after the shot and was taken to the ER.",
         "spans": [], "meta": {"vax_date": "2021-01-10"},
         "fields": {"other_meds": "lisinopril 10 mg daily, metformin 500 mg", "allergies": "NKDA"}},
        {"doc_id": "VAERS-9000004", "text": "Headache, chills; his wife called 911 on Sunday.", "spans": [],
         "meta": {}},
        {"doc_id": "VAERS-9000005", "text": "A 93 year old resident had hives on Dec 29.", "spans": [], "meta": {}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_training_documents_from_a_small_file(tmp_path: Path) -> None:
    path = _fake_jsonl(tmp_path / "fake.jsonl")
    stats: dict[str, int] = {}
    docs = vaers_training_documents([path], 50, seed=3, stats=stats)
    # 4 clean narratives + lab_data + other_meds + history; "Dr. Kimball" is skipped
    assert stats == {"candidates": 8, "seen": 8, "skipped": 1, "kept": 7}
    assert [d.doc_id for d in docs] == [f"vaers-inject-{i}" for i in range(7)]
    assert {d.meta["source"] for d in docs} == {"narrative", "lab_data", "other_meds", "history"}
    for d in docs:
        d.validate()
        assert "VAERS" not in d.doc_id and "9000" not in json.dumps(d.meta)
        assert d.meta["inject_version"] == INJECT_VERSION
        assert "Kimball" not in d.text
    again = vaers_training_documents([path], 50, seed=3)
    assert [(d.text, d.spans, d.keep) for d in again] == [(d.text, d.spans, d.keep) for d in docs]
    other = vaers_training_documents([path], 50, seed=4)
    assert [d.text for d in other] != [d.text for d in docs]
    # the first k documents do not depend on n
    assert [d.text for d in vaers_training_documents([path], 3, seed=3)] == [d.text for d in docs[:3]]
    assert len(vaers_training_documents([path], 50, seed=3, fields=False)) == 4


def test_held_out_reports_never_train(tmp_path: Path) -> None:
    """Reports of an evaluation set are left out with all their fields."""
    path = _fake_jsonl(tmp_path / "fake.jsonl")
    stats: dict[str, int] = {}
    docs = vaers_training_documents([path], 50, seed=3, stats=stats, exclude={"VAERS-9000001", "VAERS-9000003"})
    # narratives 2 (skipped, "Dr. Kimball"), 4 and 5 remain; no field of report 1 or 3
    assert stats["candidates"] == 3 and len(docs) == 2
    assert all("lisinopril" not in d.text and "PCR" not in d.text and "fainted" not in d.text for d in docs)


def test_n_must_be_a_non_negative_integer(tmp_path: Path) -> None:
    path = _fake_jsonl(tmp_path / "fake.jsonl")
    with pytest.raises(ValueError, match="non-negative"):
        vaers_training_documents([path], -1, seed=0)


def test_real_vaers_files_give_valid_documents_with_phi() -> None:
    paths = [SHARED_VAERS / "vaers_narratives.jsonl", SHARED_VAERS / "vaers_2021_jan.jsonl"]
    if not all(p.is_file() for p in paths):
        pytest.skip(f"the shared VAERS files are absent ({SHARED_VAERS}); nothing real to check")
    stats: dict[str, int] = {}
    docs = vaers_training_documents(paths, 200, seed=0, stats=stats)
    assert len(docs) == 200
    for d in docs:
        assert isinstance(d, Document)
        d.validate()
        assert all(0 <= s.start < s.end <= len(d.text) for s in d.spans)
        assert all(d.text[s.start:s.end] == d.text[s.start:s.end].strip() for s in d.spans)
    with_phi = sum(bool(d.spans) for d in docs) / len(docs)
    skipped = stats["skipped"] / stats["seen"]
    message = f"{with_phi:.0%} of documents have PHI; {skipped:.1%} of the candidates seen were skipped"
    assert with_phi >= 0.8, message
    assert skipped < 0.2, message
