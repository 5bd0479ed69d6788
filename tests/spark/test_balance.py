"""Work spread by text length: long texts cut and joined back unchanged in meaning, tasks loaded evenly."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from deid_core.lakehouse import FIELD_ROWS, KIND_STRUCTURED, KIND_TEXT, SILVER, field_key

pytestmark = pytest.mark.spark

_SENTENCES = [
    "On 12/03/2019 the patient Jane Roe was seen at Mercy Hospital in Springfield.",
    "She received 40 mg of atorvastatin daily and her ALT rose to 120 U/L.",
    "Dr. Alan Whitfield called 617-555-0199 to report the event.",
    "The reaction resolved after the drug was stopped.",
]


def _long_text(n_chars: int) -> str:
    out, i = [], 0
    while sum(map(len, out)) < n_chars:
        out.append(_SENTENCES[i % len(_SENTENCES)] + (" " if i % 7 else "\n\n"))
        i += 1
    return "".join(out)[:n_chars]


def _rows(long_chars: int) -> list[tuple]:
    def row(case: str, field: str, kind: str, label: str | None, text: str) -> tuple:
        sha = hashlib.sha256(f"{kind}\x1f{label or ''}\x1f{text}".encode()).hexdigest()
        return (case, "1", field, kind, label, text, sha)

    rows = [row(f"C{i:03d}", field_key(KIND_TEXT, "narrative"), KIND_TEXT, None, " ".join(_SENTENCES[: 1 + i % 4]))
            for i in range(60)]
    rows += [row(f"C{i:03d}", field_key(KIND_STRUCTURED, "patient.name"), KIND_STRUCTURED, "NAME", "Jane Roe")
             for i in range(10)]
    rows.append(row("LONG", field_key(KIND_TEXT, "narrative"), KIND_TEXT, None, _long_text(long_chars)))
    return rows


def test_rows_land_in_the_task_their_slot_names(spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from jobs.balance import cut_long_texts, placed

    fields = spark.createDataFrame(_rows(60_000), FIELD_ROWS.schema)
    pieces = cut_long_texts(fields, 2_000)
    for tasks in (3, 4, 7):
        got = placed(spark, pieces, tasks).select(
            F.spark_partition_id().alias("p"),
            F.pmod(F.xxhash64("case_id", "version", "field") + F.col("piece"), F.lit(tasks)).alias("want"),
            "case_id", "piece", F.length("text").alias("n")).collect()
        assert got and all(r.p == r.want for r in got)
        # the pieces of the long text go round-robin: every task gets its share of them
        long = [r.p for r in got if r.case_id == "LONG"]
        counts = [long.count(p) for p in range(tasks)]
        assert max(counts) - min(counts) <= 1
        loads = [sum(r.n for r in got if r.p == p) for p in range(tasks)]
        assert max(loads) <= 1.5 * (sum(loads) / tasks)


def test_a_cut_text_comes_back_as_if_it_had_been_de_identified_whole(spark, key_file: Path) -> None:  # type: ignore[no-untyped-def]
    from deid_core.lakehouse_settings import WorkConfig
    from jobs.deidentify import deidentify_fields, prepare

    fields = spark.createDataFrame(_rows(30_000), FIELD_ROWS.schema)
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file,
                  model_dir=None, ship_archives=False)
    whole_ctx = dataclasses.replace(ctx, work=WorkConfig(piece_chars=1_000_000, partition_chars=1_000_000))
    cut_ctx = dataclasses.replace(ctx, work=WorkConfig(piece_chars=2_000, partition_chars=20_000))

    def run(c) -> dict:  # type: ignore[no-untyped-def]
        out = deidentify_fields(fields, c)
        assert out.columns == list(SILVER.names)
        return {(r.case_id, r.field): r for r in out.collect()}

    whole, cut = run(whole_ctx), run(cut_ctx)
    assert set(whole) == set(cut) and len(cut) == fields.count()
    original = next(r.text for r in fields.collect() if r.case_id == "LONG")
    a, b = whole[("LONG", field_key(KIND_TEXT, "narrative"))], cut[("LONG", field_key(KIND_TEXT, "narrative"))]
    assert b.status == "ok" and b.error_code is None
    assert "Jane Roe" not in b.text_deid and "617-555-0199" not in b.text_deid
    assert b.text_deid == a.text_deid
    assert [tuple(s) for s in b.spans] == [tuple(s) for s in a.spans]
    # spans are offsets into the original text, across the pieces
    assert all(original[s.start : s.end].strip() for s in b.spans)
    assert max(s.end for s in b.spans) > 20_000
    for k in whole:
        assert (whole[k].text_deid, whole[k].status) == (cut[k].text_deid, cut[k].status)


def test_the_network_runs_once_per_row(spark, key_file: Path) -> None:  # type: ignore[no-untyped-def]
    """The plan holds the de-identification UDF once (a plan that read its output in two branches,
    whole texts and cut texts, made Spark run the network twice over every field), and the output
    keeps the UDF's task-sized partitions, not `spark.sql.shuffle.partitions`."""
    from deid_core.lakehouse_settings import WorkConfig
    from jobs.balance import cut_long_texts, task_count
    from jobs.deidentify import deidentify_fields, prepare

    fields = spark.createDataFrame(_rows(60_000), FIELD_ROWS.schema)
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file,
                  model_dir=None, ship_archives=False)
    ctx = dataclasses.replace(ctx, work=WorkConfig(piece_chars=2_000, partition_chars=10_000))
    out = deidentify_fields(fields, ctx)
    for plan in (out._jdf.queryExecution().optimizedPlan(), out._jdf.queryExecution().executedPlan()):
        nodes = [line for line in plan.toString().splitlines() if "MapInPandas" in line and "text_deid" in line]
        assert len(nodes) == 1, plan.toString()
    # (after the plans: this runs the query)
    tasks = task_count(spark, cut_long_texts(fields, ctx.work.piece_chars), ctx.work.partition_chars)
    assert out.rdd.getNumPartitions() == tasks != int(spark.conf.get("spark.sql.shuffle.partitions"))
