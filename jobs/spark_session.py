"""A SparkSession with Delta Lake, configured the one way every job uses.

The Delta JARs come from the Maven cache that `make jars` fills (never from
a download at run time); their folder is `$DEID_JARS_DIR` or `.cache/jars`.
Workers must run the project's interpreter, so PYSPARK_PYTHON defaults to it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parent.parent
JARS_ENV = "DEID_JARS_DIR"
_JAR_NAME = re.compile(r"^(.*)-\d+\.\d+\.\d+\.jar$")


class SparkSetupError(RuntimeError):
    """Spark cannot start as configured (e.g. the Delta JARs are missing)."""


def delta_jars(jars_dir: Path | None = None) -> list[Path]:
    folder = Path(jars_dir or os.environ.get(JARS_ENV) or REPO / ".cache" / "jars")
    jars = sorted(folder.glob("delta-*.jar"))
    names = {m.group(1) for j in jars if (m := _JAR_NAME.match(j.name))}
    if not {"delta-spark_2.13", "delta-storage"} <= names:
        raise SparkSetupError(f"Delta Lake JARs not found in {folder}; run `make jars`")
    return jars


def under_spark_submit() -> bool:
    """spark-submit starts the JVM first and hands the Python driver its gateway."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def delta_session(app_name: str, master: str = "local[*]", jars_dir: Path | None = None,
                  extra_conf: dict[str, str] | None = None) -> SparkSession:
    """Start (or reuse) a session with the Delta SQL extension and catalog.

    Under spark-submit, its --master and --jars win over `master` and the
    local JAR cache (the job then runs wherever it was submitted).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if not under_spark_submit():
        builder = builder.master(master).config("spark.jars", ",".join(str(j) for j in delta_jars(jars_dir)))
    builder = (
        builder
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.warehouse.dir", str(REPO / "build" / "spark-warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={REPO / 'build'}")
    )
    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
