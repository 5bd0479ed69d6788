"""The model-refresh CLI: config, inbox validation, and the whole flow on tiny data (local Spark, tiny network)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from deid_core.config import ConfigError, load_config
from deid_core.corpus.jsonl import write_jsonl
from deid_core.deep.manifest import ModelManifest, file_sha256
from deid_core.detectors import thresholds_for
from deid_core.model_refresh.config import REFRESH_CONFIG_ENV, load_refresh_config
from deid_core.model_refresh.registry import current_model_dir
from deid_core.synthetic import generate_narratives
from jobs.model_refresh import app

REPO = Path(__file__).resolve().parents[2]
DEID_YAML = REPO / "conf" / "deid.yaml"
#: a word only the test's documents contain: it must never reach the job's output
MARKER = "Zyxquorbel"

TINY = {
    "architecture": {"char_embedding_dim": 4, "char_lstm_units": 3, "token_embedding_dim": 5, "token_lstm_units": 4},
    "sequence": {"window_tokens": 32, "overlap": 8},
    # the flow, not the data recipe: no augmentation, VAERS injection or vectors here
    "training": {"batch_size": 8, "spark_conf": {}, "surrogate_copies": 0, "vaers_docs": 0,
                 "pretrained_vectors": None, "tuning_standoff": []},
}


def cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def write_config(root: Path, **changes: object) -> Path:
    """A refresh config in `root` whose relative paths point at the test's own data."""
    data = root / "data"
    sets = [{"name": n, "path": f"data/{n}.jsonl", "sha256": file_sha256(data / f"{n}.jsonl")}
            for n in ("eval_a", "eval_b") if (data / f"{n}.jsonl").exists()]
    raw: dict[str, object] = {
        "registry_dir": "registry",
        "work_dir": "work",
        "deid_config": str(DEID_YAML),
        "annotations_inbox": "inbox",
        "base_corpora": ["data/train.jsonl"],
        "dev": "data/dev.jsonl",
        "synthetic_docs": 6,
        "synthetic_seed": 7,
        "max_epochs": 1,
        "target_recall": 0.5,
        "eval_sets": sets or [{"name": "x", "path": "data/dev.jsonl", "sha256": "0" * 64}],
        "training_overrides": TINY,
        **changes,
    }
    path = root / "model_refresh.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    docs = [n.to_document() for n in generate_narratives(54, seed=5)]
    data = tmp_path / "data"
    write_jsonl(docs[:16], data / "train.jsonl")
    write_jsonl(docs[16:26], data / "dev.jsonl")
    write_jsonl(docs[26:34], tmp_path / "inbox" / "site_batch_1.jsonl")
    write_jsonl(docs[34:44], data / "eval_a.jsonl")
    write_jsonl(docs[44:], data / "eval_b.jsonl")
    return tmp_path


# ---- configuration ------------------------------------------------------------------


def test_the_repository_config_pins_the_real_test_set(shared_data: Path) -> None:
    rc = load_refresh_config()
    assert rc.registry_dir == REPO / "build" / "model_registry" and rc.deid_config == DEID_YAML
    assert rc.promotion.recall_tolerance == 0.0 and rc.promotion.max_precision_drop == 0.01
    # the candidate is tuned on dev alone, without the out-of-fold scores the deid config's target assumes:
    # it keeps the dev-only target with a margin
    assert rc.target_recall == 0.998 and rc.synthetic_docs == 400 and not rc.fine_tune_from_current
    assert rc.deid().deep.training.threshold_target_recall < rc.target_recall
    [test_set] = rc.eval_sets
    assert test_set.path == shared_data / "physionet_deid" / "test.jsonl"
    assert file_sha256(test_set.path) == test_set.sha256
    assert rc.base_corpora == [shared_data / "physionet_deid" / "train.jsonl"]


