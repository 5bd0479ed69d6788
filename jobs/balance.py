"""Spreading the de-identification work over tasks by text length, not by row count.

A task's time follows the characters it de-identifies, and report fields
range from a two-letter initial to a megabyte of pasted literature. Three
steps keep every task about as long as the others:

1. **Pieces.** A text longer than `work.piece_chars` is cut into pieces
   (`deid_core.text.pieces`), each a row of its own (`FIELD_PIECES`).
   Only those texts pass through Python for the cut; the rest get the
   piece columns of a whole text in Spark.
2. **Task count from the volume.** The number of tasks is the total
   characters over `work.partition_chars` (at least two per core), so it
   grows with the text, not with the number of fields.
3. **Placement.** A row goes to the task ``(hash(field) + piece) mod
   tasks``: short rows scatter by hash, and the pieces of one long text
   go to consecutive tasks, round-robin, so a 1 MB narrative is shared by
   every task instead of stalling one. Spark's hash partitioning takes a
   partition from the Murmur3 hash of the column; each task number is
   mapped to a key Spark hashes to exactly that number (found once per
   task count by a small query), so the placement is exact.

After the UDF, `join_pieces` puts each cut text back together: the
de-identified pieces joined in order, the spans moved by each piece's
offset, failed if any piece failed. Every row goes through that one
grouping, whole texts as groups of one piece. Splitting the UDF's output
into "whole" and "cut" branches would shuffle less, but Spark evaluates a
plan once per branch that reads it: the network ran twice over every field
(measured: the de-identification stage took 1.6x as long). One shuffle of
the output (its de-identified text, not the network's work) is the cheaper
price, and it needs no cache whose eviction would silently run the network
again.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deid_core.lakehouse import FIELD_PIECES, FIELD_ROWS, KIND_TEXT, SILVER
from deid_core.text.pieces import piece_bounds

#: a row costs this many characters' worth of work beyond its text (the per-row overhead)
ROW_COST_CHARS = 64


def cut_long_texts(fields: DataFrame, piece_chars: int) -> DataFrame:
    """`FIELD_ROWS` as `FIELD_PIECES`: texts longer than `piece_chars` become several rows."""
    is_long = (F.col("kind") == KIND_TEXT) & (F.length("text") > piece_chars)
    whole = fields.filter(~is_long | F.col("text").isNull()).select(
        *FIELD_ROWS.names, F.lit(0).alias("piece"), F.lit(1).alias("pieces"), F.lit(0).alias("offset"))
    long = fields.filter(is_long & F.col("text").isNotNull()).select(*FIELD_ROWS.names)
    cut = long.mapInPandas(_cutter(piece_chars), FIELD_PIECES.schema)
    return whole.unionByName(cut)


def _cutter(piece_chars: int):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            rows = []
            for r in batch.itertuples(index=False):
                bounds = piece_bounds(r.text, piece_chars)
                for i, (a, b) in enumerate(bounds):
                    rows.append({**r._asdict(), "text": r.text[a:b], "piece": i, "pieces": len(bounds),
                                 "offset": a})
            yield pd.DataFrame(rows, columns=list(FIELD_PIECES.names))

    return run


def task_count(spark: SparkSession, pieces: DataFrame, partition_chars: int) -> int:
    """Tasks for `pieces`: their characters (plus a per-row cost) over `partition_chars`, at least 2 per core."""
    total = pieces.select(F.sum(F.coalesce(F.length("text"), F.lit(0)) + ROW_COST_CHARS)).first()[0] or 0
    floor = max(1, spark.sparkContext.defaultParallelism * 2)
    return max(floor, math.ceil(total / partition_chars))


def _keys_for_partitions(spark: SparkSession, n: int) -> list[int]:
    """For each partition number p < n, a long whose Spark hash partitioning lands in p."""
    rows = (spark.range(0, max(64, 32 * n)).select("id", F.expr(f"pmod(hash(id), {n})").alias("p"))
            .groupBy("p").agg(F.min("id").alias("id")).collect())
    found = {int(r["p"]): int(r["id"]) for r in rows}
    missing = [p for p in range(n) if p not in found]
    if missing:  # a range of 32 n longs misses a partition with negligible probability; look further
        more = (spark.range(max(64, 32 * n), 4096 * n).select("id", F.expr(f"pmod(hash(id), {n})").alias("p"))
                .filter(F.col("p").isin(missing)).groupBy("p").agg(F.min("id").alias("id")).collect())
        found.update({int(r["p"]): int(r["id"]) for r in more})
    return [found[p] for p in range(n)]


def placed(spark: SparkSession, pieces: DataFrame, tasks: int) -> DataFrame:
    """`pieces` in `tasks` partitions, row ``(hash(case, version, field) + piece) mod tasks`` in that task."""
    keys = _keys_for_partitions(spark, tasks)
    slot = F.pmod(F.xxhash64("case_id", "version", "field") + F.col("piece"), F.lit(tasks))
    # longs, as `spark.range` made them: Murmur3 hashes an int and a long of one value differently
    lookup = F.array(*[F.lit(k).cast("bigint") for k in keys])
    return (pieces.withColumn("_task", F.element_at(lookup, (slot + 1).cast("int")))
            .repartition(tasks, "_task").drop("_task"))


def join_pieces(out: DataFrame, partitions: int) -> DataFrame:
    """`SILVER_PIECES` rows back to one `SILVER` row per field (reads `out` once: see the module's docstring).

    The grouping shuffles into `partitions` partitions by the field's key
    (the UDF's task count, itself sized by characters), so the output keeps
    task-sized partitions: grouped into `spark.sql.shuffle.partitions` (a
    handful), 100,000 reports' output came to partitions whose cached
    batches did not fit a 1 GB executor heap.
    """
    parts = out.repartition(partitions, *SILVER.key).groupBy(*SILVER.key).agg(
        F.sort_array(F.collect_list(F.struct(
            "piece", "offset", "text_deid", "spans", "status", "error_code", "processing_ms"))).alias("p"),
        F.count(F.lit(1)).alias("_n"), F.first("pieces").alias("_pieces"),
        *[F.first(c).alias(c) for c in ("kind", "label", "input_sha256", "model_version", "dictionary_version",
                                        "policy_version")],
    )
    shifted = ("flatten(transform(p, x -> transform(coalesce(x.spans, array()), s -> named_struct("
               "'start', s.start + x.offset, 'end', s.end + x.offset, 'label', s.label, "
               "'replacement', s.replacement))))")
    one = F.col("_pieces") == 1
    joined = parts.select(
        *SILVER.key, "kind", "label",
        # a text done whole comes back as it left the UDF (a NULL text stays NULL)
        F.when(one, F.col("p")[0]["text_deid"])
        .otherwise(F.expr("array_join(transform(p, x -> x.text_deid), '')")).alias("text_deid"),
        F.when(one, F.col("p")[0]["spans"]).otherwise(F.expr(shifted)).alias("spans"),
        # a lost piece (never expected: every row of a task comes back) fails the field, closed
        F.expr("CASE WHEN exists(p, x -> x.status <> 'ok') OR _n <> _pieces THEN 'failed' ELSE 'ok' END")
        .alias("status"),
        F.expr("coalesce(get(filter(transform(p, x -> x.error_code), c -> c IS NOT NULL), 0), "
               "CASE WHEN _n <> _pieces THEN 'E_CHUNK' END)").alias("error_code"),
        "input_sha256", "model_version", "dictionary_version", "policy_version",
        F.when(one, F.col("p")[0]["processing_ms"])
        .otherwise(F.expr("aggregate(p, 0D, (acc, x) -> acc + coalesce(x.processing_ms, 0D))")).alias("processing_ms"),
    )
    return joined.select(*SILVER.names)
