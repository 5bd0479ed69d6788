"""The batch awaiting publication: silver reports whose de-identified form gold does not hold yet.

Both the QA sample and the publish gate work on exactly this set, so the
sample a reviewer sees is drawn from what the gate would release. A report
is regrouped from its silver fields; a report version re-processed with a
new model or policy gets a new content hash and so becomes pending again.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.tables import Tables, exists

GOLD_KEY = ("case_id", "version")


def report_rows(spark: SparkSession, tables: Tables) -> DataFrame:
    """One de-identified report per (case id, version), with its versions and a content hash."""
    silver = spark.read.format("delta").load(tables.silver)
    is_text = F.col("kind") == "text"
    grouped = silver.groupBy(*GOLD_KEY).agg(
        F.sort_array(F.collect_list(F.when(is_text, F.struct(
            F.expr("substring(field, 6)").alias("path"), F.col("text_deid").alias("text"))))).alias("text_fields"),
        F.sort_array(F.collect_list(F.when(~is_text, F.struct(
            F.expr("substring(field, 12)").alias("path"), F.col("label").alias("label"),
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
    meta = bronze.select(*GOLD_KEY, *meta_cols)
    if "country" not in meta_cols:
        meta = meta.withColumn("country", F.lit(None).cast("string"))
    return grouped.join(meta, list(GOLD_KEY), "left")


def pending_reports(spark: SparkSession, tables: Tables) -> DataFrame:
    """Reports of `report_rows` that gold lacks in this exact form."""
    rows = report_rows(spark, tables)
    if not exists(spark, tables.published):
        return rows
    gold = spark.read.format("delta").load(tables.published).select(*GOLD_KEY, "content_sha256")
    return rows.join(gold, [*GOLD_KEY, "content_sha256"], "left_anti")


def population_digest(df: DataFrame) -> str:
    """An order-independent fingerprint of a batch (count + sum of row hashes), computed in Spark."""
    row = df.select(
        F.count(F.lit(1)).alias("n"),
        F.sum(F.xxhash64("case_id", "version", "content_sha256").cast("decimal(38,0)")).alias("h"),
    ).first()
    return f"{row['n']}-{row['h'] or 0}"