def test_config_paths_env_and_strictness(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(root)
    monkeypatch.setenv(REFRESH_CONFIG_ENV, str(path))
    rc = load_refresh_config()
    assert rc.work_dir == root / "work" and rc.eval_sets[0].path == root / "data" / "eval_a.jsonl"
    cfg = rc.deid()
    assert cfg.deep.architecture.token_lstm_units == 4 and cfg.deep.sequence.window_tokens == 32
    assert cfg.deep.training.batch_size == 8 and cfg.deep.training.label_map  # untouched keys stay
    bad = [
        {"registry": "x"},                                                    # typo of registry_dir
        {"promotion": {"recall_tolerance": -0.1}},
        {"promotion": {"max_precision_drop": 0.01, "recal_tolerance": 0}},
        {"eval_sets": []},
        {"eval_sets": [{"name": "a", "path": "p", "sha256": "abc"}]},
        {"training_overrides": {"architecture": {"lstm_units": 3}}},
        {"training_overrides": {"architecture": {"head": "transformer"}}},
        {"training_overrides": {"training": {"corpora": ["x.jsonl"]}}},      # set by the job itself
    ]
    for change in bad:
        with pytest.raises(ConfigError):
            load_refresh_config(write_config(root, **change))


# ---- inputs that stop a step -----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ({"doc_id": "d1", "text": f"Seen by {MARKER}.", "spans": [{"start": 8, "end": 99, "label": "NAME"}]},
         "outside the text"),
        ({"doc_id": "d1", "text": f"Seen by {MARKER}.", "spans": [{"start": 8, "end": 18, "label": "NMAE"}]},
         "label 'NMAE'"),
        ({"text": f"Seen by {MARKER}.", "spans": []}, "doc_id"),
        ({"doc_id": "d1", "text": f"Seen by {MARKER}."}, "'spans' list"),
        ({"doc_id": "d1", "text": f"Seen by {MARKER}.", "spans": [{"start": 8, "label": "NAME"}]}, "integer"),
    ],
)
def test_an_invalid_inbox_file_fails_the_build_with_file_and_line(root: Path, line: dict, why: str) -> None:  # type: ignore[type-arg]
    good = json.dumps({"doc_id": "d0", "text": "Nothing here.", "spans": []})
    (root / "inbox" / "site_batch_2.jsonl").write_text(good + "\n" + json.dumps(line) + "\n")
    r = cli("build-training-set", "--run-id", "r1", "--config", str(write_config(root)))
    assert r.exit_code == 2, r.output
    assert "site_batch_2.jsonl: line 2" in r.stderr and why in r.stderr
    assert MARKER not in r.output
    assert not (root / "work" / "r1" / "training_set.json").exists()


def test_duplicate_ids_across_files_and_bad_run_ids_are_refused(root: Path) -> None:
    first = (root / "inbox" / "site_batch_1.jsonl").read_text().splitlines()[0]
    (root / "inbox" / "site_batch_2.jsonl").write_text(first + "\n")
    config = str(write_config(root))
    r = cli("build-training-set", "--run-id", "r1", "--config", config)
    assert r.exit_code == 2 and "site_batch_2.jsonl: line 1: doc_id repeats the one at site_batch_1.jsonl: line 1" in r.stderr
    for bad in ("../escape", "a/b", ""):
        assert cli("build-training-set", "--run-id", bad, "--config", config).exit_code == 2
    shutil.rmtree(root / "inbox")
    r = cli("build-training-set", "--run-id", "r1", "--config", config)
    assert r.exit_code == 2 and "annotations inbox not found" in r.stderr
    assert cli("train", "--run-id", "r9", "--config", config).exit_code == 2  # nothing built
    assert cli("evaluate", "--run-id", "r9", "--config", config).exit_code == 2
    assert cli("promote", "--run-id", "r9", "--config", config).exit_code == 2


