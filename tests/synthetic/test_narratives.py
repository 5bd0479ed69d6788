"""Tests for the synthetic narrative generator and the sample-generation CLI.

The generated corpus is the project's only bundled data, so these tests pin
the properties everything downstream relies on: exact, non-overlapping gold
spans; clinical content left outside them; determinism across processes;
coverage of every template; and an output file that is either complete or
absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from deid_core.synthetic import (
    CLINICAL_KINDS,
    LABELS,
    STYLES,
    TEMPLATES,
    SyntheticNarrative,
    generate_narratives,
    generate_one,
)
from deid_core.synthetic.builder import NarrativeBuilder, Phi, cap, seq
from deid_core.synthetic.case import sample_timeline
from deid_core.synthetic.clinical import TREATMENTS, drug_lexicon, onset_phrase
from deid_core.synthetic.phi import LOCALES, MONTHS, format_date
from jobs import generate_samples
from jobs.generate_samples import app, write_jsonl_atomic

REPO_ROOT = Path(__file__).resolve().parents[2]
SUBTYPES = {
    "NAME": {"PATIENT", "DOCTOR"},
    "LOCATION": {"HOSPITAL", "ORGANIZATION", "STREET", "CITY", "STATE", "ZIP", "COUNTRY"},
    "DATE": {None},
    "AGE": {None},
    "PHONE": {"PHONE", "FAX"},
    "EMAIL": {"EMAIL"},
    "URL": {"URL"},
    "ID": {"IDNUM", "MEDICALRECORD"},
}
_MONTH_RE = re.compile("|".join(m[:3] for m in MONTHS), re.IGNORECASE)


@pytest.fixture(scope="module")
def corpus() -> list[SyntheticNarrative]:
    """300 documents: more than ten full rounds of the template schedule."""
    return list(generate_narratives(300, seed=11))


def _jsonl(docs: list[SyntheticNarrative]) -> bytes:
    return "".join(json.dumps(d.to_json_dict(), ensure_ascii=False) + "\n" for d in docs).encode()


# --- invariants, shared by the corpus tests and the Hypothesis test ------------------


def assert_span_invariants(doc: SyntheticNarrative) -> None:
    """Spans slice the text, do not overlap, carry known labels and look right."""
    text = doc.text
    assert text and text == text.strip()
    previous_end = 0
    for start, end, label in doc.spans:
        assert 0 <= start < end <= len(text), (doc.doc_id, start, end)
        assert start >= previous_end, f"{doc.doc_id}: overlapping spans at {start}"
        previous_end = end
        assert label in LABELS
        value = text[start:end]
        assert value == value.strip(), (doc.doc_id, value)
        assert_looks_like(label, value)
    subtypes = doc.meta["subtypes"]
    assert len(subtypes) == len(doc.spans)
    for (_, _, label), sub in zip(doc.spans, subtypes):
        assert sub in SUBTYPES[label], (label, sub)


def assert_looks_like(label: str, value: str) -> None:
    """Per-label plausibility of a span's text (upper/lower case tolerated)."""
    digits = sum(ch.isdigit() for ch in value)
    if label == "DATE":
        assert digits or _MONTH_RE.search(value), value
    elif label == "AGE":
        assert re.fullmatch(r"\d{1,3}[sS]?", value), value
    elif label == "EMAIL":
        assert re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", value), value
    elif label == "URL":
        assert re.match(r"(?i)(https?://|www\.)", value) and "." in value, value
    elif label == "PHONE":
        assert digits >= 6 and re.fullmatch(r"[\d\s()+.\-xX]+", value), value
    elif label == "ID":
        assert digits >= 3 and " " not in value, value
    elif label == "NAME":
        assert digits == 0 and any(ch.isalpha() for ch in value), value
    elif label == "LOCATION":
        assert any(ch.isalnum() for ch in value), value


def assert_clinical_outside_phi(doc: SyntheticNarrative) -> None:
    """Drugs, doses, labs, reactions and onset phrases never touch a PHI span."""
    for item in doc.meta["clinical"]:
        s, e, kind = item["start"], item["end"], item["kind"]
        assert kind in CLINICAL_KINDS
        assert 0 <= s < e <= len(doc.text)
        for ps, pe, _ in doc.spans:
            assert e <= ps or s >= pe, (doc.doc_id, doc.text[s:e], doc.text[ps:pe])


# --- determinism ------------------------------------------------------------------------


