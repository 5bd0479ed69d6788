"""The packed environment for a cluster (`jobs.dist`): its spark-submit lines, cache key and contents.

The real archive is packed by the standalone cluster test; here a tiny venv
(made with this interpreter, no pip) and a tiny project stand in, so
packing takes a fraction of a second.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from jobs import dist
from jobs.dist import ENV_ALIAS, EXECUTOR_PYTHON, DistError, PackOptions

SITE = dist.site_packages()


def _command(lines: str, name: str) -> str:
    """The spark-submit command printed under the `# name:` heading."""
    block = lines.split(f"# {name}:", 1)[1]
    return block.split("spark-submit", 1)[1].split("\n\n", 1)[0]


def test_submit_options_ship_the_archive_and_run_its_python(tmp_path: Path) -> None:
    archive = tmp_path / "pv-deid-env.tar.gz"
    jars = [tmp_path / "delta-spark_2.13-4.0.0.jar", tmp_path / "delta-storage-4.0.0.jar"]
    opts = dist.submit_options(archive, jars, driver_python="/opt/venv/bin/python")
    pairs = dict(zip(opts[::2], opts[1::2], strict=True))
    assert pairs["--jars"] == ",".join(str(j) for j in jars)
    assert pairs["--archives"] == f"{archive}#{ENV_ALIAS}"
    confs = [v for k, v in zip(opts[::2], opts[1::2], strict=True) if k == "--conf"]
    assert f"spark.pyspark.python={EXECUTOR_PYTHON}" in confs and EXECUTOR_PYTHON == "./environment/bin/python"
    assert "spark.pyspark.driver.python=/opt/venv/bin/python" in confs
    assert "spark.io.encryption.enabled=true" in confs


def test_submit_lines_for_standalone_yarn_and_kubernetes(tmp_path: Path) -> None:
    archive = tmp_path / "pv-deid-env.tar.gz"
    jars = [tmp_path / "delta-spark_2.13-4.0.0.jar", tmp_path / "delta-storage-4.0.0.jar"]
    text = dist.submit_lines(archive, jars, python="/usr/bin/python3.11", driver_python="/opt/venv/bin/python")
    masters = {"standalone": "--master spark://", "YARN": "--master yarn", "Kubernetes": "--master k8s://https://"}
    for name, master in masters.items():
        cmd = _command(text, name)
        assert master in cmd
        assert "--deploy-mode client" in cmd
        assert f"--archives '{archive}#environment'" in cmd
        assert "--conf spark.pyspark.python=./environment/bin/python" in cmd
        assert "--conf spark.pyspark.driver.python=/opt/venv/bin/python" in cmd
        assert "--conf spark.io.encryption.enabled=true" in cmd
        assert f"--jars {jars[0]},{jars[1]}" in cmd
        assert cmd.rstrip().endswith("--tables TABLES_DIR --key-file KEY_FILE")
        assert "jobs/deidentify.py" in cmd
    assert "spark.kubernetes.container.image=" in _command(text, "Kubernetes")
    assert "spark.yarn.dist.archives" in text and "spark.kubernetes.file.upload.path" in text
    # the interpreter is not in the archive: the nodes need it where the link points
    assert "/usr/bin/python3.11" in text and "not Python" in text


def test_submit_lines_are_shell_commands(tmp_path: Path) -> None:
    """What `make dist` prints parses as one spark-submit command per cluster manager."""
    import shlex

    text = dist.submit_lines(tmp_path / "env dir" / "pv-deid-env.tar.gz", [tmp_path / "a.jar"], python="/p")
    commands = [c for c in shlex.split(text.replace("\\\n", " "), comments=True) if c == "spark-submit"]
    assert len(commands) == 3
    assert f"{tmp_path / 'env dir' / 'pv-deid-env.tar.gz'}#environment" in shlex.split(
        _command(text, "standalone").replace("\\\n", " "))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A stand-in checkout: the files the cache key reads and one module per package."""
    repo = tmp_path / "repo"
    for pkg in dist.PROJECT_PACKAGES:
        (repo / pkg).mkdir(parents=True)
        (repo / pkg / "__init__.py").write_text(f'"""{pkg}"""\n')
    (repo / "deid_core" / "data.txt").write_text("package data travels too\n")
    (repo / "requirements.lock").write_text("venv-pack==0.2.0\n")
    (repo / "pyproject.toml").write_text("[project]\nname = 'pv-deid'\n")
    return repo


@pytest.fixture()
def venv(tmp_path: Path, project: Path) -> Path:
    """A venv of this interpreter with an editable install of `project`, as setuptools writes one."""
    prefix = tmp_path / "venv"
    base = sys._base_executable  # type: ignore[attr-defined]
    subprocess.run([base, "-m", "venv", "--without-pip", str(prefix)], check=True)
    site = prefix / SITE
    assert site.is_dir()
    (site / "__editable__.pv_deid-0.1.0.pth").write_text(
        "import __editable___pv_deid_0_1_0_finder; __editable___pv_deid_0_1_0_finder.install()")
    (site / "__editable___pv_deid_0_1_0_finder.py").write_text(
        f"MAPPING = {{'deid_core': '{project}/deid_core', 'jobs': '{project}/jobs', 'udfs': '{project}/udfs'}}\n")
    info = site / "pv_deid-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pv-deid\nVersion: 0.1.0\n")
    (info / "direct_url.json").write_text(f'{{"url": "file://{project}", "dir_info": {{"editable": true}}}}')
    for name in ("tensorflow", "jaxlib"):
        (site / name).mkdir()
        (site / name / "__init__.py").write_text("")
    return prefix


