"""The private run folder: 0700, ours, removed on close, and swept when its run died."""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobs import workspace
from jobs.workspace import RunWorkspace, WorkspaceError, ensure_private, private_spark_conf, sweep


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_run_folder_is_private_and_removed_on_close(tmp_path: Path) -> None:
    base = tmp_path / "base"
    ws = RunWorkspace("deid-test", base)
    assert _mode(base) == 0o700 and _mode(ws.root) == 0o700 and ws.root.parent == base
    conf = private_spark_conf(ws)
    assert conf["spark.io.encryption.enabled"] == "true"
    assert Path(conf["spark.local.dir"]).parent == ws.root and _mode(Path(conf["spark.local.dir"])) == 0o700
    ws.close()
    assert not ws.root.exists() and ws.closed
    ws.close()  # idempotent


def test_a_loose_base_is_tightened_and_a_link_refused(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    ensure_private(loose)
    assert _mode(loose) == 0o700
    link = tmp_path / "link"
    link.symlink_to(loose)
    with pytest.raises(WorkspaceError, match="not a link"):
        ensure_private(link)


def test_a_base_owned_by_someone_else_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    base = tmp_path / "theirs"
    base.mkdir()
    monkeypatch.setattr(workspace.os, "getuid", lambda: os.lstat(base).st_uid + 1)
    with pytest.raises(WorkspaceError, match="another user"):
        ensure_private(base)


def test_sweep_removes_dead_runs_and_keeps_live_ones(tmp_path: Path) -> None:
    base = ensure_private(tmp_path / "base")
    live = RunWorkspace("live", base)
    # a run killed outright: its folder and lock file stay, nobody holds the lock
    killed = subprocess.run(
        [sys.executable, "-c",
         "import os, signal, sys; sys.path.insert(0, sys.argv[2]); from pathlib import Path;"
         "from jobs.workspace import RunWorkspace;"
         "ws = RunWorkspace('killed', Path(sys.argv[1])); (ws.folder('spark') / 'blockmgr-x').write_bytes(b'x');"
         "print(ws.root, flush=True); os.kill(os.getpid(), signal.SIGKILL)",
         str(base), str(Path(__file__).resolve().parents[2])],
        capture_output=True, text=True)
    dead = Path(killed.stdout.strip())
    assert killed.returncode == -9 and (dead / "spark" / "blockmgr-x").exists()
    # a folder that never got its lock file: removed only once it is old
    young, old = base / "young-x", base / "old-x"
    young.mkdir()
    old.mkdir()
    past = time.time() - workspace.UNLOCKED_GRACE_S - 10
    os.utime(old, (past, past))
    assert sorted(sweep(base)) == sorted([dead.name, "old-x"])
    assert live.root.exists() and young.exists() and not dead.exists() and not old.exists()
    # the live run's lock is really held: another open file description cannot take it
    fd = os.open(live.root / workspace.LOCK_NAME, os.O_RDWR)
    with pytest.raises(BlockingIOError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)
    live.close()


def test_a_new_run_sweeps_at_start(tmp_path: Path) -> None:
    base = ensure_private(tmp_path / "base")
    dead = base / "deid-ingest-e2b-abc"
    (dead / "spark").mkdir(parents=True)
    (dead / workspace.LOCK_NAME).write_bytes(b"")
    ws = RunWorkspace("deid-ingest-e2b", base)
    assert ws.swept == [dead.name] and not dead.exists()
    ws.close()
