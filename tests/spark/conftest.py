"""Spark job fixtures: one local session per module, sample E2B folders, a key."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

TEST_KEY = "spark-test-key-0123456789abcdef"


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    from jobs.spark_session import delta_session

    session = delta_session("deid-test-jobs", master="local[2]")
    yield session
    session.stop()


def write_synthetic_e2b(folder: Path, n_reports: int, seed: int, files: int = 2) -> None:
    """Half R3, half R2 files of the project's own synthetic reports."""
    from deid_core.e2b.synthetic import synthetic_r2_batch, synthetic_r3_batch

    folder.mkdir(parents=True, exist_ok=True)
    per = max(1, n_reports // files)
    for i in range(files):
        make = synthetic_r3_batch if i % 2 == 0 else synthetic_r2_batch
        (folder / f"synthetic_{i:03d}.xml").write_bytes(make(per, seed + i))


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("key") / "key"
    p.write_text(TEST_KEY)
    return p


@pytest.fixture()
def e2b_inputs(tmp_path: Path, shared_data: Path) -> Path:
    """Shared E2B examples + synthetic files + one malformed file."""
    root = tmp_path / "in"
    shutil.copytree(shared_data / "e2b", root / "shared", ignore=shutil.ignore_patterns("LICENSE", "*.txt"))
    write_synthetic_e2b(root / "synthetic", 12, seed=3)
    (root / "broken.xml").write_bytes(b"<ichicsr><safetyreport><safetyreportid>1</safety")
    return root


def column_types(df) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]


def assert_layout(spark, df, layout) -> None:  # type: ignore[no-untyped-def]
    """`df` (a table as read back) has exactly the columns, order and types `layout` declares."""
    assert column_types(df) == column_types(spark.createDataFrame([], layout.schema))
