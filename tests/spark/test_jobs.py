"""The Spark jobs end to end: ingest E2B into bronze, de-identify into silver (Delta)."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deid_core.lakehouse import BRONZE, KIND_STRUCTURED, QUARANTINE, SILVER, field_key
from tests.spark.conftest import TEST_KEY, assert_layout, write_synthetic_e2b

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def _count_dupes(df, keys) -> int:  # type: ignore[no-untyped-def]
    return df.groupBy(*keys).count().filter("count > 1").count()


def test_ingest_and_deidentify_end_to_end(spark, e2b_inputs: Path, tmp_path: Path, key_file: Path) -> None:  # type: ignore[no-untyped-def]
    from deid_core.e2b.parse import parse_reports
    from jobs.deidentify import prepare, run_batch, summary
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    tables = Tables(tmp_path / "lake")
    from udfs.parse_e2b import _content_hash

    # what the ingest must do: per (case id, version) keep the report of the last
    # file, quarantine the others whose content differs
    claims: dict[tuple[str, str], list[tuple[str, str, object]]] = {}
    n_parsed = 0
    for f in sorted(e2b_inputs.rglob("*.xml")):
        if f.name == "broken.xml":
            continue
        for r in parse_reports(f.read_bytes()):
            claims.setdefault((r.case_id, r.version), []).append((str(f), _content_hash(r), r))
            n_parsed += 1
    expected = {k: max(v, key=lambda c: (c[0], c[1]))[2] for k, v in claims.items()}
    n_conflicts = sum(
        sum(1 for c in v if c[1] != max(v, key=lambda c: (c[0], c[1]))[1]) for v in claims.values()
    )
    stats = ingest(spark, str(e2b_inputs), tables)
    bronze = spark.read.format("delta").load(tables.bronze)
    quarantine = spark.read.format("delta").load(tables.quarantine).collect()
    # every parsed report is in bronze or (a conflicting duplicate) in quarantine; the bad file too
    duplicates = [q for q in quarantine if q.error_code == "E_DUPLICATE"]
    assert bronze.count() == stats.reports == len(expected)
    assert len(expected) + len(duplicates) == n_parsed
    # e.g. FAERS scenarios 1, 2, 3 and 7 share one case id and creation date
    assert len(duplicates) == n_conflicts > 0
    assert [(Path(q.source_file).name, q.error_code) for q in quarantine if q.error_code != "E_DUPLICATE"] == [
        ("broken.xml", "E_PARSE")]
    assert stats.quarantined == n_conflicts + 1

    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="hybrid", key_file=key_file, model_dir=None)
    rows, failed = run_batch(spark, tables, ctx)
    n_fields = sum(len(r.text_fields) + len(r.structured_fields) for r in expected.values())
    assert rows == n_fields and failed == 0
    silver = spark.read.format("delta").load(tables.silver)
    assert silver.count() == n_fields
    # every synthetic narrative's names and the structured identities are gone
    deid = {(r.case_id, r.version, r.field): r.text_deid for r in silver.collect()}
    for (case, version), rep in expected.items():
        for f in rep.structured_fields:
            if f.label in ("NAME", "PHONE", "EMAIL") and len(f.value) > 3:
                assert deid[(case, version, field_key(KIND_STRUCTURED, f.path))] != f.value
    # the tables hold exactly the rows `deid_core.lakehouse` declares
    quarantined = spark.read.format("delta").load(tables.quarantine)
    # bronze also has its generated partition column (received_month), which no job writes
    assert "received_month" in bronze.columns
    for df, layout in ((bronze.drop("received_month"), BRONZE), (silver, SILVER), (quarantined, QUARANTINE)):
        assert_layout(spark, df, layout)
    versions = silver.select("model_version", "dictionary_version", "policy_version").distinct().collect()
    assert len(versions) == 1 and versions[0].model_version.startswith("model-")

    # a second run: nothing duplicated, nothing lost, nothing rewritten: no table gets a
    # new version (the unchanged rows never reach MERGE, which would rewrite their files),
    # and the batch sends no field through the network again; nor does a forced re-run
    # that comes out the same
    paths = (tables.bronze, tables.silver, tables.quarantine)
    before = [_table_version(spark, p) for p in paths]
    ingest(spark, str(e2b_inputs), tables)
    assert run_batch(spark, tables, ctx) == (0, 0)
    assert [_table_version(spark, p) for p in paths] == before
    run_batch(spark, tables, ctx, reprocess=True)
    assert [_table_version(spark, p) for p in paths] == before
    bronze, silver = (spark.read.format("delta").load(p) for p in (tables.bronze, tables.silver))
    assert bronze.count() == len(expected) and silver.count() == n_fields
    assert _count_dupes(bronze, ["case_id", "version"]) == 0
    assert _count_dupes(silver, ["case_id", "version", "field"]) == 0
    s = summary(spark, tables)
    assert s["reports"] == len(expected) and s["quarantined"] == {"ingest": n_conflicts + 1}


def _table_version(spark, path: str) -> int:  # type: ignore[no-untyped-def]
    from delta.tables import DeltaTable

    return int(DeltaTable.forPath(spark, path).history(1).first()["version"])


def test_field_key_columns_agree_with_the_helpers(spark) -> None:  # type: ignore[no-untyped-def]
    """Spark's field keys (`jobs.tables`) are `deid_core.lakehouse.field_key`'s, and split back the same way."""
    from deid_core.lakehouse import FIELD_KINDS, split_field_key
    from jobs.tables import field_key_column, field_name_column

    paths = ["narrative", "reporter[0].family_name", "drug[0]:dose:text", "", "ü:ß "]
    df = spark.createDataFrame([(p,) for p in paths], "path string")
    for kind in FIELD_KINDS:
        keyed = df.select("path", field_key_column(kind, "path").alias("field"))
        rows = keyed.select("path", "field", field_name_column("field").alias("name")).collect()
        assert [r.path for r in rows] == paths
        for r in rows:
            assert r.field == field_key(kind, r.path) and split_field_key(r.field) == (kind, r.name)
            assert r.name == r.path


def test_a_missing_model_is_refused_on_the_driver(tmp_path: Path, key_file: Path) -> None:
    from jobs.deidentify import JobConfigError, plan_job

    empty_model = tmp_path / "no-model"
    empty_model.mkdir()
    for model in (empty_model, tmp_path / "absent"):
        with pytest.raises(JobConfigError) as err:
            plan_job(config=None, policy="hipaa_safe_harbor", method="hybrid", key_file=key_file, model_dir=model)
        assert "\n" not in str(err.value)


def _silver(spark, tables) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted(tuple(r) for r in spark.read.format("delta").load(tables.silver).collect())


def test_executor_load_failure_fails_closed_but_never_replaces_a_good_row(spark, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                         key_file: Path) -> None:
    import dataclasses

    from jobs.deidentify import prepare, run_batch
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    src = tmp_path / "in"
    write_synthetic_e2b(src, 4, seed=11)
    tables = Tables(tmp_path / "lake")
    ingest(spark, str(src), tables)
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file, model_dir=None)
    rows, failed = run_batch(spark, tables, ctx)
    assert rows > 0 and failed == 0
    good = _silver(spark, tables)

    # the workers cannot load what the driver checked (an archive that never arrived):
    # same input, same versions, so the good rows stay and the failures go to quarantine
    broken = dataclasses.replace(ctx, spec=dataclasses.replace(ctx.spec, conf_archive="deid_conf_never_shipped"))
    rows, failed = run_batch(spark, tables, broken, reprocess=True)
    assert rows == failed == len(good)
    assert _silver(spark, tables) == good
    q = spark.read.format("delta").load(tables.quarantine).filter("stage = 'deidentify'").collect()
    assert len(q) == len(good) and {r.error_code for r in q} == {"E_LOAD"}

    # a failure under other versions than the good rows' does replace them, fully masked (fail closed)
    other = dict(ctx.spec.versions)
    other["policy"] = other["policy"] + "-next"
    newer = dataclasses.replace(broken, spec=dataclasses.replace(broken.spec, versions=tuple(sorted(other.items()))))
    run_batch(spark, tables, newer, reprocess=True)
    silver = spark.read.format("delta").load(tables.silver).collect()
    assert {(r.status, r.error_code) for r in silver} == {("failed", "E_LOAD")}
    for r in silver:
        if r.kind == "text":
            assert not any(c.isalnum() for c in r.text_deid.replace("[PHI]", ""))


def _stream_cmd(tables: Path, key_file: Path) -> list[str]:
    return [sys.executable, "-m", "jobs.deidentify", "--tables", str(tables), "--mode", "stream",
            "--method", "rules", "--policy", "strict", "--key-file", str(key_file),
            "--max-files-per-trigger", "1", "--master", "local[2]"]


def _silver_rows(spark, path: Path) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = spark.read.format("delta").load(str(path)).drop("processing_ms")
    return sorted(tuple(r) for r in df.collect())


def _leftover_files(base: Path) -> list[Path]:
    return [p for p in base.rglob("*") if p.is_file() and p.name != ".lock"]


def test_stream_killed_midway_and_restarted_equals_uninterrupted(spark, tmp_path: Path, key_file: Path) -> None:  # type: ignore[no-untyped-def]
    """Also: the killed run's local files are private, hold no text or key in clear, and are swept at restart."""
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    base = tmp_path / "base"
    for i in range(2):  # two bronze commits: the stream takes them one file per micro-batch
        src = tmp_path / f"in{i}"
        write_synthetic_e2b(src, 4, seed=20 + i)
        ingest(spark, str(src), Tables(base))
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    shutil.copytree(base, whole)
    shutil.copytree(base, broken)
    local = tmp_path / "local"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "DEID_LOCAL_DIR": str(local)}

    # the uninterrupted run, in this process
    from jobs.deidentify import prepare, run_stream

    ctx = prepare(spark, config=None, policy="strict", method="rules", key_file=key_file, model_dir=None)
    run_stream(spark, Tables(whole), ctx, max_files_per_trigger=1)

    proc = subprocess.Popen(_stream_cmd(broken, key_file), cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    log = broken / "silver_fields" / "_delta_log"
    deadline = time.monotonic() + 240
    while not (log.exists() and len(list(log.glob("*.json"))) >= 2):  # created + first micro-batch merged
        assert proc.poll() is None, "stream ended before it could be killed"
        assert time.monotonic() < deadline, "stream made no progress"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _silver_rows(spark, broken / "silver_fields")
    full = _silver_rows(spark, whole / "silver_fields")
    assert 0 < len(partial) < len(full)

    # what the killed run left: in a 0700 folder of its own, and encrypted
    (dead,) = [p for p in local.iterdir() if p.is_dir()]
    assert stat.S_IMODE(local.stat().st_mode) == 0o700 and stat.S_IMODE(dead.stat().st_mode) == 0o700
    left = _leftover_files(dead)
    assert any("blockmgr-" in str(p) for p in left), "expected shuffle files of the killed run"
    bronze = spark.read.format("delta").load(str(broken / "bronze_reports")).collect()
    planted = {f.value for r in bronze for f in r.structured_fields
               if f.label in ("NAME", "EMAIL", "PHONE") and len(f.value) >= 6}
    assert len(planted) > 10
    needles = [w.encode() for w in planted] + [TEST_KEY.encode()]
    for p in left:
        data = p.read_bytes()
        assert not any(n in data for n in needles), f"clear text in {p.relative_to(dead)}"

    subprocess.run(_stream_cmd(broken, key_file), check=True, cwd=REPO, env=env, capture_output=True)
    assert _silver_rows(spark, broken / "silver_fields") == full
    # the restart swept the dead run's folder and removed its own on exit
    assert [p for p in local.iterdir()] == []
