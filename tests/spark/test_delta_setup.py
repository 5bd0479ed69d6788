"""The Spark + Delta Lake stack that `make` sets up actually works together."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def test_delta_round_trip_with_a_python_udf(tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    from jobs.spark_session import delta_session

    spark = delta_session("deid-test-delta")
    try:
        df = spark.createDataFrame([("r1", "Seen by Dr Tyro"), ("r2", "no phi")], "case_id string, text string")

        @F.udf("int")
        def n_tokens(text: str) -> int:
            from deid_core.text.tokenize import token_spans  # runs in the project interpreter

            return len(token_spans(text))

        path = str(tmp_path / "bronze")
        df.withColumn("n", n_tokens("text")).write.format("delta").save(path)
        back = {r.case_id: r.n for r in spark.read.format("delta").load(path).collect()}
        assert back == {"r1": 4, "r2": 2}
        history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()
        assert history[0].operation == "WRITE"
    finally:
        spark.stop()


def test_missing_jars_are_reported(tmp_path: Path) -> None:
    from jobs.spark_session import SparkSetupError, delta_jars

    with pytest.raises(SparkSetupError, match="make jars"):
        delta_jars(tmp_path)


def test_the_session_logs_no_table_contents(spark) -> None:  # type: ignore[no-untyped-def]
    """At INFO, Delta logs each snapshot with its files' column statistics (the min and max of text
    columns); a job's session logs WARN and above, so no table value reaches the job's log."""
    log_manager = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager
    assert str(log_manager.getRootLogger().getLevel()) == "WARN"
    for name in ("org.apache.spark.sql.delta.Snapshot", "org.apache.spark.sql.delta.DeltaLog"):
        assert not log_manager.getLogger(name).isInfoEnabled(), name


def test_the_suite_runs_its_jvms_with_its_own_spark_defaults(spark) -> None:  # type: ignore[no-untyped-def]
    """tests/fixtures/spark_conf reaches the session (a lost SPARK_CONF_DIR would only show as a slower suite)."""
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.databricks.delta.snapshotPartitions") == "2"
    jvm_args = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    assert "-XX:TieredStopAtLevel=1" in list(jvm_args)
