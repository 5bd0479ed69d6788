"""Stand-off annotations: joined with texts kept elsewhere, hash-checked, never echoing text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deid_core.categories import CATEGORIES, UNKNOWN_LABEL
from deid_core.corpus.document import KEEP_LABELS, Document, GoldSpan, KeepSpan
from deid_core.corpus.jsonl import read_jsonl
from deid_core.corpus.standoff import StandoffError, app, materialise, read_standoff, text_sha256

SECRET = "Wilhelmina Quackenbush"
NARRATIVE = f"Seen by {SECRET} on 3/19/21; myalgias 2 days later."
LAB = "INR 3.2 on 3/20"
ANNOTATIONS = Path(__file__).resolve().parents[2] / "bench" / "annotations" / "vaers_pv"
#: The gold PHI labels the guideline allows (docs/annotation-guideline.md).
PHI_LABELS = {"NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER"}


def _shared(tmp_path: Path, narrative: str = NARRATIVE) -> Path:
    """A fake shared root: vaers/fake.jsonl with one report that has a narrative and lab data."""
    root = tmp_path / "shared"
    (root / "vaers").mkdir(parents=True)
    records = [
        {"doc_id": "VAERS-1", "text": narrative, "spans": [], "fields": {"lab_data": LAB}, "meta": {"age_yrs": "40"}},
        {"doc_id": "VAERS-2", "text": "no phi here", "spans": []},
    ]
    (root / "vaers" / "fake.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return root


def _annotation(doc_id: str = "VAERS-1", field: str = "text", text: str = NARRATIVE, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"doc_id": doc_id, "source": "fake.jsonl", "field": field, "text_sha256": text_sha256(text),
                           "spans": [], "keep": []}
    rec.update(extra)
    return rec


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    p = tmp_path / "ann.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def _offsets(text: str, quote: str) -> tuple[int, int]:
    start = text.index(quote)
    return start, start + len(quote)


def _good(tmp_path: Path) -> tuple[Path, Path]:
    name, date, reaction, duration = (_offsets(NARRATIVE, q) for q in (SECRET, "3/19/21", "myalgias", "2 days later"))
    lab, lab_date = _offsets(LAB, "INR 3.2"), _offsets(LAB, "3/20")
    ann = _write(tmp_path, [
        _annotation(spans=[{"start": name[0], "end": name[1], "label": "NAME"},
                           {"start": date[0], "end": date[1], "label": "DATE", "subtype": "DATE"}],
                    keep=[{"start": reaction[0], "end": reaction[1], "label": "REACTION"},
                          {"start": duration[0], "end": duration[1], "label": "DURATION"}]),
        _annotation(field="lab_data", text=LAB, spans=[{"start": lab_date[0], "end": lab_date[1], "label": "DATE"}],
                    keep=[{"start": lab[0], "end": lab[1], "label": "LAB"}]),
        _annotation(doc_id="VAERS-2", text="no phi here"),
    ])
    return ann, _shared(tmp_path)


def test_joins_texts_and_round_trips_through_a_corpus_file(tmp_path: Path) -> None:
    ann, shared = _good(tmp_path)
    docs = read_standoff(ann, shared)
    assert [d.doc_id for d in docs] == ["VAERS-1", "VAERS-1#lab_data", "VAERS-2"]
    first, lab, empty = docs
    assert first.text == NARRATIVE and lab.text == LAB and empty.text == "no phi here"
    assert [first.text[s.start:s.end] for s in first.spans] == [SECRET, "3/19/21"]
    assert first.spans[1] == GoldSpan(*_offsets(NARRATIVE, "3/19/21"), "DATE", "DATE")
    assert [(first.text[k.start:k.end], k.label) for k in first.keep] == [("myalgias", "REACTION"),
                                                                         ("2 days later", "DURATION")]
    assert lab.keep == [KeepSpan(*_offsets(LAB, "INR 3.2"), "LAB")]
    assert lab.meta == {"source": "fake.jsonl", "field": "lab_data", "report_id": "VAERS-1"}
    assert empty.spans == [] and empty.keep == []

    out = tmp_path / "build" / "corpus.jsonl"
    assert materialise(ann, shared, out) == 3
    again = read_jsonl(out)
    assert [(d.doc_id, d.text, d.spans, d.keep, d.meta) for d in again] == [
        (d.doc_id, d.text, d.spans, d.keep, d.meta) for d in docs
    ]


def test_cli_materialises(tmp_path: Path) -> None:
    ann, shared = _good(tmp_path)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["materialise", "--annotations", str(ann), "--shared", str(shared), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [d.doc_id for d in read_jsonl(out)] == ["VAERS-1", "VAERS-1#lab_data", "VAERS-2"]


def test_cli_reports_a_changed_text_without_it(tmp_path: Path) -> None:
    ann, _ = _good(tmp_path)
    shared = _shared(tmp_path / "other", narrative=NARRATIVE.replace("3/19/21", "3/18/21"))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["materialise", "--annotations", str(ann), "--shared", str(shared), "--out", str(out)])
    assert result.exit_code == 2
    assert "SHA-256" in result.output and SECRET not in result.output
    assert not out.exists()


def test_a_changed_text_raises_without_echoing_it(tmp_path: Path) -> None:
    ann = _write(tmp_path, [_annotation()])
    shared = _shared(tmp_path, narrative=NARRATIVE + " Follow-up by phone.")
    with pytest.raises(StandoffError) as exc:
        read_standoff(ann, shared)
    message = str(exc.value)
    assert "VAERS-1" in message and "ann.jsonl" in message and "fake.jsonl" in message and "SHA-256" in message
    assert SECRET not in message and "Follow-up" not in message


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        (_annotation(doc_id="VAERS-9"), "no such report or field"),
        (_annotation(field="history"), "no such report or field"),
        (_annotation(source="absent.jsonl"), "absent.jsonl not found"),
        (_annotation(source="../vaers/fake.jsonl"), "not a path"),
        (_annotation(text_sha256=""), "'text_sha256'"),
        (_annotation(spans=[{"start": 0, "end": 999, "label": "NAME"}]), "outside the text"),
        (_annotation(keep=[{"start": 0, "end": 4, "label": SECRET}]), "label outside DRUG"),
        (_annotation(spans=[{"start": "0", "end": 4, "label": "NAME"}]), "integer"),
    ],
)
def test_bad_annotations_raise_naming_the_line_not_the_text(tmp_path: Path, record: dict[str, Any], fragment: str) -> None:
    ann = _write(tmp_path, [_annotation(doc_id="VAERS-2", text="no phi here"), record])
    with pytest.raises(StandoffError) as exc:
        read_standoff(ann, _shared(tmp_path))
    assert fragment in str(exc.value)
    assert SECRET not in str(exc.value)
    if "not found" not in fragment:
        assert "line 2" in str(exc.value)


def test_a_document_annotated_twice_raises(tmp_path: Path) -> None:
    ann = _write(tmp_path, [_annotation(), _annotation()])
    with pytest.raises(StandoffError, match="already annotated on line 1"):
        read_standoff(ann, _shared(tmp_path))


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    ann = tmp_path / "ann.jsonl"
    ann.write_text(json.dumps(_annotation()) + "\n{" + SECRET + "\n", encoding="utf-8")
    with pytest.raises(StandoffError) as exc:
        read_standoff(ann, _shared(tmp_path))
    assert "line 2" in str(exc.value) and SECRET not in str(exc.value)


# ---- the committed VAERS PV evaluation set (needs ../shared/data) -------------------------


def _overlapping(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans = sorted(spans)
    return [b for a, b in zip(spans, spans[1:]) if b[0] < a[1]]


@pytest.mark.shared_data
def test_the_vaers_pv_set_resolves_and_is_sound(shared_data: Path) -> None:
    if not (shared_data / "vaers").is_dir():
        pytest.skip(f"VAERS files not found at {shared_data / 'vaers'} (the VAERS PV set annotates them)")
    split_docs: dict[str, list[Document]] = {}
    for split in ("dev", "test"):
        path = ANNOTATIONS / f"{split}.jsonl"
        raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        # stand-off only: offsets, labels, ids and a hash; never the text
        assert all(set(r) == {"doc_id", "source", "field", "text_sha256", "spans", "keep"} for r in raw)
        assert all(set(s) == {"start", "end", "label"} for r in raw for s in r["spans"] + r["keep"])
        split_docs[split] = read_standoff(path, shared_data)  # every line resolves, every hash matches
    dev, test = split_docs["dev"], split_docs["test"]

    reports = {split: {d.meta["report_id"] for d in docs} for split, docs in split_docs.items()}
    assert reports["dev"].isdisjoint(reports["test"])
    assert len(dev) >= 50 and len(test) >= 100 and len(dev) + len(test) >= 160
    every = dev + test
    assert {d.meta["field"] for d in every} >= {"text", "lab_data", "other_meds"}
    assert {d.meta["source"] for d in every} == {"vaers_narratives.jsonl", "vaers_2021_jan.jsonl"}
    assert sum(bool(d.spans) for d in every) * 2 >= len(every)  # at least half hold PHI

    assert PHI_LABELS <= set(CATEGORIES) - {UNKNOWN_LABEL}
    for d in every:
        assert {s.label for s in d.spans} <= PHI_LABELS, d.doc_id
        assert {k.label for k in d.keep} <= set(KEEP_LABELS), d.doc_id
        assert _overlapping([(s.start, s.end) for s in d.spans]) == [], d.doc_id
        assert _overlapping([(k.start, k.end) for k in d.keep]) == [], d.doc_id
        assert _overlapping([(s.start, s.end) for s in d.spans] + [(k.start, k.end) for k in d.keep]) == [], d.doc_id
        for s in [*d.spans, *d.keep]:
            piece = d.text[s.start:s.end]
            assert piece == piece.strip() and piece, (d.doc_id, s.start)  # tight: no outer whitespace
