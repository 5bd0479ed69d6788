"""E2B documents held in a table ingest exactly like the same documents landed as files.

`jobs.ingest_e2b.ingest_table`: a Parquet table (binary XML, an id column)
and a Delta table (string XML, no id, a received-date column) with good R2
and R3 documents and every kind of bad row; bronze and quarantine must be
what the file ingest makes of the same documents, and a rerun adds nothing.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from deid_core.lakehouse import BRONZE, KIND_TEXT, QUARANTINE
from tests.spark.conftest import assert_layout

pytestmark = pytest.mark.spark

_NOT_E2B = b"<?xml version='1.0'?><invoice><total>3</total></invoice>"


def _documents(shared_data: Path) -> dict[str, bytes | None]:
    """name -> document (None: a NULL cell): the shared examples, synthetic batches and bad rows."""
    from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch

    docs: dict[str, bytes | None] = {
        f"shared/{p.relative_to(shared_data / 'e2b')}": p.read_bytes()
        for p in sorted((shared_data / "e2b").rglob("*.xml"))
    }
    r2 = synthetic_r2_batch(2, 31)
    r3 = synthetic_r3_batch(3, 32)
    docs.update({
        "synthetic/r2.xml": r2,
        "synthetic/r3.xml": r3,
        # the same two reports, one of them with other content: E_DUPLICATE and E_REDUNDANT
        "synthetic/r2-resent.xml": r2.replace(b"</narrativeincludeclinical>",
                                              b" Follow-up received.</narrativeincludeclinical>", 1),
        "bad/null.xml": None,
        "bad/empty.xml": b"",
        "bad/blank.xml": b" \n\t ",
        "bad/not-xml.xml": b"Patient Jane Roe called about the rash.",
        "bad/truncated.xml": r3[: len(r3) * 2 // 3],
        "bad/invoice.xml": _NOT_E2B,
        "bad/no-reports.xml": b"<ichicsr lang='en'></ichicsr>",
    })
    return docs


def _file_ingest(spark, docs: dict[str, bytes | None], root: Path, lake: Path):  # type: ignore[no-untyped-def]
    """What the file ingest makes of the same documents (a NULL cell is a 0-byte file there)."""
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    for name, data in docs.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data or b"")
    return ingest(spark, str(root), Tables(lake)), Tables(lake)


def _bronze(spark, tables, name_of) -> set[tuple]:  # type: ignore[no-untyped-def]
    rows = spark.read.format("delta").load(tables.bronze).collect()
    return {(r.case_id, r.version, r.format, r.received_date, r.content_sha256, r.file_sha256, name_of(r.source_file))
            for r in rows}


def _quarantine(spark, tables, name_of) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    out: dict[str, list[str]] = {}
    for r in spark.read.format("delta").load(tables.quarantine).collect():
        assert r.stage == "ingest" and r.reason and "Jane" not in r.reason
        out.setdefault(name_of(r.source_file), []).append(r.error_code)
    return {k: sorted(v) for k, v in out.items()}


def _files(spark, *paths: str) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    return {p: set(spark.read.format("delta").load(p).inputFiles()) for p in paths}


def test_a_parquet_table_ingests_like_the_files(spark, shared_data: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Binary XML, rows named by an id column: the same bronze rows and quarantine codes as the files."""
    from jobs.ingest_e2b import TableSource, ingest_table
    from jobs.tables import Tables
    from udfs.parse_e2b import local_path

    docs = _documents(shared_data)
    root = tmp_path / "landing"
    file_stats, file_tables = _file_ingest(spark, docs, root, tmp_path / "files-lake")

    table = tmp_path / "docs.parquet"
    spark.createDataFrame([(name, data, i) for i, (name, data) in enumerate(docs.items())],
                          "doc_id string, payload binary, n int").write.parquet(str(table))
    tables = Tables(tmp_path / "lake")
    stats = ingest_table(spark, TableSource(str(table), xml_column="payload", id_column="doc_id"), tables)

    prefix = f"table:{table}#"
    by_id = lambda sf: sf.removeprefix(prefix) if sf.startswith(prefix) else pytest.fail(sf)  # noqa: E731
    by_file = lambda sf: str(local_path(sf).relative_to(root))  # noqa: E731
    bronze = _bronze(spark, tables, by_id)
    quarantine = _quarantine(spark, tables, by_id)
    assert bronze == _bronze(spark, file_tables, by_file)
    expected_q = _quarantine(spark, file_tables, by_file)
    assert quarantine == expected_q  # a NULL cell is E_EMPTY, as a 0-byte file is
    assert {k: v for k, v in quarantine.items() if k.startswith("bad/")} == {
        "bad/null.xml": ["E_EMPTY"], "bad/empty.xml": ["E_EMPTY"], "bad/blank.xml": ["E_EMPTY"],
        "bad/not-xml.xml": ["E_NOT_XML"], "bad/truncated.xml": ["E_PARSE"], "bad/invoice.xml": ["E_PARSE"],
        "bad/no-reports.xml": ["E_EMPTY"]}
    assert quarantine["synthetic/r2-resent.xml"] == ["E_DUPLICATE", "E_REDUNDANT"]  # "r2.xml" sorts last: kept
    assert (stats.files, stats.reports, stats.quarantined) == (len(docs), file_stats.reports, file_stats.quarantined)
    # a document's bronze rows carry its hash, as a file's carry the file's
    assert {r.file_sha256 for r in spark.read.format("delta").load(tables.bronze).collect()} <= {
        hashlib.sha256(d).hexdigest() for d in docs.values() if d}
    for path, layout in ((tables.bronze, BRONZE), (tables.quarantine, QUARANTINE)):
        # (bronze may also have its generated partition column, which no job writes)
        assert_layout(spark, spark.read.format("delta").load(path).drop("received_month"), layout)

    # a rerun changes nothing: no data file added or removed
    before = _files(spark, tables.bronze, tables.quarantine)
    again = ingest_table(spark, TableSource(str(table), xml_column="payload", id_column="doc_id"), tables)
    assert _files(spark, tables.bronze, tables.quarantine) == before
    assert (again.files, again.reports, again.quarantined) == (stats.files, stats.reports, stats.quarantined)
    assert _bronze(spark, tables, by_id) == bronze


