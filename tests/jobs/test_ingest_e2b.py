"""The ingest job and its parse UDF agree on one row format (`deid_core.lakehouse`), without a Spark session."""

from __future__ import annotations

import inspect
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from deid_core import lakehouse
from deid_core.e2b.synthetic import synthetic_r3_batch
from jobs import ingest_e2b
from udfs import parse_e2b

NOW = datetime(2026, 11, 26, tzinfo=timezone.utc)


def test_the_schema_the_parse_udf_emits_is_the_one_the_ingest_job_declares() -> None:
    # one object, one string: there is no second copy to drift
    assert ingest_e2b.PARSED is parse_e2b.PARSED is lakehouse.PARSED
    assert ingest_e2b.PARSED.schema is parse_e2b.PARSED.schema
    assert ingest_e2b.BRONZE is lakehouse.BRONZE and ingest_e2b.LANDED_FILES is lakehouse.LANDED_FILES
    # and the job hands exactly that schema to mapInPandas, with the landing frame the UDF reads
    source = inspect.getsource(ingest_e2b)
    assert "mapInPandas(parse_batches, PARSED.schema)" in source
    assert "createDataFrame(rdd, LANDED_FILES.schema)" in source


def test_the_parse_udf_emits_exactly_those_columns(tmp_path: Path) -> None:
    good = tmp_path / "r3.xml"
    good.write_bytes(synthetic_r3_batch(2, 5))
    bad = tmp_path / "notes.txt"
    bad.write_bytes(b"<ichicsr/>")
    files = pd.DataFrame({"path": [parse_e2b.file_uri(good), parse_e2b.file_uri(bad)],
                          "size": [good.stat().st_size, bad.stat().st_size]})
    assert tuple(files.columns) == lakehouse.LANDED_FILES.names
    out = pd.concat(list(parse_e2b.parse_batches(iter([files]))))
    assert tuple(out.columns) == lakehouse.PARSED.names
    assert list(out["row_kind"]) == [parse_e2b.REPORT] * 2 + [parse_e2b.FILE] * 2
    # a report row fills every column itself: none is left to pandas' NaN by a missing key
    reports = list(parse_e2b.parse_file(parse_e2b.file_uri(good), good.stat().st_size, NOW))[:-1]
    assert reports and all(set(r) == set(lakehouse.PARSED.names) for r in reports)
    # and its bronze part is bronze's row
    assert set(lakehouse.BRONZE.names) <= set(reports[0])
