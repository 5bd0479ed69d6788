"""A Spark standalone cluster on this machine: one master and N workers.

Started from the pyspark distribution's own `spark-class` (the pip package
ships no sbin scripts), for the cluster test and for trying spark-submit
against a real cluster without installing Spark separately:

    python -m jobs.standalone_cluster --workers 2   # prints the master URL; Ctrl-C or SIGTERM stops it
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import typer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@dataclass
class Cluster:
    master_url: str
    ui_url: str
    processes: list[subprocess.Popen[bytes]]

    def alive_workers(self) -> int:
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as resp:  # noqa: S310 - localhost
            state = json.load(resp)
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


@contextlib.contextmanager
def standalone_cluster(workers: int = 2, cores_per_worker: int = 1, memory_per_worker: str = "2g",
                       log_dir: Path | None = None, start_timeout: float = 90.0) -> Iterator[Cluster]:
    home = spark_home()
    spark_class = str(home / "bin" / "spark-class")
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
           "SPARK_NO_DAEMONIZE": "1"}
    port, ui = _free_port(), _free_port()
    master_url, ui_url = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}"
    logs = log_dir or Path(os.environ.get("TMPDIR", "/tmp"))
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, args: list[str]) -> None:
        out = open(logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        procs.append(subprocess.Popen([spark_class, *args], env=env, stdout=out, stderr=subprocess.STDOUT))

    try:
        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                         "--webui-port", str(ui)])
        for i in range(workers):
            start(f"worker{i}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                 "--cores", str(cores_per_worker), "--memory", memory_per_worker,
                                 "--webui-port", str(_free_port()), "--work-dir", str(logs / f"work{i}"),
                                 master_url])
        cluster = Cluster(master_url, ui_url, procs)
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                if cluster.alive_workers() >= workers:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"standalone cluster did not come up; see logs in {logs}")
            time.sleep(1)
        yield cluster
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _stop_on(signum: int, _frame: object) -> None:
    """SIGTERM/SIGHUP (`kill`, a closed terminal, a scheduler ending the task) end the wait as Ctrl-C does,
    so the master's and workers' JVMs are stopped with this process instead of being left running."""
    raise KeyboardInterrupt


def main(workers: int = typer.Option(2, "--workers"), cores: int = typer.Option(1, "--cores-per-worker")) -> None:
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on)
    with standalone_cluster(workers, cores) as c:
        typer.echo(f"master {c.master_url} (UI {c.ui_url}); Ctrl-C or SIGTERM stops the cluster")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    typer.run(main)
