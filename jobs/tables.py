"""The Delta tables of the job and the one way rows get into them: MERGE.

Layout under one root folder (a lakehouse schema in production):
bronze_reports (one row per report version), silver_fields (one row per
de-identified field), quarantine (what could not be ingested or processed),
published_reports (gold: what passed the QA gate) with its publish_log, and
the QA tables qa_sample_items, qa_review_items and qa_metrics.
Every write is a MERGE on the table's key (a plain append while the table
is still empty), so a re-run or a restarted stream never duplicates rows,
and a row only changes when its content does. One writer per table at a
time is assumed (the jobs are scheduled, not concurrent).

What each table holds (columns, types, MERGE keys) and how a field key is
made are `deid_core.lakehouse`'s; here are their Spark forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from deid_core.lakehouse import FIELD_KEY_SEPARATOR, QUARANTINE, field_key


@dataclass(frozen=True)
class Tables:
    root: Path

    @property
    def bronze(self) -> str:
        return str(self.root / "bronze_reports")

    @property
    def silver(self) -> str:
        return str(self.root / "silver_fields")

    @property
    def quarantine(self) -> str:
        return str(self.root / "quarantine")

    @property
    def checkpoint(self) -> str:
        return str(self.root / "_checkpoints" / "deidentify")

    @property
    def published(self) -> str:
        """Gold: one de-identified report per (case id, version), written only through the gate."""
        return str(self.root / "published_reports")

    @property
    def publish_log(self) -> str:
        return str(self.root / "publish_log")

    @property
    def qa_sample_items(self) -> str:
        """What each QA sample holds (ids, versions, strata; never text)."""
        return str(self.root / "qa_sample_items")

    @property
    def qa_review_items(self) -> str:
        """Reviewers' verdicts per item: reviewer and token counts (never text)."""
        return str(self.root / "qa_review_items")

    @property
    def qa_metrics(self) -> str:
        """Residual-PHI and over-masking rates with upper bounds, per sample and model version."""
        return str(self.root / "qa_metrics")


def field_key_column(kind: str, name: Column | str) -> Column:
    """`deid_core.lakehouse.field_key(kind, name)` of every row: `name` is the column of the field's path."""
    return F.concat(F.lit(field_key(kind, "")), name)


def field_name_column(key: Column | str = "field") -> Column:
    """The name half of `deid_core.lakehouse.split_field_key(key)` of every row (a colon in the name is kept)."""
    return F.split(key, re.escape(FIELD_KEY_SEPARATOR), 2).getItem(1)


def exists(spark: SparkSession, path: str) -> bool:
    from delta.tables import DeltaTable

    return DeltaTable.isDeltaTable(spark, path)


def latest_per_key(df: DataFrame, keys: tuple[str, ...], order: list[str]) -> DataFrame:
    """One row per key (MERGE refuses several source rows for one target row)."""
    w = Window.partitionBy(*keys).orderBy(*[F.col(c).desc() for c in order])
    return df.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").drop("_rn")


def create_if_missing(spark: SparkSession, path: str, schema: StructType, change_feed: bool = False) -> None:
    """An empty table with `schema`; `change_feed` lets a stream see updated rows too."""
    from delta.tables import DeltaTable

    builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(schema)
    if change_feed:
        builder = builder.property("delta.enableChangeDataFeed", "true")
    builder.execute()


def _is_empty(spark: SparkSession, path: str) -> bool:
    from delta.tables import DeltaTable

    return int(DeltaTable.forPath(spark, path).detail().select("numFiles").first()[0]) == 0


def merge(spark: SparkSession, df: DataFrame, path: str, keys: tuple[str, ...],
          changed: list[str] | None = None, change_feed: bool = False, keep_target_when: str | None = None) -> None:
    """Insert new keys; update a matched row only if one of `changed` differs (null-safe).

    Without `changed`, matched rows are left alone (first write wins).
    `keep_target_when` (SQL over `t`, the table, and `s`, the new rows)
    names matched rows that must stay as they are even when they differ.
    """
    from delta.tables import DeltaTable

    create_if_missing(spark, path, df.schema, change_feed)
    if _is_empty(spark, path):
        # nothing to match yet (the first backfill): an append is the same
        # result without MERGE's join, about 7 s less per run here
        df.write.format("delta").mode("append").option("mergeSchema", "true").save(path)
        return
    target = DeltaTable.forPath(spark, path).alias("t")
    cond = " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)
    # a column added by a later release (bronze's country) joins existing tables
    m = target.merge(df.alias("s"), cond).withSchemaEvolution()
    if changed:
        differs = " OR ".join(f"NOT (t.`{c}` <=> s.`{c}`)" for c in changed)
        if keep_target_when:
            differs = f"({differs}) AND NOT ({keep_target_when})"
        m = m.whenMatchedUpdateAll(condition=differs)
    m.whenNotMatchedInsertAll().execute()


def quarantine_rows(spark: SparkSession, df: DataFrame, tables: Tables) -> None:
    """MERGE rows of `deid_core.lakehouse.QUARANTINE`'s columns into quarantine (NULL keys become '')."""
    keyed = df.select(*QUARANTINE.names)
    for k in QUARANTINE.key:
        keyed = keyed.withColumn(k, F.coalesce(F.col(k), F.lit("")))
    keyed = latest_per_key(keyed, QUARANTINE.key, ["recorded_at"])
    merge(spark, keyed, tables.quarantine, QUARANTINE.key, changed=["error_code", "reason"])
