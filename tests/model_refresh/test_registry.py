"""The filesystem model registry: register, promote, current, rollback, history, atomic writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deid_core.model_refresh import registry as reg_mod
from deid_core.deep.manifest import ModelManifest, file_sha256, model_version
from deid_core.model_refresh.registry import ModelRegistry, RegistryError, current_model_dir
from deid_core.thresholds import Thresholds

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "models" / "default"


def fake_model(folder: Path, weights: bytes, low: float = 0.5) -> tuple[Path, str]:
    """A model folder the registry accepts (valid manifest, consistent version); no network needed."""
    folder.mkdir(parents=True)
    shutil.copy(TEMPLATE / "vocabulary.json", folder / "vocabulary.json")
    (folder / "weights.weights.h5").write_bytes(weights)
    m = ModelManifest.read(TEMPLATE)
    version = model_version(m.vocabulary_sha256, file_sha256(folder / "weights.weights.h5"))
    m.model_copy(update={"model_version": version, "thresholds": Thresholds(low=low, high=0.9)}).write(folder)
    return folder, version


@pytest.fixture()
def models(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    return {name: fake_model(tmp_path / "src" / name, name.encode() * 100)
            for name in ("baseline", "one", "two")}


@pytest.fixture()
def registry(tmp_path: Path, models: dict[str, tuple[Path, str]]) -> ModelRegistry:
    return ModelRegistry(tmp_path / "registry", models["baseline"][0])


def entry(run_id: str, version: str) -> dict[str, object]:
    return {"run_id": run_id, "decision": "promoted", "candidate": version, "reasons": ["ok"], "metrics": {}}


def test_nothing_promoted_uses_the_fallback_and_creates_nothing(registry: ModelRegistry, tmp_path: Path) -> None:
    assert current_model_dir(registry.root, registry.fallback) == registry.fallback
    assert registry.current() is None and registry.history() == [] and registry.versions() == []
    with pytest.raises(RegistryError, match="nothing was promoted"):
        registry.rollback()
    assert not registry.root.exists()


def test_register_copies_and_verifies(registry: ModelRegistry, models: dict, tmp_path: Path) -> None:  # type: ignore[type-arg]
    src, v = models["one"]
    assert registry.register(src) == v
    copy = registry.root / "versions" / v
    assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in src.iterdir())
    assert file_sha256(copy / "weights.weights.h5") == file_sha256(src / "weights.weights.h5")
    assert registry.register(src) == v  # again: no-op
    # same weights, other thresholds: refused rather than silently keeping either
    other = tmp_path / "other"
    shutil.copytree(src, other)
    m = ModelManifest.read(other)
    m.model_copy(update={"thresholds": Thresholds(low=0.1, high=0.2)}).write(other)
    with pytest.raises(RegistryError, match="other weights or thresholds"):
        registry.register(other)
    # weights that do not match the manifest's version
    (other / "weights.weights.h5").write_bytes(b"tampered")
    with pytest.raises(RegistryError, match="do not match"):
        registry.register(other)
    assert registry.versions() == [v]


def test_promote_rollback_and_history(registry: ModelRegistry, models: dict) -> None:  # type: ignore[type-arg]
    base, one, two = (models[k][1] for k in ("baseline", "one", "two"))
    registry.register(models["one"][0])
    p = registry.promote(one, run_id="r1", entry=entry("r1", one))
    # the baseline was copied so that it can be rolled back to
    assert sorted(registry.versions()) == sorted([base, one])
    on_disk = json.loads((registry.root / "current.json").read_text())
    assert on_disk == p and p["model_version"] == one and p["path"] == f"versions/{one}"
    assert p["previous"] == [base] and p["run_id"] == "r1" and p["promoted_at"]
    assert current_model_dir(registry.root, registry.fallback) == registry.root / "versions" / one

    registry.register(models["two"][0])
    p2 = registry.promote(two, run_id="r2", entry=entry("r2", two))
    assert p2["previous"] == [one, base]
    # promoting the current version again (a re-run) changes nothing
    assert registry.promote(two, run_id="r3") == p2

    back = registry.rollback(run_id="ops-1")
    assert back["model_version"] == one and back["previous"] == [base]
    assert registry.current_model_dir() == registry.root / "versions" / one
    back = registry.rollback()
    assert back["model_version"] == base and back["previous"] == []
    with pytest.raises(RegistryError, match="no earlier version"):
        registry.rollback()
    # a named version that is registered but not in `previous` (rolled away from)
    fwd = registry.rollback(to=two)
    assert fwd["model_version"] == two and fwd["previous"] == [base]
    with pytest.raises(RegistryError, match="already the current"):
        registry.rollback(to=two)
    with pytest.raises(RegistryError, match="not in"):
        registry.rollback(to="model-000000000000")
    with pytest.raises(RegistryError, match="not a model version"):
        registry.rollback(to="../two")

    hist = registry.history()
    assert [(h["decision"], h["candidate"]) for h in hist] == [
        ("promoted", one), ("promoted", two), ("rolled_back", one), ("rolled_back", base), ("rolled_back", two)]
    assert hist[2]["run_id"] == "ops-1" and hist[2]["current"] == two
    assert registry.decision_for("r2") == hist[1] and registry.decision_for("ops-1") is None


def test_promote_needs_a_registered_version_and_a_baseline(tmp_path: Path, models: dict) -> None:  # type: ignore[type-arg]
    r = ModelRegistry(tmp_path / "reg", tmp_path / "no_model_here")
    with pytest.raises(RegistryError, match="not registered"):
        r.promote(models["one"][1], run_id="r")
    r.register(models["one"][0])
    with pytest.raises(RegistryError, match="no manifest"):
        r.promote(models["one"][1], run_id="r")
    assert r.current() is None


def test_a_failed_write_leaves_the_old_pointer(registry: ModelRegistry, models: dict,  # type: ignore[type-arg]
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = models["one"][1], models["two"][1]
    registry.register(models["one"][0])
    registry.register(models["two"][0])
    registry.promote(one, run_id="r1")
    before = (registry.root / "current.json").read_bytes()

    def broken_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(reg_mod.os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        registry.promote(two, run_id="r2", entry=entry("r2", two))
    monkeypatch.undo()
    assert (registry.root / "current.json").read_bytes() == before
    assert registry.history() == []
    assert not [p for p in registry.root.iterdir() if p.name.endswith(".tmp")]


def test_a_failed_copy_registers_nothing(registry: ModelRegistry, models: dict,  # type: ignore[type-arg]
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def half_copy(src: Path, dst: Path, **kw: object) -> None:
        shutil.copy(Path(src) / "manifest.json", Path(dst) / "manifest.json")
        raise OSError("connection lost")

    monkeypatch.setattr(reg_mod.shutil, "copytree", half_copy)
    with pytest.raises(OSError):
        registry.register(models["one"][0])
    assert registry.versions() == [] and list((registry.root / "versions").iterdir()) == []


def test_broken_pointers_fail_instead_of_falling_back(registry: ModelRegistry, models: dict) -> None:  # type: ignore[type-arg]
    one = models["one"][1]
    registry.register(models["one"][0])
    registry.promote(one, run_id="r1")
    shutil.rmtree(registry.root / "versions" / one)
    with pytest.raises(RegistryError, match="missing"):
        current_model_dir(registry.root, registry.fallback)
    (registry.root / "current.json").write_text("{not json")
    with pytest.raises(RegistryError, match="not a valid"):
        current_model_dir(registry.root, registry.fallback)
    (registry.root / "current.json").write_text(json.dumps(
        {"model_version": one, "path": "../../elsewhere", "previous": []}))
    with pytest.raises(RegistryError, match="does not match"):
        current_model_dir(registry.root, registry.fallback)


def test_current_model_dir_needs_the_standard_library_only() -> None:
    code = ("import sys; from deid_core.model_refresh.registry import current_model_dir; "
            "print(sorted(m for m in ('pydantic', 'numpy', 'yaml', 'keras') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.stdout.strip() == "[]"


def test_the_deidentify_job_uses_the_promoted_model_and_follows_a_rollback(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The nightly job asks the registry; without a promotion it uses deep.model_dir."""
    from deid_core.config import load_config
    from jobs.deidentify import model_in_use

    cfg = load_config()
    registry = tmp_path / "registry"
    conf = tmp_path / "model_refresh.yaml"
    conf.write_text(f"registry_dir: {registry}\n")
    monkeypatch.setenv("DEID_MODEL_REFRESH_CONFIG", str(conf))
    assert model_in_use(cfg) == cfg.deep.model_dir
    for v in ("model-a", "model-b"):
        (registry / "versions" / v).mkdir(parents=True)
        (registry / "versions" / v / "manifest.json").write_text("{}")
    pointer = {"model_version": "model-b", "path": "versions/model-b", "promoted_at": "2026-11-26T00:00:00+00:00",
               "previous": ["model-a"], "run_id": "r1"}
    (registry / "current.json").write_text(json.dumps(pointer))
    assert model_in_use(cfg) == registry / "versions" / "model-b"
    pointer.update(model_version="model-a", path="versions/model-a", previous=[])
    (registry / "current.json").write_text(json.dumps(pointer))
    assert model_in_use(cfg) == registry / "versions" / "model-a"