def test_same_seed_gives_identical_documents() -> None:
    a = [d.to_json_dict() for d in generate_narratives(40, seed=5)]
    b = [d.to_json_dict() for d in generate_narratives(40, seed=5)]
    assert a == b
    assert _jsonl(list(generate_narratives(40, seed=5))) == _jsonl(list(generate_narratives(40, seed=5)))


def test_different_seeds_give_different_documents() -> None:
    a = [d.text for d in generate_narratives(20, seed=1)]
    b = [d.text for d in generate_narratives(20, seed=2)]
    assert a != b
    assert len(set(a) & set(b)) == 0


def test_prefix_does_not_depend_on_n() -> None:
    """Document i depends on (seed, i) only, so a bigger run extends a smaller one."""
    assert _jsonl(list(generate_narratives(12, seed=3))) == _jsonl(list(generate_narratives(30, seed=3))[:12])


def test_interleaved_generators_do_not_disturb_each_other() -> None:
    """Shared (cached) Faker instances are re-seeded per document."""
    alone = [d.text for d in generate_narratives(6, seed=8)]
    g1, g2 = generate_narratives(6, seed=8), generate_narratives(6, seed=9)
    mixed = []
    for d1, _ in zip(g1, g2):
        mixed.append(d1.text)
    assert mixed == alone


@pytest.mark.parametrize("hash_seed", ["0", "4242"])
def test_cli_output_is_byte_identical_in_fresh_processes(tmp_path: Path, hash_seed: str) -> None:
    """A fresh interpreter (different PYTHONHASHSEED) writes the same bytes as this one."""
    out = tmp_path / "n.jsonl"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-m", "jobs.generate_samples", "narratives", "--n", "40", "--seed", "13",
         "--out", str(out)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    expected = _jsonl(list(generate_narratives(40, seed=13)))
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(expected).hexdigest()


# --- spans ---------------------------------------------------------------------------------


def test_span_invariants_over_corpus(corpus: list[SyntheticNarrative]) -> None:
    for doc in corpus:
        assert_span_invariants(doc)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**40), index=st.integers(min_value=0, max_value=50_000))
def test_span_invariants_hold_for_any_seed(seed: int, index: int) -> None:
    doc = generate_one(seed, index)
    assert_span_invariants(doc)
    assert_clinical_outside_phi(doc)


def test_every_label_occurs(corpus: list[SyntheticNarrative]) -> None:
    labels = Counter(label for d in corpus for *_, label in d.spans)
    assert set(labels) == set(LABELS), labels


def test_names_exclude_titles_and_ages_are_numbers_only(corpus: list[SyntheticNarrative]) -> None:
    """i2b2 convention: 'Dr. [John Smith]', 'a [67]-year-old'."""
    for doc in corpus:
        for s, e, label in doc.spans:
            if label == "NAME":
                assert not re.match(r"(?i)(dr|mr|mrs|ms|prof)\.?\s", doc.text[s:e])
    ages = [d.text[s:e] for d in corpus for s, e, label in d.spans if label == "AGE"]
    assert any(a.lower().endswith("s") for a in ages)  # "in his 80s"


def test_initials_are_names(corpus: list[SyntheticNarrative]) -> None:
    initials = [
        d.text[s:e] for d in corpus for s, e, label in d.spans
        if label == "NAME" and re.fullmatch(r"[A-ZÀ-Þ][.\- ]*[A-ZÀ-Þ]\.?", d.text[s:e])
    ]
    assert len(initials) >= 10


def test_phi_formats_vary(corpus: list[SyntheticNarrative]) -> None:
    dates = {d.text[s:e] for d in corpus for s, e, label in d.spans if label == "DATE"}
    assert any(re.fullmatch(r"\d{2}-[A-Z]{3}-\d{4}", x) for x in dates)
    assert any(re.fullmatch(r"\d{4}-\d{2}-\d{2}", x) for x in dates)
    assert any(re.fullmatch(r"\d{2}\.\d{2}\.\d{4}", x) for x in dates)
    assert any(re.fullmatch(r"[A-Z][a-z]+ \d{1,2}, \d{4}", x) for x in dates)
    assert any(re.fullmatch(r"\d{4}", x) for x in dates)
    phones = [d.text[s:e] for d in corpus for s, e, label in d.spans if label == "PHONE"]
    assert any(p.startswith("+") for p in phones) and any(not p.startswith("+") for p in phones)


