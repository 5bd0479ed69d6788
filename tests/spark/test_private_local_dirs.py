"""The jobs' Spark session keeps its local files private and encrypted (a shared machine's /tmp is not)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_session_local_dirs_are_private_and_io_is_encrypted(spark) -> None:  # type: ignore[no-untyped-def]
    from jobs.spark_session import run_workspace

    ws = run_workspace()
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.io.encryption.enabled") == "true"
    local_dirs = [Path(d) for d in conf.get("spark.local.dir").split(",")]
    assert local_dirs and all(d.is_relative_to(ws.root) for d in local_dirs)
    assert _mode(ws.base) == 0o700 and _mode(ws.root) == 0o700 and ws.base.stat().st_uid == os.getuid()
    # where the JVM and PySpark actually put things: block manager, PySpark's broadcast files, JVM temp
    jvm = spark.sparkContext._jvm
    block_dirs = [Path(str(d)) for d in jvm.org.apache.spark.SparkEnv.get().blockManager().diskBlockManager().localDirs()]
    assert block_dirs and all(d.is_relative_to(ws.root) for d in block_dirs)
    assert Path(spark.sparkContext._temp_dir).is_relative_to(ws.root)
    assert Path(str(jvm.System.getProperty("java.io.tmpdir"))).is_relative_to(ws.root)
    # a broadcast (as the key is) is written through the JVM, encrypted
    assert spark.sparkContext._encryption_enabled
    secret = b"a-broadcast-secret-0123456789"
    bc = spark.sparkContext.broadcast(secret)
    assert spark.sparkContext.parallelize([0], 1).map(lambda _: bc.value).collect() == [secret]
    for p in ws.root.rglob("*"):
        if p.is_file() and p.name != ".lock":
            assert secret not in p.read_bytes(), p
