"""``python -m jobs.generate_samples e2b``: alternating R3/R2 files, atomic, reproducible."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from deid_core.e2b import iter_reports
from jobs.generate_samples import app, plan_e2b_files

runner = CliRunner()


def _run(*args: str) -> object:
    return runner.invoke(app, ["e2b", *args])


def test_writes_alternating_files_totalling_n(tmp_path: Path) -> None:
    out = tmp_path / "e2b"
    result = _run("--n", "11", "--seed", "4", "--out-dir", str(out), "--files", "3")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["synthetic_r2_001.xml", "synthetic_r3_000.xml", "synthetic_r3_002.xml"]
    counts, formats = {}, {}
    case_ids = []
    for path in sorted(out.iterdir()):
        reports = list(iter_reports(path))
        counts[path.name] = len(reports)
        formats[path.name] = {r.format for r in reports}
        case_ids += [r.case_id for r in reports]
    assert counts == {"synthetic_r3_000.xml": 4, "synthetic_r2_001.xml": 4, "synthetic_r3_002.xml": 3}
    assert formats["synthetic_r3_000.xml"] == {"R3"} and formats["synthetic_r2_001.xml"] == {"R2"}
    assert len(case_ids) == 11 and len(set(case_ids)) == 11 - 3  # reports 1, 5, 9 are follow-ups
    assert "wrote 11 reports (8 cases, 3 follow-ups; R3=7, R2=4) in 3 files" in result.output
    assert not list(out.glob(".*"))  # no temporary files left behind


def test_reproducible(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert _run("--n", "4", "--seed", "9", "--out-dir", str(tmp_path / name)).exit_code == 0
    for path in (tmp_path / "a").iterdir():
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()


def test_single_file_and_zero_reports(tmp_path: Path) -> None:
    result = _run("--n", "3", "--out-dir", str(tmp_path / "one"), "--files", "1")
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["synthetic_r3_000.xml"]
    empty = _run("--n", "0", "--out-dir", str(tmp_path / "none"), "--files", "2")
    assert empty.exit_code == 0, empty.output
    assert all(list(iter_reports(p)) == [] for p in (tmp_path / "none").iterdir())


def test_more_files_than_reports_is_refused(tmp_path: Path) -> None:
    result = _run("--n", "2", "--out-dir", str(tmp_path), "--files", "3")
    assert result.exit_code == 2
    assert not list(tmp_path.iterdir())


def test_unwritable_output_exits_1(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = _run("--n", "2", "--out-dir", str(blocker / "sub"))
    assert result.exit_code == 1
    assert "cannot write" in result.output


def test_plan_splits_evenly() -> None:
    plan = plan_e2b_files(10, 4)
    assert [(p.name, p.format, p.start, p.count) for p in plan] == [
        ("synthetic_r3_000.xml", "R3", 0, 3), ("synthetic_r2_001.xml", "R2", 3, 3),
        ("synthetic_r3_002.xml", "R3", 6, 2), ("synthetic_r2_003.xml", "R2", 8, 2)]


def test_narratives_command_still_works(tmp_path: Path) -> None:
    out = tmp_path / "n.jsonl"
    result = runner.invoke(app, ["narratives", "--n", "3", "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 3
