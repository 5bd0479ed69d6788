"""A model registry on a filesystem: promoted versions, the current pointer, every decision.

Layout under the registry folder:

* `versions/<model_version>/` - a full copy of each model folder that was
  ever current (manifest, vocabulary, weights, PR plot). Versions are
  content-derived, so a copy is never overwritten by different weights.
* `current.json` - `{model_version, path, promoted_at, previous, run_id}`;
  `path` is relative to the registry, `previous` lists the versions that
  were current before, newest first (what `rollback` returns to).
* `history.jsonl` - one JSON object per decision (promoted, rejected,
  rolled_back), appended and never rewritten in place.

Until a first promotion there is no `current.json` and the configured model
(`deep.model_dir`) is in use; the first promotion copies that baseline into
`versions/` too, so a rollback can always return to it.

Every write goes to a temporary file and is renamed into place, so a reader
(the nightly de-identification job) sees the old or the new pointer, never
half of one. Mutations hold an exclusive lock on `<registry>/.lock`.

The module imports the standard library only (the manifest model is
imported where a model is registered): `current_model_dir` runs at the start
of every nightly job and must stay cheap.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

CURRENT_FILE = "current.json"
HISTORY_FILE = "history.jsonl"
VERSIONS_DIR = "versions"
LOCK_FILE = ".lock"
MANIFEST_FILE = "manifest.json"  # as deid_core.deep.manifest.MANIFEST_FILE (not imported: see above)

#: version names become folder names: no separators, no leading dot
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class RegistryError(RuntimeError):
    """The registry cannot do what was asked; the message says why (never document text)."""


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def _check_version(version: str) -> str:
    if not _VERSION.match(version) or ".." in version:
        raise RegistryError(f"not a model version name: {version!r}")
    return version


def read_current(registry_dir: Path) -> dict[str, Any] | None:
    """The current pointer, or None when nothing was promoted yet."""
    path = Path(registry_dir) / CURRENT_FILE
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        pointer = json.loads(raw)
        version = _check_version(str(pointer["model_version"]))
        rel = str(pointer["path"])
        list(pointer["previous"])
    except (json.JSONDecodeError, KeyError, TypeError, RegistryError) as exc:
        raise RegistryError(f"{path} is not a valid current-model pointer ({type(exc).__name__})") from None
    if rel != f"{VERSIONS_DIR}/{version}":
        raise RegistryError(f"{path}: path {rel!r} does not match version {version}")
    return pointer


def current_model_dir(registry_dir: Path, fallback: Path) -> Path:
    """The promoted current model, or `fallback` (deep.model_dir) when nothing was promoted yet.

    A pointer to a missing model raises instead of falling back: silently
    running an older model than the one promoted would be a wrong answer.
    """
    registry_dir = Path(registry_dir)
    pointer = read_current(registry_dir)
    if pointer is None:
        return Path(fallback)
    model_dir = registry_dir / pointer["path"]
    if not (model_dir / MANIFEST_FILE).is_file():
        raise RegistryError(f"the current model {pointer['model_version']} is missing from {registry_dir}")
    return model_dir


def _write_atomic(path: Path, text: str) -> None:
    # imported here: reading the pointer (`current_model_dir`) stays standard-library only
    from deid_core.corpus.atomic import atomic_text_writer

    with atomic_text_writer(path) as fh:
        fh.write(text)


def _tree_hashes(root: Path) -> dict[str, str]:
    from deid_core.deep.manifest import file_sha256  # write path only: reading the pointer stays stdlib-only

    return {str(p.relative_to(root)): file_sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}


class ModelRegistry:
    """The registry at `root`; `fallback` is the model in use before any promotion."""

    def __init__(self, root: Path, fallback: Path) -> None:
        self.root = Path(root)
        self.fallback = Path(fallback)

    # ---- reading -------------------------------------------------------------

    def current(self) -> dict[str, Any] | None:
        return read_current(self.root)

    def current_model_dir(self) -> Path:
        return current_model_dir(self.root, self.fallback)

    def version_dir(self, version: str) -> Path:
        return self.root / VERSIONS_DIR / _check_version(version)

    def versions(self) -> list[str]:
        folder = self.root / VERSIONS_DIR
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if (p / MANIFEST_FILE).is_file() and _VERSION.match(p.name))

    def history(self) -> list[dict[str, Any]]:
        path = self.root / HISTORY_FILE
        if not path.exists():
            return []
        out = []
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    raise RegistryError(f"{path}: line {line_no} is not JSON") from None
        return out

    def decision_for(self, run_id: str) -> dict[str, Any] | None:
        """The promotion decision already recorded for a run (rollbacks are not decisions of a run)."""
        for entry in reversed(self.history()):
            if entry.get("run_id") == run_id and entry.get("decision") in ("promoted", "rejected"):
                return entry
        return None

    # ---- writing -------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / LOCK_FILE).open("a") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def register(self, model_dir: Path) -> str:
        """Copy a model folder into `versions/<model_version>/` (verified); returns the version.

        Registering a version that is already there is a no-op when the
        copy holds the same weights and thresholds, and an error otherwise.
        """
        from deid_core.deep.manifest import VOCABULARY_FILE, WEIGHTS_FILE, ModelManifest, file_sha256, model_version

        model_dir = Path(model_dir)
        manifest = ModelManifest.read(model_dir)
        version = _check_version(manifest.model_version)
        for name in (WEIGHTS_FILE, VOCABULARY_FILE):
            if not (model_dir / name).is_file():
                raise RegistryError(f"{model_dir} has no {name}")
        if model_version(manifest.vocabulary_sha256, file_sha256(model_dir / WEIGHTS_FILE)) != version:
            raise RegistryError(f"the weights in {model_dir} do not match its manifest's version {version}")
        target = self.version_dir(version)
        with self._locked():
            if target.exists():
                existing = ModelManifest.read(target)
                same = (existing.model_version == version and existing.thresholds == manifest.thresholds
                        and file_sha256(target / WEIGHTS_FILE) == file_sha256(model_dir / WEIGHTS_FILE))
                if not same:
                    raise RegistryError(f"version {version} is already registered with other weights or thresholds")
                return version
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{version}.", suffix=".tmp", dir=target.parent))
            try:
                shutil.copytree(model_dir, tmp, dirs_exist_ok=True)
                if _tree_hashes(tmp) != _tree_hashes(model_dir):
                    raise RegistryError(f"the copy of {version} differs from {model_dir}")
                os.chmod(tmp, 0o755)
                os.replace(tmp, target)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        return version

    def _append_history(self, entry: Mapping[str, Any]) -> None:
        """Append one line: the whole file is rewritten to a temp file and renamed (callers hold the lock)."""
        path = self.root / HISTORY_FILE
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        _write_atomic(path, old + json.dumps(dict(entry), sort_keys=True) + "\n")

    def record(self, entry: Mapping[str, Any]) -> None:
        """Append a decision to history.jsonl."""
        with self._locked():
            self._append_history(entry)

    def _set_current(self, version: str, previous: list[str], run_id: str) -> dict[str, Any]:
        pointer = {
            "model_version": version,
            "path": f"{VERSIONS_DIR}/{version}",
            "promoted_at": utc_now(),
            "previous": previous,
            "run_id": run_id,
        }
        _write_atomic(self.root / CURRENT_FILE, json.dumps(pointer, indent=2, sort_keys=True) + "\n")
        return pointer

    def promote(self, version: str, *, run_id: str, entry: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Make a registered version current; `entry` (the decision) is appended to the history.

        The first promotion registers the fallback model as well, so it can
        be rolled back to. Promoting the version that is already current
        changes nothing (a re-run after a crash between the two writes).
        """
        if not (self.version_dir(version) / MANIFEST_FILE).is_file():
            raise RegistryError(f"version {version} is not registered")
        baseline = None
        if self.current() is None:
            if not (self.fallback / MANIFEST_FILE).is_file():
                raise RegistryError(f"the model in use ({self.fallback}) has no manifest; "
                                    "it could not be rolled back to")
            baseline = self.register(self.fallback)
        with self._locked():
            cur = self.current()
            if cur is not None and cur["model_version"] == version:
                pointer = cur
            else:
                if cur is None:
                    previous = [baseline] if baseline and baseline != version else []
                else:
                    previous = [cur["model_version"], *(v for v in cur["previous"]
                                                        if v not in (version, cur["model_version"]))]
                pointer = self._set_current(version, previous, run_id)
            if entry is not None:
                self._append_history(entry)
        return pointer

    def rollback(self, to: str | None = None, *, run_id: str | None = None, reason: str = "") -> dict[str, Any]:
        """Make the previous version (or the named registered one) current; recorded in the history.

        Rolling back to a version in `previous` drops it and everything newer
        from `previous`, so a second rollback goes further back instead of
        forward again; any other registered version is made current as a
        promotion would.
        """
        run_id = run_id or f"rollback-{utc_now()}"
        nothing = "nothing was promoted yet: the configured model is in use, there is nothing to roll back"
        if self.current() is None:  # checked before the lock, which would create the registry folder
            raise RegistryError(nothing)
        with self._locked():
            cur = self.current()
            if cur is None:
                raise RegistryError(nothing)
            stack: list[str] = list(cur["previous"])
            target = stack[0] if to is None and stack else to
            if target is None:
                raise RegistryError(f"no earlier version to roll back to from {cur['model_version']}")
            target = _check_version(target)
            if target == cur["model_version"]:
                raise RegistryError(f"{target} is already the current model")
            if not (self.version_dir(target) / MANIFEST_FILE).is_file():
                raise RegistryError(f"version {target} is not in {self.root / VERSIONS_DIR}")
            if target in stack:
                previous = stack[stack.index(target) + 1:]
            else:
                previous = [cur["model_version"], *(v for v in stack if v != target)]
            pointer = self._set_current(target, previous, run_id)
            self._append_history({
                "run_id": run_id,
                "decision": "rolled_back",
                "candidate": target,
                "current": cur["model_version"],
                "reasons": [reason or f"rollback from {cur['model_version']} to {target}"],
                "metrics": {},
                "decided_at": pointer["promoted_at"],
            })
        return pointer
