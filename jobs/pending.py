"""The batch awaiting publication: silver reports whose de-identified form gold does not hold yet.

Both the QA sample and the publish gate work on exactly this set, so the
sample a reviewer sees is drawn from what the gate would release. A report
is regrouped from its silver fields; a report version re-processed with a
new model or policy gets a new content hash and so becomes pending again.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deid_core.lakehouse import GOLD, KIND_TEXT, PENDING
from jobs.tables import Tables, exists, field_name_column


def report_rows(spark: SparkSession, tables: Tables) -> DataFrame:
    """One de-identified report per (case id, version), with its versions and a content hash (`PENDING`)."""
    silver = spark.read.format("delta").load(tables.silver)
    is_text = F.col("kind") == KIND_TEXT
    grouped = silver.groupBy(*PENDING.key).agg(
        F.sort_array(F.collect_list(F.when(is_text, F.struct(
            field_name_column("field").alias("path"), F.col("text_deid").alias("text"))))).alias("text_fields"),
        F.sort_array(F.collect_list(F.when(~is_text, F.struct(
            field_name_column("field").alias("path"), F.col("label").alias("label"),
            F.col("text_deid").alias("value"))))).alias("structured_fields"),
        F.sort_array(F.collect_set("model_version")).alias("model_versions"),
        F.sort_array(F.collect_set("policy_version")).alias("policy_versions"),
        F.sort_array(F.collect_set("dictionary_version")).alias("dictionary_versions"),
        F.sum(F.when(F.col("status") == "failed", 1).otherwise(0)).cast("int").alias("failed_fields"),
    )
    grouped = grouped.withColumn("content_sha256", F.sha2(F.to_json(F.struct(
        "text_fields", "structured_fields", "model_versions", "policy_versions", "dictionary_versions")), 256))
    bronze = spark.read.format("delta").load(tables.bronze)
    meta_cols = ["format", "sender"] + (["country"] if "country" in bronze.columns else [])
    meta = bronze.select(*PENDING.key, *meta_cols)
    if "country" not in meta_cols:
        meta = meta.withColumn("country", F.lit(None).cast("string"))
    return grouped.join(meta, list(PENDING.key), "left").select(*PENDING.names)


def pending_reports(spark: SparkSession, tables: Tables) -> DataFrame:
    """Reports of `report_rows` that gold lacks in this exact form (`PENDING`)."""
    rows = report_rows(spark, tables)
    if not exists(spark, tables.published):
        return rows
    gold = spark.read.format("delta").load(tables.published).select(*GOLD.key, "content_sha256")
    # the join puts its columns first: back in the layout's order
    return rows.join(gold, [*GOLD.key, "content_sha256"], "left_anti").select(*PENDING.names)


def population_digest(df: DataFrame) -> str:
    """An order-independent fingerprint of a batch (count + sum of row hashes), computed in Spark."""
    row = df.select(
        F.count(F.lit(1)).alias("n"),
        F.sum(F.xxhash64("case_id", "version", "content_sha256").cast("decimal(38,0)")).alias("h"),
    ).first()
    return f"{row['n']}-{row['h'] or 0}"