# --- clinical content ---------------------------------------------------------------------


def test_drugs_and_doses_present_and_outside_spans(corpus: list[SyntheticNarrative]) -> None:
    lexicon = {name.lower() for name in drug_lexicon()} | {t.lower() for t in TREATMENTS}
    for doc in corpus:
        kinds = Counter(item["kind"] for item in doc.meta["clinical"])
        assert kinds["DRUG"] >= 1 and kinds["DOSE"] >= 1, doc.meta["template"]
        assert_clinical_outside_phi(doc)
        for item in doc.meta["clinical"]:
            value = doc.text[item["start"]:item["end"]]
            if item["kind"] == "DRUG":
                assert value.lower() in lexicon, value
            elif item["kind"] == "DOSE":
                assert re.match(r"\d", value) and re.search(r"(?i)mg|mcg|ml|iu", value), value


def test_drug_lexicon_comes_from_package() -> None:
    """The package's dictionary gives ~1,000 generics; the fallback only 26."""
    pytest.importorskip("drug_named_entity_recognition")
    names = drug_lexicon()
    assert len(names) > 500
    assert {"ibuprofen", "amoxicillin", "warfarin"} <= set(names)
    assert list(names) == sorted(names)


def test_clinical_kinds_all_used(corpus: list[SyntheticNarrative]) -> None:
    kinds = {item["kind"] for d in corpus for item in d.meta["clinical"]}
    assert kinds == set(CLINICAL_KINDS)


def test_timeline_is_clinically_ordered() -> None:
    for i in range(500):
        t = sample_timeline(Random(i), age_years=40, fatal=i % 7 == 0)
        assert t.start <= t.onset <= t.stop <= t.recovery
        assert (t.onset - t.start).days == t.onset_days
        assert t.admission >= t.onset and t.discharge > t.admission
        assert t.receipt > t.onset and t.receipt >= t.recovery
        assert t.followups == sorted(t.followups) and t.followups[0] > t.receipt
        assert t.dob < t.start
        if t.death is not None:
            assert t.death > t.onset and t.receipt > t.death


@pytest.mark.parametrize("days", [0, 1, 4, 9, 20, 45, 90, 300])
def test_onset_phrase_agrees_with_interval(days: int) -> None:
    for k in range(20):
        phrase = onset_phrase(Random(k), days)
        numbers = [int(x) for x in re.findall(r"\d+", phrase)]
        if days <= 1 or not numbers:
            continue
        n = numbers[0]
        if "day" in phrase:
            assert n in (days, days + 1), phrase
        elif "week" in phrase:
            assert n == days // 7, phrase
        elif "month" in phrase:
            assert n == days // 30, phrase


# --- variety and coverage ---------------------------------------------------------------------


def test_registry_has_enough_templates_in_every_style() -> None:
    assert len(TEMPLATES) >= 25
    by_style = Counter(t.style for t in TEMPLATES.values())
    assert set(by_style) == set(STYLES)
    assert min(by_style.values()) >= 3


def test_all_templates_styles_and_locales_used(corpus: list[SyntheticNarrative]) -> None:
    assert {d.meta["template"] for d in corpus} == set(TEMPLATES)
    assert {d.meta["style"] for d in corpus} == set(STYLES)
    assert {d.meta["locale"] for d in corpus} == set(LOCALES)


def test_all_caps_documents_exist_with_upper_case_spans(corpus: list[SyntheticNarrative]) -> None:
    caps = [d for d in corpus if d.meta["casing"] == "upper"]
    assert len(caps) >= 20
    for doc in caps:
        assert doc.text == doc.text.upper()
        for s, e, _ in doc.spans:
            assert doc.text[s:e] == doc.text[s:e].upper()
    assert any(d.meta["casing"] == "upper" and d.meta["style"] != "telegraphic_caps" for d in corpus)


def test_length_line_breaks_and_density_vary(corpus: list[SyntheticNarrative]) -> None:
    sentences = [d.meta["sentences"] for d in corpus]
    assert min(sentences) <= 2 and max(sentences) >= 20
    assert any("\n" in d.text for d in corpus) and any("\n" not in d.text for d in corpus)
    densities = [len(d.spans) / max(len(d.text), 1) for d in corpus]
    assert max(densities) > 3 * min(densities)


# --- schema ---------------------------------------------------------------------------


