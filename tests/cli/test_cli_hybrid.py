"""`deid detect/eval/tune-thresholds` with the network methods (tiny untrained model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from deid_core.deep.manifest import ModelManifest

from ..deep.conftest import make_model_dir
from .test_cli import DOCS, SECRET, run, write


@pytest.fixture()
def model_dir(cfg, artifact, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    return make_model_dir(cfg, artifact, tmp_path / "model")


@pytest.mark.parametrize("method", ["hybrid", "deep"])
def test_detect_with_network_methods(monkeypatch, tmp_path: Path, model_dir: Path, method: str, capsys) -> None:  # type: ignore[no-untyped-def]
    src = write(tmp_path, [json.dumps(d).encode() for d in DOCS])
    out = tmp_path / "out.jsonl"
    code = run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--method", method,
               "--model", str(model_dir), "--no-progress")
    assert code == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["doc_id"] for x in lines] == ["r1", "r2"]
    err = capsys.readouterr().err
    assert method in err and SECRET not in err


def test_hybrid_is_the_default_and_fails_closed_without_a_model(monkeypatch, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    src = write(tmp_path, [json.dumps(DOCS[0]).encode()])
    out = tmp_path / "out.jsonl"
    code = run(monkeypatch, "detect", "--in", str(src), "--out", str(out), "--model", str(tmp_path / "missing"),
               "--no-progress")
    assert code == 2 and not out.exists()
    assert "manifest" in capsys.readouterr().err


def test_hybrid_with_untrained_network_keeps_rule_masks(monkeypatch, tmp_path: Path, model_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """An untrained network is never confident: everything the rules mask stays masked."""
    src = write(tmp_path, [json.dumps(DOCS[0]).encode()])
    out_h, out_r = tmp_path / "h.jsonl", tmp_path / "r.jsonl"
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out_h), "--model", str(model_dir),
               "--no-progress") == 0
    assert run(monkeypatch, "detect", "--in", str(src), "--out", str(out_r), "--method", "rules",
               "--no-progress") == 0
    hybrid = {(s["start"], s["end"]) for s in json.loads(out_h.read_text())["spans"]}
    rules = {(s["start"], s["end"]) for s in json.loads(out_r.read_text())["spans"]}
    assert rules <= hybrid


def test_tune_thresholds_writes_plot_and_manifest(monkeypatch, tmp_path: Path, model_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    text = f"Seen by Dr. {SECRET} on 12-JAN-2014 for rash."
    gold = {"doc_id": "g1", "text": text, "spans": [{"start": 12, "end": 23, "label": "NAME"},
                                                     {"start": 27, "end": 38, "label": "DATE"}]}
    src = write(tmp_path, [json.dumps(gold).encode()] * 3)
    plot = tmp_path / "pr.png"
    code = run(monkeypatch, "tune-thresholds", "--gold", str(src), "--target-recall", "1.0",
               "--model", str(model_dir), "--plot", str(plot))
    assert code == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    t = ModelManifest.read(model_dir).thresholds
    assert t is not None and t.recall == 1.0 and t.tuned_on == "in.jsonl" and t.target_recall == 1.0
    out = capsys.readouterr().out
    assert "best at recall" in out and SECRET not in out
    # the detector now uses the stored pair: eval reaches the tuned recall
    assert run(monkeypatch, "eval", "--gold", str(src), "--model", str(model_dir), "--json", "--no-progress") == 0
    res = json.loads(capsys.readouterr().out)
    assert res["method"] == "hybrid" and res["token"]["recall"] == 1.0


def test_tune_thresholds_dry_run_leaves_manifest(monkeypatch, tmp_path: Path, model_dir: Path) -> None:  # type: ignore[no-untyped-def]
    before = (model_dir / "manifest.json").read_bytes()
    src = write(tmp_path, [json.dumps({"doc_id": "g", "text": "Ann came", "spans": [
        {"start": 0, "end": 3, "label": "NAME"}]}).encode()])
    listing = sorted(p.name for p in model_dir.iterdir())
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--model", str(model_dir), "--dry-run",
               "--plot", str(tmp_path / "p.png")) == 0
    assert (model_dir / "manifest.json").read_bytes() == before and (tmp_path / "p.png").is_file()
    # without --plot a dry run draws nothing into the model directory either
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--model", str(model_dir), "--dry-run") == 0
    assert sorted(p.name for p in model_dir.iterdir()) == listing
    assert (model_dir / "manifest.json").read_bytes() == before
    shutil.rmtree(model_dir)


def test_tune_thresholds_pools_out_of_fold_scores(monkeypatch, tmp_path: Path, model_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Out-of-fold scores join the search: their PHI counts, their name is recorded, a changed file is refused."""
    import numpy as np

    from deid_core.training.out_of_fold import file_sha256, write_index
    from deid_core.training.tuning import TokenScores

    oof = tmp_path / "oof"
    entries = []
    for k in range(2):
        s = TokenScores(gold_phi=np.array([True, False, False]), rules_unsafe=np.array([True, True, False]),
                        never_release=np.zeros(3, dtype=bool), p_safe=np.array([0.2, 0.9, 0.99]),
                        families=np.array(["unknown", "unknown", "safe"], dtype=object))
        s.save(oof / f"fold-{k}.npz")
        entries.append({"fold": k, "scores": f"fold-{k}.npz", "sha256": file_sha256(oof / f"fold-{k}.npz")})
    # the folds' networks read what the model to tune reads (`OutOfFold.check_inputs`)
    inputs = list(ModelManifest.read(model_dir).feature_names)
    write_index(oof, setup="t", folds_total=2, fold_key="^[^-]+", corpora="train.jsonl", entries=entries,
                feature_names=inputs)
    text = f"Seen by Dr. {SECRET} on 12-JAN-2014 for rash."
    gold = {"doc_id": "g1", "text": text, "spans": [{"start": 12, "end": 23, "label": "NAME"},
                                                     {"start": 27, "end": 38, "label": "DATE"}]}
    src = write(tmp_path, [json.dumps(gold).encode()])
    capsys.readouterr()
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--target-recall", "1.0", "--model",
               str(model_dir), "--oof", str(oof), "--cv-folds", "2", "--plot", str(tmp_path / "p.png")) == 0
    out = capsys.readouterr().out
    without = run(monkeypatch, "tune-thresholds", "--gold", str(src), "--target-recall", "1.0", "--model",
                  str(model_dir), "--dry-run", "--plot", str(tmp_path / "p.png"))
    out_without = capsys.readouterr().out
    assert without == 0
    gold_with = int(out.split(" gold PHI")[0].rsplit(" ", 1)[-1])
    gold_without = int(out_without.split(" gold PHI")[0].rsplit(" ", 1)[-1])
    assert gold_with == gold_without + 2
    assert "3-fold cross-validation" in out or "4-fold cross-validation" in out
    t = ModelManifest.read(model_dir).thresholds
    assert t is not None and "+oof(train.jsonl;2folds;" in t.tuned_on
    (oof / "fold-1.npz").write_bytes(b"changed")
    assert run(monkeypatch, "tune-thresholds", "--gold", str(src), "--model", str(model_dir), "--oof", str(oof),
               "--dry-run", "--plot", str(tmp_path / "p.png")) == 2
    assert "changed" in capsys.readouterr().err