def test_train_wires_the_training_set_into_train_model(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the step hands to train_model (fast: train_model is replaced by a copy of the committed model)."""
    import jobs.train_model

    calls: list[dict[str, object]] = []

    def fake_train_model(cfg, **kw):  # type: ignore[no-untyped-def]
        calls.append({"cfg": cfg, **kw})
        shutil.copytree(REPO / "models" / "default", kw["out"])
        return ModelManifest.read(kw["out"])

    monkeypatch.setattr(jobs.train_model, "train_model", fake_train_model)
    config = str(write_config(root, fine_tune_from_current=True))
    work = root / "work" / "r1"
    assert cli("build-training-set", "--run-id", "r1", "--config", config).exit_code == 0
    r = cli("train", "--run-id", "r1", "--config", config)
    assert r.exit_code == 0, r.output
    [call] = calls
    assert call["corpora"] == [root / "data" / "train.jsonl", work / "training_set" / "inbox" / "site_batch_1.jsonl",
                               work / "training_set" / "synthetic_seed7_n6.jsonl"]
    assert call["synthetic_docs"] == 0 and call["dev_path"] == root / "data" / "dev.jsonl"
    assert call["max_epochs"] == 1 and call["target_recall"] == 0.5 and call["config_file"] == DEID_YAML
    assert call["base_model"] == REPO / "models" / "default"  # nothing promoted yet: the configured model
    cfg = call["cfg"]
    assert cfg.deep.training.workdir == work / "train_work" and cfg.deep.architecture.token_lstm_units == 4
    ts_sha = json.loads((work / "training_set.json").read_text())["sha256"]
    assert ModelManifest.read(work / "candidate").training["refresh"]["training_set_sha256"] == ts_sha
    assert cli("train", "--run-id", "r1", "--config", config).exit_code == 0 and len(calls) == 1
    # a training-set file changed after the build is refused
    inbox_copy = work / "training_set" / "inbox" / "site_batch_1.jsonl"
    inbox_copy.write_text(inbox_copy.read_text() + "\n")
    r = cli("train", "--run-id", "r1", "--config", config)
    assert r.exit_code == 2 and "missing or changed" in r.stderr and len(calls) == 1


# ---- the whole flow ----------------------------------------------------------------------


@pytest.mark.spark
def test_build_train_evaluate_promote_rollback(root: Path) -> None:
    # the gate itself is covered by test_promotion; a 1-epoch tiny network
    # cannot match the committed model, so this config lets it through
    config = str(write_config(root, promotion={"recall_tolerance": 1.0, "max_precision_drop": 1.0}))
    work, registry = root / "work" / "r1", root / "registry"
    fallback = load_refresh_config(Path(config)).deid().deep.model_dir
    baseline = ModelManifest.read(fallback).model_version

    def step(name: str, run_id: str = "r1") -> Result:
        r = cli(name, "--run-id", run_id, "--config", config)
        assert r.exit_code == 0, r.output
        assert MARKER not in r.output
        return r

    # build-training-set
    step("build-training-set")
    ts = json.loads((work / "training_set.json").read_text())
    roles = {e["role"]: e for e in ts["files"]}
    assert roles["inbox"]["documents"] == 8 and roles["synthetic"]["documents"] == 6
    assert (work / roles["inbox"]["path"]).read_bytes() == (root / "inbox" / "site_batch_1.jsonl").read_bytes()
    assert ts["base_corpora"][0]["documents"] == 16 and ts["dev"]["documents"] == 10
    assert "nothing to do" in step("build-training-set").stderr
    # a changed inbox cannot silently alter a run's training set
    (root / "inbox" / "late.jsonl").write_text("")
    r = cli("build-training-set", "--run-id", "r1", "--config", config)
    assert r.exit_code == 2 and "other inputs" in r.stderr
    (root / "inbox" / "late.jsonl").unlink()

    # train
    step("train")
    cand = ModelManifest.read(work / "candidate")
    assert cand.training["refresh"] == {"run_id": "r1", "training_set_sha256": ts["sha256"]}
    assert cand.architecture.token_lstm_units == 4 and cand.thresholds is not None
    assert [s.documents for s in cand.training_data] == [16, 8, 6]
    assert not (work / "train_work").exists() and not (work / "candidate.partial").exists()
    weights = file_sha256(work / "candidate" / "weights.weights.h5")
    assert "nothing to do" in step("train").stderr
    assert file_sha256(work / "candidate" / "weights.weights.h5") == weights

    # evaluate: a frozen set that changed is refused
    eval_a = root / "data" / "eval_a.jsonl"
    original = eval_a.read_bytes()
    eval_a.write_bytes(original + json.dumps({"doc_id": "x", "text": "extra", "spans": []}).encode() + b"\n")
    r = cli("evaluate", "--run-id", "r1", "--config", config)
    assert r.exit_code == 2 and "eval set eval_a" in r.stderr and "sha256" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (work / "evaluation.json").exists()
    eval_a.write_bytes(original)
    step("evaluate")
    ev = json.loads((work / "evaluation.json").read_text())
    assert ev["candidate"]["model_version"] == cand.model_version
    assert ev["current"]["model_version"] == baseline and ev["current"]["source"] == "fallback"
    # the gate judges the operating point the jobs run: the tuned pair and its per-reason table
    prod = thresholds_for(load_config(DEID_YAML), cand.thresholds)
    assert cand.thresholds.by_reason and prod.by_reason
    assert ev["candidate"]["thresholds"] == {"low": prod.low, "high": prod.high,
                                             "by_reason": dict(sorted(prod.by_reason.items())), "source": "manifest"}
    for name in ("eval_a", "eval_b"):
        for side in ("candidate", "current"):
            res = ev["sets"][name][side]["result"]
            assert res["documents"] == 10 and res["gold_tokens"] > 0 and res["failures"] == 0
            assert 0 < res["recall"] <= 1 and res["recall"] == ev["sets"][name][side]["counts"]["token"]["recall"]
    assert "nothing to do" in step("evaluate").stderr

    # promote
    r = step("promote")
    decision = json.loads(r.stdout)
    assert decision["decision"] == "promoted" and decision["candidate"] == cand.model_version
    assert decision == json.loads((work / "decision.json").read_text())
    assert set(decision["metrics"]) == {"eval_a", "eval_b"}
    promoted = registry / "versions" / cand.model_version
    assert current_model_dir(registry, fallback) == promoted
    assert (registry / "versions" / baseline / "manifest.json").exists()  # kept for rollback
    pointer = json.loads((registry / "current.json").read_text())
    assert pointer["previous"] == [baseline] and pointer["run_id"] == "r1"
    assert "nothing to do" in step("promote").stderr
    assert len((registry / "history.jsonl").read_text().splitlines()) == 1
    assert cli("current", "--config", config).stdout.strip() == str(promoted)

    # a second run whose candidate is the current model is rejected (exit 0, recorded)
    for name in ("training_set", "training_set.json", "candidate"):
        src, dst = work / name, root / "work" / "r2" / name
        shutil.copytree(src, dst) if src.is_dir() else shutil.copy(src, dst)
    step("evaluate", "r2")
    r = step("promote", "r2")
    assert json.loads(r.stdout)["decision"] == "rejected" and "already the current model" in r.stderr
    assert current_model_dir(registry, fallback) == promoted
    shutil.copytree(root / "work" / "r2", root / "work" / "r3")
    (root / "work" / "r3" / "decision.json").unlink()

    # rollback returns to the baseline; nothing older is left
    r = cli("rollback", "--config", config)
    assert r.exit_code == 0 and r.stdout.strip() == str(registry / "versions" / baseline)
    assert current_model_dir(registry, fallback) == registry / "versions" / baseline
    r = cli("rollback", "--config", config)
    assert r.exit_code == 2 and "no earlier version" in r.stderr
    # an evaluation made against another current model is stale
    r = cli("promote", "--run-id", "r3", "--config", config)
    assert r.exit_code == 2 and "current model changed" in r.stderr
    # a decided run stays decided
    assert "nothing to do" in step("promote").stderr
    assert current_model_dir(registry, fallback) == registry / "versions" / baseline
    # forward again to a named version
    r = cli("rollback", "--to", cand.model_version, "--run-id", "ops-2", "--config", config)
    assert r.exit_code == 0 and current_model_dir(registry, fallback) == promoted

    assert [json.loads(x)["decision"] for x in step("history", "r2").stdout.splitlines()] == ["rejected"]
    r = cli("history", "--config", config)
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.exit_code == 0 and [(h["run_id"][:2], h["decision"]) for h in lines] == [
        ("r1", "promoted"), ("r2", "rejected"), ("ro", "rolled_back"), ("op", "rolled_back")]
    assert lines[2]["candidate"] == baseline and lines[2]["current"] == cand.model_version