def test_cache_key_follows_code_lock_and_options(project: Path, venv: Path) -> None:
    opts = PackOptions()
    key = dist.cache_key(opts, project, venv)
    assert dist.cache_key(opts, project, venv) == key
    # bytecode caches are not inputs
    (project / "udfs" / "__pycache__").mkdir()
    (project / "udfs" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert dist.cache_key(opts, project, venv) == key
    (project / "udfs" / "__init__.py").write_text('"""udfs, changed"""\n')
    changed = dist.cache_key(opts, project, venv)
    assert changed != key
    (project / "requirements.lock").write_text("venv-pack==0.2.0\nnumpy==1.26.4\n")
    assert dist.cache_key(opts, project, venv) != changed
    assert len({dist.cache_key(o, project, venv) for o in (
        PackOptions(), PackOptions(full=True), PackOptions(compress_level=4), PackOptions(format="tar"))}) == 4


def test_packed_env_holds_the_code_not_the_editable_hook(project: Path, venv: Path) -> None:
    targets = {f.target for f in dist.packed_env(PackOptions(), project, venv).files}  # type: ignore[attr-defined]
    assert f"{SITE}/deid_core/__init__.py" in targets and f"{SITE}/deid_core/data.txt" in targets
    assert f"{SITE}/udfs/__init__.py" in targets and f"{SITE}/jobs/__init__.py" in targets
    assert not [t for t in targets if "__editable__" in t or t.endswith("direct_url.json")]
    assert f"{SITE}/pv_deid-0.1.0.dist-info/METADATA" in targets
    # the runtime set leaves TensorFlow out, keeps JAX; --full keeps both
    assert f"{SITE}/jaxlib/__init__.py" in targets and f"{SITE}/tensorflow/__init__.py" not in targets
    full_env = dist.packed_env(PackOptions(full=True), project, venv)
    full = {f.target for f in full_env.files}  # type: ignore[attr-defined]
    assert f"{SITE}/tensorflow/__init__.py" in full


def test_an_import_hook_into_the_checkout_is_refused(project: Path, venv: Path) -> None:
    """venv-pack spots a plain path in a .pth, not an import hook that maps packages to the checkout."""
    (venv / SITE / "other.pth").write_text("import other_finder; other_finder.install()\n")
    (venv / SITE / "other_finder.py").write_text(f"MAPPING = {{'udfs': '{project}/udfs'}}\n")
    with pytest.raises(DistError, match="other_finder.py"):
        dist.packed_env(PackOptions(), project, venv)


def test_a_path_into_the_checkout_is_refused(project: Path, venv: Path) -> None:
    (venv / SITE / "legacy-develop.pth").write_text(f"{project}\n")
    with pytest.raises(DistError, match="editable"):
        dist.packed_env(PackOptions(), project, venv)


def test_build_packs_once_and_again_when_the_code_changes(tmp_path: Path, project: Path, venv: Path) -> None:
    out = tmp_path / "dist"
    first = dist.build(PackOptions(), dist_dir=out, repo=project, prefix=venv)
    assert first.rebuilt and first.archive == out / "pv-deid-env.tar.gz"
    with tarfile.open(first.archive) as tar:
        names = set(tar.getnames())
        python = tar.getmember("bin/python")
    assert f"{SITE}/udfs/__init__.py" in names and "pyvenv.cfg" in names
    assert not [n for n in names if "__editable__" in n]
    assert python.issym()  # the interpreter is linked, not packed
    again = dist.build(PackOptions(), dist_dir=out, repo=project, prefix=venv)
    assert not again.rebuilt and again.key == first.key
    (project / "jobs" / "new_job.py").write_text("")
    third = dist.build(PackOptions(), dist_dir=out, repo=project, prefix=venv)
    assert third.rebuilt and third.key != first.key
    with tarfile.open(third.archive) as tar:
        assert f"{SITE}/jobs/new_job.py" in tar.getnames()
    assert not list(out.glob(".*partial"))


def test_unknown_format_exits_2() -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(dist.app, ["--format", "rar"])
    assert result.exit_code == 2


def test_this_venv_packs_without_the_checkout() -> None:
    """On the project's own venv: every runtime exclusion still names installed files, and the
    packed set has the editable install's hook replaced by the project's code."""
    from venv_pack import Env

    installed = Env(str(dist.venv_prefix()))
    for ex in dist.RUNTIME_EXCLUSIONS:
        assert len(installed.exclude(f"{SITE}/{ex.pattern}")) < len(installed), f"{ex.pattern} matches nothing"
    targets = {f.target for f in dist.packed_env(PackOptions()).files}  # type: ignore[attr-defined]
    assert not [t for t in targets if "__editable__" in t]
    assert {f"{SITE}/{rel}" for _, rel in dist.project_files()} <= targets
    assert f"{SITE}/udfs/deidentify_fields.py" in targets and f"{SITE}/jax/__init__.py" in targets


def test_make_dist_prints_the_archive_and_the_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command `make dist` runs: the archive, then the three spark-submit lines; a warning when
    the configuration forces the backend the runtime archive leaves out."""
    from typer.testing import CliRunner

    import jobs.spark_session

    archive = tmp_path / "pv-deid-env.tar.gz"
    monkeypatch.setattr(dist, "build", lambda options, force=False: dist.Built(archive, "k", False, 0.0, 2_000_000))
    monkeypatch.setattr(jobs.spark_session, "delta_jars", lambda: [tmp_path / "delta-spark_2.13-4.0.0.jar"])
    monkeypatch.setattr(dist, "_configured_backend", lambda: "tensorflow")
    result = CliRunner().invoke(dist.app, [])
    assert result.exit_code == 0, result.output
    assert f"{archive} (2 MB, up to date; runtime environment" in result.output
    assert result.output.count("spark-submit \\") == 3
    assert "backend: tensorflow" in result.output and "--full" in result.output
