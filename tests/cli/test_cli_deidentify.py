"""`deid deidentify`: policy replacement end to end through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_core.replace.keys import ENV_VAR

from .test_cli import SECRET, run, write

KEY = "cli-test-key-0123456789abcdef"
CASE_DOCS = [
    {"doc_id": "r1", "case_id": "C-1", "text": f"Seen by Dr. {SECRET} on 12-JAN-2014; ibuprofen 400 mg."},
    {"doc_id": "r2", "case_id": "C-1", "text": f"Follow-up 19-JAN-2014: Dr. {SECRET} notes rash resolved."},
    {"doc_id": "r3", "case_id": "C-2", "text": f"Seen by Dr. {SECRET} on 12-JAN-2014; a 93 yo man."},
]


def _run(monkeypatch, tmp_path: Path, *extra: str, docs=CASE_DOCS) -> tuple[int, Path]:  # type: ignore[no-untyped-def]
    src = write(tmp_path, [json.dumps(d).encode() for d in docs])
    out = tmp_path / "out.jsonl"
    code = run(monkeypatch, "deidentify", "--in", str(src), "--out", str(out), "--method", "rules",
               "--no-progress", *extra)
    return code, out


def test_deidentify_with_key_is_consistent_per_case(monkeypatch, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(ENV_VAR, KEY)
    code, out = _run(monkeypatch, tmp_path, "--policy", "hipaa_safe_harbor", "--case-field", "case_id")
    assert code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["doc_id"] for r in rows] == ["r1", "r2", "r3"]
    assert all(set(r) == {"doc_id", "text_deid", "spans"} for r in rows)
    for r in rows:
        assert SECRET not in r["text_deid"]
        for s in r["spans"]:
            assert set(s) == {"start", "end", "label", "replacement"}
    name = {r["doc_id"]: next(s["replacement"] for s in r["spans"] if s["label"] == "NAME") for r in rows}
    assert name["r1"] == name["r2"] != name["r3"]  # same case: same pseudonym; other case: another
    dates = {r["doc_id"]: next(s["replacement"] for s in r["spans"] if s["label"] == "DATE") for r in rows}
    assert dates["r1"] != "12-JAN-2014" and dates["r1"] != dates["r3"]
    assert "[AGE>89]" in rows[2]["text_deid"]
    err = capsys.readouterr().err
    assert SECRET not in err and KEY not in err and "3 documents" in err


def test_keyed_policy_without_key_fails_with_no_output(monkeypatch, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(ENV_VAR, raising=False)
    code, out = _run(monkeypatch, tmp_path, "--policy", "hipaa_safe_harbor")
    assert code == 2 and not out.exists()
    assert ENV_VAR in capsys.readouterr().err


def test_tags_policy_runs_without_key(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(ENV_VAR, raising=False)
    code, out = _run(monkeypatch, tmp_path, "--policy", "tags")
    assert code == 0
    first = json.loads(out.read_text().splitlines()[0])
    assert "[NAME]" in first["text_deid"] and "[DATE]" in first["text_deid"]


def test_key_file_and_unknown_policy(monkeypatch, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(ENV_VAR, raising=False)
    kf = tmp_path / "secret.key"
    kf.write_text(KEY + "\n")
    code, out = _run(monkeypatch, tmp_path, "--policy", "strict", "--key-file", str(kf))
    assert code == 0 and out.exists()
    code, _ = _run(monkeypatch, tmp_path, "--policy", "no-such-policy", "--key-file", str(kf))
    assert code == 2 and "available" in capsys.readouterr().err


@pytest.mark.parametrize("key_text", ["", "short"])
def test_weak_key_file_is_refused(monkeypatch, tmp_path: Path, key_text: str) -> None:  # type: ignore[no-untyped-def]
    kf = tmp_path / "secret.key"
    kf.write_text(key_text)
    code, out = _run(monkeypatch, tmp_path, "--policy", "strict", "--key-file", str(kf))
    assert code == 2 and not out.exists()