def test_json_dict_schema_and_document_round_trip(corpus: list[SyntheticNarrative]) -> None:
    doc = corpus[0]
    record = json.loads(json.dumps(doc.to_json_dict()))
    assert set(record) == {"doc_id", "text", "spans", "keep", "meta"}
    assert all(set(s) == {"start", "end", "label"} for s in record["spans"])
    assert [(s["start"], s["end"], s["label"]) for s in record["spans"]] == doc.spans
    assert {"style", "template", "seed"} <= set(record["meta"])
    document = doc.to_document()
    document.validate()
    assert [(g.start, g.end, g.label) for g in document.spans] == doc.spans
    assert len({d.doc_id for d in corpus}) == len(corpus)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_invalid_n_is_rejected_eagerly(bad: object) -> None:
    with pytest.raises(ValueError):
        generate_narratives(bad)  # type: ignore[arg-type]


# --- building blocks -----------------------------------------------------------------------


def test_builder_offsets_survive_length_changing_case_mapping() -> None:
    """'ß'.upper() == 'SS': spans must be measured after casing, not before."""
    b = NarrativeBuilder(casing=str.upper)
    b.say("Patient {n} lives in {s}.", n=Phi("Groß", "NAME"), s=seq(Phi("Straße 5", "LOCATION"), ", ", "x"))
    built = b.build()
    assert built.text == "PATIENT GROSS LIVES IN STRASSE 5, X."
    assert [built.text[s:e] for s, e, _ in built.spans] == ["GROSS", "STRASSE 5"]


def test_builder_separators_and_errors() -> None:
    b = NarrativeBuilder(sentence_sep=" ")
    b.say("One.").say("Two.").paragraph().say("Three.").line("A: {x}", x=Phi("1", "ID")).say("End.")
    assert b.build().text == "One. Two.\n\nThree. A: 1\nEnd."
    with pytest.raises(KeyError):
        NarrativeBuilder().fmt("{missing}")
    with pytest.raises(ValueError):
        NarrativeBuilder().add(Phi(" padded", "NAME"))
    with pytest.raises(ValueError):
        NarrativeBuilder().fmt("{x:>3}", x="a")
    assert cap("the patient") == "The patient"


def test_date_formats() -> None:
    d = date(2014, 1, 12)
    expected = {
        "dd_mon_yyyy": "12-JAN-2014", "iso": "2014-01-12", "us_short": "1/12/14", "eu_dot": "12.01.2014",
        "long": "January 12, 2014", "mon_yyyy": "jan2014", "abbr": "Jan 12, 2014", "space": "12 1 2014",
        "year": "2014", "month_yyyy": "January 2014",
    }
    for style, text in expected.items():
        assert format_date(d, style) == text
    with pytest.raises(ValueError):
        format_date(d, "nope")


# --- CLI ------------------------------------------------------------------------------------

runner = CliRunner()


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_cli_writes_n_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "dir" / "narratives.jsonl"
    result = runner.invoke(app, ["narratives", "--n", "25", "--seed", "7", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 25
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"doc_id", "text", "spans", "keep", "meta"}
    assert _leftovers(out.parent) == []
    assert "wrote 25 docs" in result.output and "DATE=" in result.output


def test_cli_is_a_command_group(tmp_path: Path) -> None:
    """'narratives' must stay a sub-command so that 'e2b' can join it."""
    help_result = runner.invoke(app, ["--help"])
    assert help_result.exit_code == 0 and "narratives" in help_result.output
    bare = runner.invoke(app, ["--n", "3", "--out", str(tmp_path / "x.jsonl")])
    assert bare.exit_code != 0


def test_cli_zero_documents_gives_empty_file(tmp_path: Path) -> None:
    out = tmp_path / "empty.jsonl"
    result = runner.invoke(app, ["narratives", "--n", "0", "--out", str(out)])
    assert result.exit_code == 0 and out.read_bytes() == b""


def test_cli_failure_mid_stream_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "narratives.jsonl"
    out.write_text("previous content\n", encoding="utf-8")

    def exploding(n: int, seed: int = 0):  # noqa: ANN202 - test double
        real = generate_narratives(n, seed)
        for i, doc in enumerate(real):
            if i == 3:
                raise RuntimeError("disk on fire")
            yield doc

    monkeypatch.setattr(generate_samples, "generate_narratives", exploding)
    result = runner.invoke(app, ["narratives", "--n", "10", "--out", str(out)])
    assert result.exit_code != 0
    assert isinstance(result.exception, RuntimeError)
    assert out.read_text(encoding="utf-8") == "previous content\n"
    assert _leftovers(tmp_path) == []


def test_cli_failure_without_old_file_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def exploding(n: int, seed: int = 0):  # noqa: ANN202 - test double
        yield next(iter(generate_narratives(1, seed)))
        raise KeyboardInterrupt

    monkeypatch.setattr(generate_samples, "generate_narratives", exploding)
    result = runner.invoke(app, ["narratives", "--n", "5", "--out", str(tmp_path / "n.jsonl")])
    assert result.exit_code != 0
    assert list(tmp_path.iterdir()) == []


def test_cli_unwritable_destination_fails_cleanly(tmp_path: Path) -> None:
    """A parent that is a file cannot become a directory (works even as root)."""
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["narratives", "--n", "3", "--out", str(blocker / "n.jsonl")])
    assert result.exit_code == 1
    assert "cannot write" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not_a_dir"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores directory permissions")
