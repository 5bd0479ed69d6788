"""A private scratch folder per job run, and the sweep of what killed runs left.

Why: Spark spills shuffle blocks, cached partitions and PySpark broadcasts
(the secret key among them) to its local folders, and by default those sit
world-readable under /tmp and survive a SIGKILL. On a shared machine that is
raw bronze narratives and the key on disk for anyone to read. So every job
run gets its own folder, inside a base folder that only the job's user can
enter (0700, owned by that user, not a symlink):

    <base>/<job>-<random>/          the run (0700), holding
        .lock                       flock()ed for the life of the run
        spark/                      spark.local.dir (blockmgr-*, spark-*, PySpark broadcasts)
        jvm-tmp/                    the driver JVM's java.io.tmpdir (native libraries it unpacks)
        tmp/                        TMPDIR of the Python workers
        ship/                       archives the driver ships to executors

The base is `$DEID_LOCAL_DIR`, else `<system temp>/pv-deid-<uid>`. A run
removes its folder when it exits (normally, by an exception, or on
SIGTERM); a run killed outright cannot, so every start sweeps: each run
folder whose lock nobody holds belongs to a dead process and is removed.
A live run holds its lock, so two jobs running at once never touch each
other's folder. Local disk I/O encryption (`jobs.spark_session`) makes the
spilled bytes unreadable even before the sweep gets to them.

Standard library only: the Airflow operator (its own virtualenv) loads this
file by path to give spark-submit the same private folder.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ENV_VAR = "DEID_LOCAL_DIR"
LOCK_NAME = ".lock"
#: a run folder without a lock file is only removed when older than this (the
#: window between creating the folder and locking it is a few microseconds)
UNLOCKED_GRACE_S = 300.0


class WorkspaceError(RuntimeError):
    """The base folder cannot be made private (e.g. another user owns it)."""


def base_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    given = env.get(ENV_VAR)
    return Path(given) if given else Path(tempfile.gettempdir()) / f"pv-deid-{os.getuid()}"


def ensure_private(folder: Path) -> Path:
    """Create `folder` (0700) or check that it is ours and private; tighten its mode if it is ours."""
    folder = Path(os.path.abspath(folder))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise WorkspaceError(f"{folder} must be a real folder, not a link or a file")
    if st.st_uid != os.getuid():
        raise WorkspaceError(f"{folder} belongs to another user: set {ENV_VAR} to a folder of your own")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    return folder


def sweep(base: Path) -> list[str]:
    """Remove the folders of runs that ended without cleaning up; returns their names.

    A folder is a dead run's when its lock can be taken (the owner's lock
    died with its process), or when it has no lock file and is older than
    the grace period. Anything else is left alone.
    """
    removed: list[str] = []
    if not base.is_dir():
        return removed
    for entry in sorted(base.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        if _is_dead(entry):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed


def _is_dead(run: Path) -> bool:
    lock = run / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        try:
            return time.time() - run.stat().st_mtime > UNLOCKED_GRACE_S
        except OSError:
            return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: a live run
    finally:
        os.close(fd)  # closing releases a lock we took
    return True


class RunWorkspace:
    """The private folder of this run; `close()` removes it (also at exit)."""

    def __init__(self, job: str, base: Path | None = None) -> None:
        self.base = ensure_private(base or base_dir())
        self.swept = sweep(self.base)
        self.root = Path(tempfile.mkdtemp(prefix=f"{_safe(job)}-", dir=self.base))
        self._lock_fd: int | None = os.open(self.root / LOCK_NAME, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        self._before_close: list[Callable[[], None]] = []
        atexit.register(self.close)

    def folder(self, name: str) -> Path:
        """A sub-folder of the run (created 0700)."""
        path = self.root / name
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    def on_close(self, fn: Callable[[], None]) -> None:
        """Run `fn` before the folder is removed (e.g. stop Spark so it writes no more)."""
        self._before_close.append(fn)

    @property
    def closed(self) -> bool:
        return self._lock_fd is None

    def close(self) -> None:
        if self._lock_fd is None:
            return
        for fn in reversed(self._before_close):
            try:
                fn()
            except Exception:  # noqa: BLE001 - cleanup goes on whatever a hook does
                pass
        shutil.rmtree(self.root, ignore_errors=True)
        os.close(self._lock_fd)
        self._lock_fd = None
        atexit.unregister(self.close)


#: Spark's local disk encryption: spilled blocks and broadcasts are unreadable without a key held in memory
IO_ENCRYPTION = "spark.io.encryption.enabled"


def private_spark_conf(ws: RunWorkspace) -> dict[str, str]:
    """What a JVM launched for this run needs to keep its local files private and encrypted.

    For the launchers: `jobs.spark_session` (a job started with python -m)
    and the Airflow operator (spark-submit).
    """
    return {
        "spark.local.dir": str(ws.folder("spark")),
        "spark.executorEnv.TMPDIR": str(ws.folder("tmp")),
        IO_ENCRYPTION: "true",
    }


def java_tmpdir_option(ws: RunWorkspace) -> str:
    """The driver JVM's temporary folder (native libraries it unpacks) inside the run's folder."""
    return f"-Djava.io.tmpdir={ws.folder('jvm-tmp')}"


def _safe(job: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in job)[:64] or "job"