def test_a_delta_table_of_strings_is_named_by_hash_and_fills_in_received_dates(  # type: ignore[no-untyped-def]
        spark, shared_data: Path, tmp_path: Path) -> None:
    """String XML in a Delta table, no id column: rows named by hash (twins numbered), received dates from a column."""
    from datetime import date

    from deid_core.e2b.parse import parse_reports
    from jobs.ingest_e2b import TableSource, ingest_table
    from jobs.tables import Tables

    docs = {k: v for k, v in _documents(shared_data).items()
            if k.startswith(("bad/", "synthetic/r3", "shared/r2_caaers/attributions"))}
    rows = [(data.decode("utf-8") if data is not None else None, date(2001, 2, 3)) for data in docs.values()]
    rows.append((docs["bad/invoice.xml"].decode(), None))  # an identical twin of a bad row: its own record
    rows.append((docs["bad/empty.xml"].decode(), None))
    table = tmp_path / "docs_delta"
    spark.createDataFrame(rows, "xml string, received date").write.format("delta").save(str(table))
    tables = Tables(tmp_path / "lake")
    source = TableSource(str(table), received_column="received")
    stats = ingest_table(spark, source, tables)

    sha = lambda d: "sha256:" + hashlib.sha256(d).hexdigest()[:16]  # noqa: E731
    name_of = {sha(d) if d is not None else "null": k for k, d in docs.items()}
    name_of.update({sha(_NOT_E2B) + "~2": "bad/invoice.xml~2", sha(b"") + "~2": "bad/empty.xml~2"})
    q = _quarantine(spark, tables, lambda sf: name_of[sf.removeprefix(f"table:{table}#")])
    assert {k: v for k, v in q.items() if k.startswith("bad/")} == {
        "bad/null.xml": ["E_EMPTY"], "bad/empty.xml": ["E_EMPTY"], "bad/empty.xml~2": ["E_EMPTY"],
        "bad/blank.xml": ["E_EMPTY"], "bad/not-xml.xml": ["E_NOT_XML"], "bad/truncated.xml": ["E_PARSE"],
        "bad/invoice.xml": ["E_PARSE"], "bad/invoice.xml~2": ["E_PARSE"], "bad/no-reports.xml": ["E_EMPTY"]}
    assert stats.files == len(rows)

    # a report's own received date is kept; the caAERS R2 reports have none and take the column's
    bronze = {(r.case_id, r.version): r for r in spark.read.format("delta").load(tables.bronze).collect()}
    own = {(r.case_id, r.version): r.received_date for k, d in docs.items() if k.startswith(("shared", "synthetic"))
           for r in parse_reports(d)}
    assert set(bronze) == set(own)
    filled = {k for k, v in own.items() if v is None}
    assert filled and all(bronze[k].received_date == "20010203" for k in filled)
    assert all(bronze[k].received_date == v for k, v in own.items() if v is not None)


