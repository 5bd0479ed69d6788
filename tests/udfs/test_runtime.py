"""The worker rebuilds exactly the driver's pipeline: the configuration it names, hash-checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.site_config import REPO, write_site_config
from udfs import runtime
from udfs.runtime import PipelineSpec, VersionMismatch, pipeline_for

KEY = b"runtime-test-key-0123456789abcdef"


@pytest.fixture()
def dictionary(cfg) -> bytes:  # type: ignore[no-untyped-def]
    return Path(cfg.dictionaries.artifact).read_bytes()


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    runtime._cache.clear()
    yield
    runtime._cache.clear()


def _spec(conf: Path, config_name: str, sha: str | None, policy: str = "tags") -> PipelineSpec:
    return PipelineSpec("rules", policy, config_name=config_name, config_sha256=sha, conf_dir=str(conf),
                        model_dir=str(REPO / "models/default"))


def test_the_named_configuration_is_the_one_loaded(tmp_path: Path, dictionary: bytes) -> None:
    site = write_site_config(tmp_path / "site")
    sha = hashlib.sha256(site.read_bytes()).hexdigest()
    pipe = pipeline_for(_spec(site.parent, site.name, sha), dictionary, KEY)
    [out] = pipe.process(["Seen by Dr. Quackenbush at home."], ["C1"])
    assert "<<NAME>>" in out.text and "[NAME]" not in out.text


def test_a_configuration_with_other_bytes_is_refused(tmp_path: Path, dictionary: bytes) -> None:
    site = write_site_config(tmp_path / "site")
    sha = hashlib.sha256(site.read_bytes()).hexdigest()
    site.write_text(site.read_text(encoding="utf-8") + "\n# edited after the driver checked it\n", encoding="utf-8")
    with pytest.raises(VersionMismatch, match="configuration differs"):
        pipeline_for(_spec(site.parent, site.name, sha), dictionary, KEY)
    with pytest.raises(VersionMismatch, match="cannot read"):
        pipeline_for(_spec(site.parent, "absent.yaml", sha), dictionary, KEY)


def test_a_shipped_policy_file_resolves_inside_the_configuration_folder(tmp_path: Path, dictionary: bytes) -> None:
    site = write_site_config(tmp_path / "site")
    shipped = site.parent / runtime.SHIPPED_POLICY
    shipped.parent.mkdir()
    shipped.write_bytes((REPO / "conf/policies/tags.yaml").read_bytes())
    (site.parent / "policies" / "tags.yaml").unlink()  # only the shipped copy can be found
    pipe = pipeline_for(_spec(site.parent, site.name, None, policy=runtime.SHIPPED_POLICY), dictionary, KEY)
    assert pipe.versions()["policy"].startswith("tags-")
