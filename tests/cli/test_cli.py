"""The `deid` command line: output format, errors without partial output or PHI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from deid_core.cli import main

SECRET = "Quackenbush"


def run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["deid", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def write(tmp_path: Path, lines: list[bytes]) -> Path:
    p = tmp_path / "in.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return p


DOCS = [
    {"doc_id": "r1", "text": f"Seen by Dr. {SECRET} on 12-JAN-2014; ibuprofen 400 mg.", "site": "extra field"},
    {"doc_id": "r2", "text": "No identifiers here, only aspirin."},
]


def test_detect_writes_one_line_per_document(monkeypatch, tmp_path: Path, capsys) -> None:
    src = write(tmp_path, [json.dumps(d).encode() for d in DOCS])
    out = tmp_path / "out.jsonl"
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--method", "rules") == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["doc_id"] for x in lines] == ["r1", "r2"]
    first = lines[0]
    assert set(first) == {"doc_id", "spans", "text_deid"}
    assert all(set(s) == {"start", "end", "label", "score"} for s in first["spans"])
    assert SECRET not in first["text_deid"] and "2014" not in first["text_deid"]
    assert "[NAME]" in first["text_deid"] and "[DATE]" in first["text_deid"]
    assert "ibuprofen" in first["text_deid"]
    masked = {DOCS[0]["text"][s["start"]:s["end"]]: s["label"] for s in first["spans"]}
    assert masked[SECRET] == "NAME" and masked["JAN"] == "DATE"
    assert lines[1]["text_deid"].endswith("aspirin.")
    err = capsys.readouterr().err
    assert "2 documents" in err and SECRET not in err


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b'{"doc_id": "x", "text": "Mr ' + SECRET.encode() + b'"', "line 2: invalid JSON"),
        (b'{"doc_id": "x", "body": "Mr ' + SECRET.encode() + b'"}', "line 2: missing or non-string 'text'"),
        (b'{"doc_id": "x", "text": "Mr ' + SECRET.encode() + b'\xff"}', "line 2: not valid UTF-8"),
    ],
)
def test_bad_input_names_the_line_and_leaves_no_output(monkeypatch, tmp_path: Path, capsys, line, fragment) -> None:
    src = write(tmp_path, [json.dumps(DOCS[0]).encode(), line, json.dumps(DOCS[1]).encode()])
    out = tmp_path / "out.jsonl"
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--no-progress") == 2
    err = capsys.readouterr().err
    assert fragment in err and SECRET not in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # no temp file left


def test_existing_output_is_kept_when_a_run_fails(monkeypatch, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("previous complete run\n")
    src = write(tmp_path, [b"{broken"])
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--no-progress") == 2
    assert out.read_text() == "previous complete run\n"


def test_missing_dictionaries_fail_closed(monkeypatch, tmp_path: Path, capsys) -> None:
    src = write(tmp_path, [json.dumps(DOCS[0]).encode()])
    out = tmp_path / "out.jsonl"
    code = run(monkeypatch, "detect", "--in", str(src), "--out", str(out),
               "--dictionaries", str(tmp_path / "none.json.gz"))
    assert code == 2 and not out.exists()
    assert "make dictionaries" in capsys.readouterr().err


def test_eval_json_and_predictions(monkeypatch, tmp_path: Path, capsys) -> None:
    text = f"Seen by Dr. {SECRET} on 12-JAN-2014 for rash."
    gold = {"doc_id": "g1", "text": text, "spans": [{"start": 12, "end": 23, "label": "NAME"},
                                                     {"start": 27, "end": 38, "label": "DATE"}]}
    src = write(tmp_path, [json.dumps(gold).encode()])
    assert run(monkeypatch, "eval", "--gold", str(src), "--method", "rules", "--json", "--no-progress") == 0
    res = json.loads(capsys.readouterr().out)
    assert res["token"]["gold"] == 4 and res["token"]["recall"] == 1.0
    assert res["token"]["per_label"]["NAME"] == {"caught": 1, "gold": 1, "recall": 1.0}
    assert res["method"] == "rules" and res["dictionaries"].startswith("dict-")
    # scoring a prediction file: only the name masked
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"doc_id": "g1", "spans": [{"start": 12, "end": 23, "label": "NAME"}]}) + "\n")
    assert run(monkeypatch, "eval", "--gold", str(src), "--pred", str(pred), "--json", "--no-progress") == 0
    res = json.loads(capsys.readouterr().out)
    assert res["token"]["recall"] == 0.25 and res["token"]["precision"] == 1.0


def test_eval_table_output(monkeypatch, tmp_path: Path, capsys) -> None:
    src = write(tmp_path, [json.dumps({"doc_id": "g", "text": "Ann came", "spans": [
        {"start": 0, "end": 3, "label": "NAME"}]}).encode()])
    assert run(monkeypatch, "eval", "--gold", str(src), "--no-progress") == 0
    out = capsys.readouterr().out
    assert "Token masking" in out and "Recall per gold label" in out and "Retention" in out


def test_eval_reports_keep_retention_in_json_and_table(monkeypatch, tmp_path: Path, capsys) -> None:
    text = "Ann took aspirin 500 mg."
    gold = {"doc_id": "k", "text": text, "spans": [{"start": 0, "end": 3, "label": "NAME"}],
            "keep": [{"start": 9, "end": 16, "label": "DRUG"}, {"start": 17, "end": 23, "label": "DOSE"}]}
    src = write(tmp_path, [json.dumps(gold).encode()])
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"doc_id": "k", "spans": [{"start": 0, "end": 3, "label": "NAME"},
                                                         {"start": 17, "end": 20, "label": "ID"}]}) + "\n")
    assert run(monkeypatch, "eval", "--gold", str(src), "--pred", str(pred), "--json", "--no-progress") == 0
    keep = json.loads(capsys.readouterr().out)["keep"]
    assert (keep["tokens"], keep["kept"]) == (3, 2)
    assert keep["per_label"]["DOSE"] == {"kept": 1, "tokens": 2, "retention": 0.5}
    assert run(monkeypatch, "eval", "--gold", str(src), "--pred", str(pred), "--no-progress") == 0
    out = capsys.readouterr().out
    assert "Keep-span retention" in out and "0.5000" in out and "aspirin" not in out


def test_eval_refuses_incomplete_predictions(monkeypatch, tmp_path: Path, capsys) -> None:
    src = write(tmp_path, [json.dumps({"doc_id": "g", "text": "Ann", "spans": []}).encode()])
    pred = tmp_path / "p.jsonl"
    pred.write_text(json.dumps({"doc_id": "other", "spans": []}) + "\n")
    assert run(monkeypatch, "eval", "--gold", str(src), "--pred", str(pred), "--no-progress") == 2
    assert "no prediction" in capsys.readouterr().err


def test_inconsistent_spans_fail_closed_per_document(monkeypatch, tmp_path: Path) -> None:
    from deid_core.detectors import RulesDetector
    from deid_core.results import MaskedToken

    def overlapping(self, texts):
        return [[MaskedToken(0, 4, "NAME", 1.0), MaskedToken(2, 6, "NAME", 1.0)] for _ in texts]

    monkeypatch.setattr(RulesDetector, "detect", overlapping)
    src = write(tmp_path, [json.dumps(DOCS[0]).encode()])
    out = tmp_path / "out.jsonl"
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--method", "rules", "--no-progress") == 0
    line = json.loads(out.read_text())
    assert SECRET not in line["text_deid"] and "ibuprofen" not in line["text_deid"]
    assert all(s["label"] == "PHI" for s in line["spans"])


def test_eval_rendered_scores_what_the_policy_replaces(monkeypatch, tmp_path: Path, capsys) -> None:
    # the age detector finds "67", but HIPAA Safe Harbor keeps ages under 90: the output still reads
    # "67-year-old", so the rendered score counts it as kept; the name and the date are replaced
    text = f"A 67-year-old seen by Dr. {SECRET} on 12-JAN-2014 in 2014."
    gold = {"doc_id": "g1", "text": text, "spans": [{"start": 26, "end": 37, "label": "NAME"},
                                                     {"start": 41, "end": 52, "label": "DATE"}]}
    assert text[26:37] == SECRET and text[41:52] == "12-JAN-2014"
    src = write(tmp_path, [json.dumps(gold).encode()])
    assert run(monkeypatch, "eval", "--gold", str(src), "--method", "rules", "--json", "--no-progress") == 0
    mask = json.loads(capsys.readouterr().out)
    assert run(monkeypatch, "eval", "--gold", str(src), "--method", "rules", "--json", "--no-progress",
               "--rendered", "--policy", "hipaa_safe_harbor") == 0
    out = capsys.readouterr()
    rendered = json.loads(out.out)
    assert rendered["method"] == "rules/rendered" and SECRET not in out.err
    assert rendered["token"]["recall"] == mask["token"]["recall"] == 1.0
    # the kept age (and the year alone) leave the false positives and come back as numbers
    assert rendered["token"]["false_positives"] < mask["token"]["false_positives"]
    assert rendered["retention"]["numeric_kept"] > mask["retention"]["numeric_kept"]
    # under the strict policy every detected entity is replaced: the mask and the output agree
    assert run(monkeypatch, "eval", "--gold", str(src), "--method", "rules", "--json", "--no-progress",
               "--rendered", "--policy", "strict") == 0
    strict = json.loads(capsys.readouterr().out)
    assert strict["token"]["false_positives"] == mask["token"]["false_positives"]


def test_eval_rendered_refuses_a_prediction_file_and_policy_alone(monkeypatch, tmp_path: Path, capsys) -> None:
    src = write(tmp_path, [json.dumps({"doc_id": "g", "text": "Ann", "spans": []}).encode()])
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"doc_id": "g", "spans": []}) + "\n")
    assert run(monkeypatch, "eval", "--gold", str(src), "--pred", str(pred), "--rendered", "--no-progress") == 2
    assert "--rendered" in capsys.readouterr().err
    assert run(monkeypatch, "eval", "--gold", str(src), "--policy", "strict", "--no-progress") == 2
    assert "--policy" in capsys.readouterr().err
