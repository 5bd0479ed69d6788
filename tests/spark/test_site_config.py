"""The executors run the configuration the driver resolved (issue 13.1).

A site keeps its configuration in its own folder under its own name, and
names it with `--config` or `$DEID_CONFIG`. The job must ship exactly that
file (its folder, for the relative paths) and the workers must load it,
not the `deid.yaml` that also lies there: the silver rows show which one
ran, because the site's tag format is one no default produces.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.site_config import REPO, write_site_config
from tests.spark.conftest import write_synthetic_e2b

pytestmark = pytest.mark.spark


def _tags(texts: list[str]) -> tuple[set[str], set[str]]:
    site = set(re.findall(r"<<([A-Z]+)>>", " ".join(texts)))
    default = set(re.findall(r"\[(NAME|DATE|LOCATION|PHONE|EMAIL|ID|PHI)\]", " ".join(texts)))
    return site, default


@pytest.mark.parametrize("how", ["--config", "DEID_CONFIG"])
def test_workers_run_the_site_configuration(spark, tmp_path: Path, key_file: Path, how: str,  # type: ignore[no-untyped-def]
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from jobs.deidentify import prepare, run_batch
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    site = write_site_config(tmp_path / "site")
    # a profile given as a path outside the configuration folder travels too
    elsewhere = tmp_path / "profiles" / "site_tags.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes((REPO / "conf/policies/tags.yaml").read_bytes())
    if how == "DEID_CONFIG":
        monkeypatch.setenv("DEID_CONFIG", str(site))
    write_synthetic_e2b(tmp_path / "in", 4, seed=21)
    tables = Tables(tmp_path / "lake")
    ingest(spark, str(tmp_path / "in"), tables)

    ctx = prepare(spark, config=site if how == "--config" else None, policy=str(elsewhere), method="rules",
                  key_file=key_file, model_dir=None)
    assert ctx.spec.config_name == "site.yaml" and ctx.spec.config_sha256
    rows, failed = run_batch(spark, tables, ctx)
    assert rows > 0 and failed == 0
    silver = spark.read.format("delta").load(tables.silver).collect()
    assert {r.status for r in silver} == {"ok"}
    narratives = [r.text_deid for r in silver if r.field.startswith("text:")]
    site_tags, default_tags = _tags(narratives)
    assert "NAME" in site_tags, "the site's tag format never appears: the workers ran another configuration"
    assert default_tags == set(), "default tags in silver: the workers ran conf/deid.yaml"
    assert {r.policy_version.split("-")[0] for r in silver} == {"tags"}