def test_cli_read_only_directory_fails_cleanly(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = runner.invoke(app, ["narratives", "--n", "3", "--out", str(locked / "n.jsonl")])
        assert result.exit_code == 1
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_write_jsonl_atomic_cleans_up_on_serialisation_error(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    with pytest.raises(TypeError):
        write_jsonl_atomic(out, [{"ok": 1}, {"bad": object()}])
    assert list(tmp_path.iterdir()) == []


# --- keep spans -----------------------------------------------------------------------


def test_clinical_content_becomes_keep_spans_inside_the_text(corpus: list[SyntheticNarrative]) -> None:
    from deid_core.corpus.document import KEEP_LABELS, KeepSpan
    from deid_core.synthetic.narratives import CLINICAL_KEEP_LABELS

    assert set(CLINICAL_KEEP_LABELS.values()) <= set(KEEP_LABELS)
    assert CLINICAL_KEEP_LABELS["ONSET"] == "DURATION"
    seen: Counter[str] = Counter()
    for doc in corpus:
        document = doc.to_document()
        document.validate()  # offsets inside the text, labels from KEEP_LABELS
        clinical = doc.meta["clinical"]
        assert document.keep == [KeepSpan(c["start"], c["end"], CLINICAL_KEEP_LABELS[c["kind"]]) for c in clinical]
        for k in document.keep:
            assert 0 <= k.start < k.end <= len(doc.text)
            assert doc.text[k.start:k.end].strip()
            seen[k.label] += 1
        record = json.loads(json.dumps(doc.to_json_dict()))
        assert [(k["start"], k["end"], k["label"]) for k in record["keep"]] == [
            (k.start, k.end, k.label) for k in document.keep]
    assert {"DRUG", "DOSE", "LAB", "DURATION", "REACTION", "LOT"} <= set(seen)


def test_lot_numbers_are_keep_spans_never_phi(corpus: list[SyntheticNarrative]) -> None:
    # a product's lot number names a batch, not a person: a LOT keep span, never an ID gold span
    lot_cue = re.compile(r"(?i)\b(?:lot|batch)(?:\s*(?:no\.|number|#))?\s*[:#]?\s*$")
    lots = 0
    for doc in corpus:
        for k in doc.to_document().keep:
            if k.label == "LOT":
                lots += 1
                value = doc.text[k.start:k.end]
                assert any(ch.isdigit() for ch in value) and " " not in value, value
        for start, _, label in doc.spans:
            assert not (label == "ID" and lot_cue.search(doc.text[max(0, start - 20):start])), doc.doc_id
    assert lots >= 10


def test_generated_jsonl_reads_back_with_its_keep_spans(tmp_path: Path, corpus: list[SyntheticNarrative]) -> None:
    from deid_core.corpus.jsonl import read_jsonl

    p = tmp_path / "s.jsonl"
    p.write_bytes(_jsonl(corpus[:20]))
    back = read_jsonl(p)
    assert [d.keep for d in back] == [d.to_document().keep for d in corpus[:20]]


def test_an_unmapped_clinical_kind_is_refused() -> None:
    doc = SyntheticNarrative("x", "take 5 mg", [], {"clinical": [{"start": 5, "end": 9, "kind": "ROUTE"}]})
    with pytest.raises(ValueError, match="CLINICAL_KEEP_LABELS"):
        doc.to_document()