def test_a_table_that_cannot_work_is_refused_before_anything_is_read(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from jobs.ingest_e2b import TableSource, TableSourceError, app, ingest_table
    from jobs.tables import Tables

    table = tmp_path / "t"
    spark.createDataFrame([(1, "x")], "xml int, doc string").write.parquet(str(table))
    tables = Tables(tmp_path / "lake")
    for source, match in (
        (TableSource(str(tmp_path / "absent")), "not found"),
        (TableSource(str(table)), "XML column 'xml' is int"),
        (TableSource(str(table), xml_column="nope"), "XML column 'nope' not in the table"),
        (TableSource(str(table), xml_column="doc", id_column="nope"), "id column"),
        (TableSource(str(table), xml_column="doc", received_column="xml", format="delta"), "not a Delta table"),
        (TableSource(str(table), format="csv"), "unknown table format"),
    ):
        with pytest.raises(TableSourceError, match=match):
            ingest_table(spark, source, tables)
    assert not (tmp_path / "lake").exists()
    both = CliRunner().invoke(app, ["--input", str(tmp_path), "--table", str(table)])
    assert both.exit_code == 2 and "exactly one of --input and --table" in both.output


# --- (b) a generic narrative table: jobs.deidentify_table -------------------------------------------------

_NARRATIVE_SCHEMA = ("site string, seq int, case_no string, narrative string, onset string, region string, "
                     "comment string")
_ROWS = [
    ("S1", 1, "C1", "Patient John Smith was seen at Mercy Hospital on 03/13/2021 for a rash.", "20210313", "EU",
     "Call Dr. Alice Walker at 555-123-4567."),
    ("S1", 2, "C1", "John Smith reported the rash had resolved on 03/20/2021.", "20210320", "EU", None),
    ("S2", 1, "C2", "Mary Johnson (mary.johnson@example.com) took 40 mg daily.", None, "US",
     "She lives at 12 Elm Street, Towson."),
    (None, 3, "C3", "Robert Brown had a headache.", "20200101", "US", None),       # NULL key
    ("S3", 1, "C4", "Laura Green had nausea.", "20200202", "US", None),            # a key two rows share
    ("S3", 1, "C4", "Laura Green had nausea twice.", "20200203", "US", None),
]
_PHI = ("John", "Smith", "Alice", "Walker", "555-123-4567", "Mary", "Johnson", "mary.johnson", "Elm")
_LINEAGE = [("deid_model_version", "string"), ("deid_dictionary_version", "string"),
            ("deid_policy_version", "string"), ("deid_status", "string"), ("deid_error_code", "string"),
            ("deid_input_sha256", "string")]


def _narrative_spec(path: Path):  # type: ignore[no-untyped-def]
    from jobs.deidentify_table import NarrativeTable

    return NarrativeTable(str(path), keys=("site", "seq"), texts=("narrative", "comment"),
                          structured=(("onset", "DATE"),), case="case_no", passed=("region",))


def _target(spark, path: Path) -> dict[tuple, object]:  # type: ignore[no-untyped-def]
    return {(r.site, r.seq): r for r in spark.read.format("delta").load(str(path)).collect()}


def _fully_masked(text: str | None) -> bool:
    return text is None or not any(ch.isalnum() for ch in text.replace("[PHI]", ""))


def test_a_narrative_table_is_deidentified_merged_and_failures_fail_closed(  # type: ignore[no-untyped-def]
        spark, tmp_path: Path, key_file: Path) -> None:
    import dataclasses
    from datetime import date

    from jobs.deidentify import prepare
    from jobs.deidentify_table import deidentify_table
    from jobs.tables import Tables
    from tests.spark.conftest import column_types

    source, target = tmp_path / "notes.parquet", tmp_path / "notes_deid"
    spark.createDataFrame(_ROWS, _NARRATIVE_SCHEMA).write.parquet(str(source))
    tables = Tables(tmp_path / "lake")
    spec = _narrative_spec(source)
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file, model_dir=None)

    stats = deidentify_table(spark, spec, str(target), tables, ctx)
    assert (stats.rows, stats.bad_keys, stats.processed, stats.failed, stats.skipped) == (6, 3, 3, 0, 0)
    df = spark.read.format("delta").load(str(target))
    assert column_types(df) == column_types(spark.read.parquet(str(source))) + _LINEAGE
    out = _target(spark, target)
    assert set(out) == {("S1", 1), ("S1", 2), ("S2", 1)}
    for r in out.values():
        assert r.deid_status == "ok" and r.deid_error_code is None and r.deid_model_version == "none"
        assert r.deid_policy_version.startswith("hipaa_safe_harbor") and r.deid_dictionary_version
        assert not any(p in (r.narrative or "") + (r.comment or "") for p in _PHI)
    assert out[("S1", 2)].comment is None and out[("S2", 1)].onset is None  # NULL stays NULL
    assert out[("S2", 1)].region == "US" and out[("S1", 1)].case_no == "C1"  # passed and case columns as they were
    assert "40 mg" in out[("S2", 1)].narrative
    # one case, one date shift: the two onsets of case C1 stay 7 days apart, and both moved
    d = lambda v: date(int(v[:4]), int(v[4:6]), int(v[6:8]))  # noqa: E731
    assert out[("S1", 1)].onset != "20210313" and (d(out[("S1", 2)].onset) - d(out[("S1", 1)].onset)).days == 7
    # bad keys: quarantine only, one record per row, never text
    q = spark.read.format("delta").load(tables.quarantine).collect()
    assert sorted((r.stage, r.case_id, r.version, r.error_code) for r in q) == [
        ("deidentify_table", '["S3","1"]', "1", "E_KEY"), ("deidentify_table", '["S3","1"]', "2", "E_KEY"),
        ("deidentify_table", '[null,"3"]', "1", "E_KEY")]
    assert {r.source_file for r in q} == {str(source)}
    assert not any(w in " ".join(f"{r.reason}" for r in q) for w in ("Laura", "Robert", "Green", "Brown"))

    # a rerun changes nothing: no row processed, no file added to the target or quarantine
    before = _files(spark, str(target), tables.quarantine)
    again = deidentify_table(spark, spec, str(target), tables, ctx)
    assert (again.processed, again.skipped, again.bad_keys) == (0, 3, 3)
    assert _files(spark, str(target), tables.quarantine) == before

    # a changed source row is processed again and updated; the others are not touched
    changed = [list(r) for r in _ROWS]
    changed[2][6] = "She moved to 7 Oak Road, Dundalk."
    spark.createDataFrame([tuple(r) for r in changed], _NARRATIVE_SCHEMA).write.mode("overwrite").parquet(str(source))
    third = deidentify_table(spark, spec, str(target), tables, ctx)
    assert (third.processed, third.skipped) == (1, 2)
    now = _target(spark, target)
    assert now[("S2", 1)].comment != out[("S2", 1)].comment and "Oak" not in now[("S2", 1)].comment
    assert now[("S2", 1)].deid_input_sha256 != out[("S2", 1)].deid_input_sha256
    assert {k: v for k, v in now.items() if k != ("S2", 1)} == {k: v for k, v in out.items() if k != ("S2", 1)}

    # a row whose processing fails (the workers cannot load the pipeline) is fully masked and quarantined
    changed[1][3] = "John Smith called again on 03/27/2021."
    spark.createDataFrame([tuple(r) for r in changed], _NARRATIVE_SCHEMA).write.mode("overwrite").parquet(str(source))
    broken = dataclasses.replace(ctx, spec=dataclasses.replace(ctx.spec, conf_archive="deid_conf_never_shipped"))
    failing = deidentify_table(spark, spec, str(target), tables, broken)
    assert (failing.processed, failing.failed) == (1, 1)
    row = _target(spark, target)[("S1", 2)]
    assert (row.deid_status, row.deid_error_code) == ("failed", "E_LOAD")
    assert _fully_masked(row.narrative) and row.onset == "[DATE]" and row.comment is None
    # the UDFs' own fail-closed form, token for token
    from udfs.deidentify_fields import fully_masked

    assert row.narrative == fully_masked(KIND_TEXT, None, changed[1][3])[0]
    assert row.region == "EU" and row.case_no == "C1"
    failed_q = spark.read.format("delta").load(tables.quarantine).filter("error_code = 'E_LOAD'").collect()
    assert sorted((r.case_id, r.field) for r in failed_q) == [('["S1","2"]', "structured:onset"),
                                                              ('["S1","2"]', "text:narrative")]
    assert {k: v for k, v in _target(spark, target).items() if k != ("S1", 2)} == {
        k: v for k, v in now.items() if k != ("S1", 2)}

    # every source row ends in the target or in quarantine only, never both, never neither
    written = set(_target(spark, target))
    keyed_out = {r.case_id for r in spark.read.format("delta").load(tables.quarantine).collect()
                 if r.error_code == "E_KEY"}
    assert len(written) + 3 == len(_ROWS) and keyed_out == {'["S3","1"]', '[null,"3"]'}


def test_the_cli_with_the_default_hybrid_method(spark, tmp_path: Path, key_file: Path) -> None:  # type: ignore[no-untyped-def]
    """The command line end to end, with the network: a Delta source, no case column (each row its own case)."""
    from typer.testing import CliRunner

    from jobs.deidentify_table import app

    source, target = tmp_path / "notes_delta", tmp_path / "out"
    spark.createDataFrame(_ROWS[:3], _NARRATIVE_SCHEMA).write.format("delta").save(str(source))
    base = ["--source", str(source), "--target", str(target), "--key", "site", "--key", "seq",
            "--text", "narrative", "--text", "comment", "--structured", "onset=DATE", "--pass", "region",
            "--tables", str(tmp_path / "lake"), "--key-file", str(key_file), "--policy", "hipaa_safe_harbor",
            "--master", "local[2]"]
    refused = CliRunner().invoke(app, base[:-2] + ["--structured", "case_no=PATIENT"])
    assert refused.exit_code == 2 and "unknown category 'PATIENT'" in refused.output
    undeclared = CliRunner().invoke(app, base)  # case_no has no role
    assert undeclared.exit_code == 2 and "undeclared columns ['case_no']" in undeclared.output
    assert not target.exists()

    result = CliRunner().invoke(app, base + ["--pass", "case_no"])
    assert result.exit_code == 0, result.output
    assert "3 source rows" in result.output and not any(p in result.output for p in _PHI)
    out = _target(spark, target)
    assert set(out) == {("S1", 1), ("S1", 2), ("S2", 1)}
    for r in out.values():
        assert r.deid_status == "ok" and r.deid_model_version.startswith("model-")
        assert not any(p in (r.narrative or "") + (r.comment or "") for p in _PHI)
