"""`bench/scale.py --small` runs the scale run end to end and reports every figure (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.bench_module import bench_module

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.spark


def test_small_scale_run_prints_and_writes_the_figures(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "scale.py"), "--small", "--method", "rules",
                           "--master", "local[2]", "--work", str(tmp_path), "--projection"],
                          cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for size in ("100", "200"):
        assert f"== {size} reports: {size} in bronze" in out
    for line in ("ingest ", "deidentify ", "end_to_end ", "peak RSS ingest", "peak RSS deidentify",
                 "delta bronze_reports", "delta silver_fields", "delta quarantine", "no-op rerun", "longest text",
                 "machine CPU      deidentify: ",
                 "reports/s ratio", "driver JVM peak", "driver memory flat", "scale run",
                 "| executors (4 cores each) | cores | ingest | de-identification | end to end |", "| 128 | 512 |"):
        assert line in out, line
    assert " reports/s " in out and " fields/s" in out

    results = json.loads((tmp_path / "results.json").read_text())
    assert [r["n"] for r in results["runs"]] == [100, 200]
    for run in results["runs"]:
        assert run["reports"] == run["n"] and run["fields"] > 10 * run["n"]
        assert run["rates"]["end_to_end"]["seconds"] > 0 and run["rates"]["deidentify"]["fields_s"] > 0
        assert run["memory"]["deidentify"]["driver_jvm"] > 0 and run["memory"]["deidentify"]["worker_max"] > 0
        assert 0 < run["memory"]["deidentify"]["driver_jvm_anon"] <= run["memory"]["deidentify"]["driver_jvm"]
        assert run["tables"]["bronze_reports"]["files"] > 0 and run["tables"]["silver_fields"]["rows"] == run["fields"]
        assert {"added", "removed", "seconds"} <= set(run["rerun"])
        assert run["longest_field"]["chars"] > 45_000  # the 50,000-character narrative of --small
        assert run["table"]["long_narratives"] >= 1
    assert set(results["verdict"]) >= {"linear", "driver_flat", "no_stall", "pass", "reports_s_ratio"}
    assert [row["executors"] for row in results["projection"]["hours"]] == [8, 32, 128]
    assert not any(p.name.startswith("lake-") for p in tmp_path.iterdir())  # lakehouses removed

    again = subprocess.run([sys.executable, str(REPO / "bench" / "scale.py"), "--from-results",
                            str(tmp_path / "results.json"), "--projection"], cwd=REPO, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and "| 8 | 32 |" in again.stdout


def _scale():  # type: ignore[no-untyped-def]
    """bench/scale.py as a module."""
    return bench_module("scale")


class FakeProc:
    """What `Peaks.sample` reads of a psutil process; a command line may change between samples."""

    def __init__(self, pid: int, cmdlines: list[list[str]], rss: int, children: list[FakeProc] | None = None) -> None:
        self.pid, self._cmdlines, self._rss, self._children = pid, cmdlines, rss, children or []

    def cmdline(self) -> list[str]:
        return self._cmdlines.pop(0) if len(self._cmdlines) > 1 else self._cmdlines[0]

    def memory_info(self):  # type: ignore[no-untyped-def]
        return type("M", (), {"rss": self._rss})()

    def children(self, recursive: bool = False) -> list[FakeProc]:
        return self._children


def test_the_driver_jvm_is_found_even_when_first_seen_as_the_launch_script() -> None:
    """`spark-submit` execs the JVM in its own process: a first sample may see the shell script."""
    scale = _scale()
    driver = FakeProc(2, [["bash", "spark-class"], ["java", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"]],
                      3 << 30)
    worker = FakeProc(3, [["python", "-m", "pyspark.daemon"]], 1 << 30)
    job = FakeProc(1, [["python", "-m", "jobs.deidentify"]], 1 << 29, [driver, worker])
    peaks, seen = scale.Peaks(), {}
    peaks.sample(job, seen)
    assert peaks.driver_jvm == 0 and peaks.worker_max == 1 << 30  # the script is not the JVM
    peaks.sample(job, seen)
    assert peaks.driver_jvm == 3 << 30 and peaks.driver_python == 1 << 29


def test_on_a_standalone_cluster_the_executors_are_sampled_apart_from_the_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The executors are the worker daemon's children: found by name, counted as executors, not as the driver."""
    scale = _scale()
    driver = FakeProc(2, [["java", "org.apache.spark.deploy.SparkSubmit", "pyspark-shell"]], 1 << 30)
    executor = FakeProc(5, [["java", "org.apache.spark.executor.CoarseGrainedExecutorBackend", "--app-id", "a"]],
                        3 << 30)
    worker = FakeProc(6, [["python", "-m", "pyspark.daemon"]], 1 << 29)
    monkeypatch.setattr(scale, "_executors", lambda: [executor, worker])
    job = FakeProc(1, [["python", "-m", "jobs.deidentify"]], 1 << 28, [driver])
    local, cluster = scale.Peaks(), scale.Peaks()
    local.sample(job, {})
    cluster.sample(job, {}, cluster=True)
    assert (local.driver_jvm, local.executor_jvm, local.workers) == (1 << 30, 0, 0)
    assert (cluster.driver_jvm, cluster.executor_jvm, cluster.worker_max) == (1 << 30, 3 << 30, 1 << 29)


def test_anonymous_pages_are_read_from_proc() -> None:
    import os

    scale = _scale()
    mine = scale._rss_anon(os.getpid())
    assert 0 < mine <= __import__("psutil").Process().memory_info().rss
    assert scale._rss_anon(2**22 + 12345) == 0  # no such process


def _sized_run(n: int, work_s: float, seconds: float) -> dict:
    """A scale run's record with what `verdict` reads: n reports, main stages' core-seconds, end-to-end time."""
    stage = {"reports_s": n / seconds, "seconds": seconds}
    return {"n": n, "reports": n, "tasks": {"ingest": {"sum_s": 0.2 * work_s}, "deidentify": {"sum_s": 0.8 * work_s}},
            "rates": {"ingest": stage, "deidentify": stage, "end_to_end": stage},
            "memory": {s: {"driver_jvm": 1.0e9} for s in ("ingest", "deidentify")},
            "longest_field": {"ratio": 1.2}}


def test_three_sizes_read_linear_work_from_the_work_per_added_report() -> None:
    scale = _scale()
    # 66 core-s fixed + 15.4 ms per report: per report the large size is cheaper, per added report
    # every step costs the same
    runs = [_sized_run(n, 66 + 0.0154 * n, 60 + 0.009 * n) for n in (10_000, 30_000, 100_000)]
    two = scale.verdict([runs[0], runs[2]])
    assert two["marginal_work_per_report_s"] is None and two["work_per_report_ratio"] < 0.8
    assert two["linear_work"] is True  # cheaper per report is not faster-than-linear growth
    three = scale.verdict(runs)
    assert three["linear_work"] is True
    assert three["marginal_work_per_report_s"] == pytest.approx([0.0154, 0.0154], abs=1e-5)
    # a report that costs more as the table grows fails, with three sizes and with two
    growing = runs[:2] + [_sized_run(100_000, 66 + 0.0154 * 30_000 + 0.025 * 70_000, 1000)]
    assert scale.verdict(growing)["linear_work"] is False
    # two sizes see growth only once it outweighs the fixed cost spread thinner: why the run takes three
    assert scale.verdict([runs[0], growing[2]])["linear_work"] is True
    steep = _sized_run(100_000, 66 + 0.0154 * 30_000 + 0.035 * 70_000, 1000)
    assert scale.verdict([runs[0], steep])["linear_work"] is False


def test_linear_work_is_one_sided_a_cheaper_step_passes_a_dearer_one_fails() -> None:
    scale = _scale()

    def runs_with_last_step(ms_per_added: float) -> list[dict]:
        totals = [66 + 0.0154 * 10_000, 66 + 0.0154 * 30_000]
        totals.append(totals[1] + ms_per_added / 1000 * 70_000)
        return [_sized_run(n, w, 60 + 0.009 * n) for n, w in zip((10_000, 30_000, 100_000), totals)]

    assert scale.verdict(runs_with_last_step(15.4 * 0.80))["linear_work"] is True   # 20% cheaper
    assert scale.verdict(runs_with_last_step(15.4 * 1.14))["linear_work"] is True   # 14% dearer
    assert scale.verdict(runs_with_last_step(15.4 * 1.16))["linear_work"] is False  # 16% dearer


def test_the_printed_verdict_names_the_reading_it_applied(capsys: pytest.CaptureFixture[str]) -> None:
    scale = _scale()
    runs = [_sized_run(n, 66 + 0.0154 * n, 60 + 0.009 * n) for n in (10_000, 30_000, 100_000)]
    scale.print_verdict(scale.verdict(runs))
    three = capsys.readouterr().out
    assert "PASS: linear work: main stages' core-seconds per added report 15.40 ms from 10,000 to 30,000, " \
           "15.40 ms from 30,000 to 100,000 (ratio to the first step 1.000; bar: none more than 15% above the first" \
           in three
    assert three.count("(") == three.count(")")
    scale.print_verdict(scale.verdict([runs[0], runs[2]]))
    two = capsys.readouterr().out
    assert "PASS: linear work: main stages' core-seconds per report 22.00 ms at 10,000, 16.06 ms at 100,000 " \
           "(ratio 0.730; bar: at most 15% above the smaller size's)" in two
    assert "per added report" not in two and two.count("(") == two.count(")")


def test_driver_memory_flat_reads_the_live_heap_when_both_sizes_have_it() -> None:
    scale = _scale()
    runs = [_sized_run(n, 66 + 0.0154 * n, 60 + 0.009 * n) for n in (10_000, 30_000, 100_000)]
    runs[-1]["memory"] = {s: {"driver_jvm": 1.3e9} for s in ("ingest", "deidentify")}  # RSS ratio 1.3
    assert scale.verdict(runs)["driver_flat"] is False  # no live readings: the peak RSS is read
    for r, live in zip(runs, (100e6, 104e6, 110e6)):
        for s in ("ingest", "deidentify"):
            r["memory"][s]["driver_heap_live"] = live
    v = scale.verdict(runs)
    assert v["driver_flat"] is True and v["driver_heap_live_ratio"] == {"ingest": 1.1, "deidentify": 1.1}
    runs[-1]["memory"]["deidentify"]["driver_heap_live"] = 140e6  # the driver holds 40% more
    assert scale.verdict(runs)["driver_flat"] is False


def test_the_live_heap_is_what_a_jvm_holds_after_a_full_collection(tmp_path: Path) -> None:
    import os
    import shutil
    import time

    java = shutil.which("java") or (os.environ.get("JAVA_HOME") and str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    if not java or not Path(java).exists():
        pytest.skip("no java on this machine (Spark's tests need one)")
    scale = _scale()
    assert scale.live_heap(os.getpid()) == 0  # not a JVM: no reading, no error
    src = tmp_path / "Hold.java"
    # holds 64 MB for the whole run and drops 256 MB of garbage: a full collection leaves the 64
    src.write_text("public class Hold { public static void main(String[] a) throws Exception {"
                   " byte[] kept = new byte[64 << 20]; for (int i = 0; i < 256; i++) { byte[] g = new byte[1 << 20]; }"
                   " System.out.println(\"ready\"); System.out.flush(); Thread.sleep(120000); System.out.println(kept.length); } }")
    proc = subprocess.Popen([java, "-Xmx512m", str(src)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        live = scale.live_heap(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert 64 << 20 <= live < 128 << 20


def _task_end(stage: int, launch_ms: int, finish_ms: int, cpu_ns: int = 0, gc_ms: int = 0,
              python_run_ms: int | None = None, failed: bool = False, records: int = 0) -> str:
    """One SparkListenerTaskEnd line of an event log, with the fields `task_times` reads."""
    acc = [{"ID": 1, "Name": "number of output rows", "Update": 7}]
    if python_run_ms is not None:
        acc += [{"ID": 2, "Name": "time to run Python workers", "Update": str(python_run_ms)},
                {"ID": 3, "Name": "time to start Python workers", "Update": "100"}]
    return json.dumps({"Event": "SparkListenerTaskEnd", "Stage ID": stage,
                       "Task Info": {"Launch Time": launch_ms, "Finish Time": finish_ms, "Failed": failed,
                                     "Accumulables": acc},
                       "Task Metrics": {"Executor CPU Time": cpu_ns, "JVM GC Time": gc_ms,
                                        "Shuffle Read Metrics": {"Total Records Read": records},
                                        "Input Metrics": {"Records Read": 0}}})


def test_task_times_place_the_main_stage_and_count_every_stage(tmp_path: Path) -> None:
    scale = _scale()
    app = tmp_path / "app-1"
    app.write_text("\n".join([
        json.dumps({"Event": "SparkListenerApplicationStart"}),
        _task_end(3, 0, 2_000, cpu_ns=1_500_000_000, gc_ms=200),      # a 2 s shuffle task
        # the first wave: two workers start (slow), then two steady tasks
        _task_end(5, 0, 10_000, cpu_ns=500_000_000, python_run_ms=9_000, records=1_000),
        _task_end(5, 1_000, 7_000, cpu_ns=500_000_000, gc_ms=100, python_run_ms=5_500, records=1_000),
        _task_end(5, 7_000, 9_000, python_run_ms=1_900, records=1_000),
        _task_end(5, 10_000, 14_000, python_run_ms=3_900, records=1_000),
        _task_end(5, 0, 99_000, python_run_ms=90_000, failed=True),   # a failed attempt is not work done
        _task_end(3, 0, 1_000),
    ]) + "\n")
    t = scale.task_times(tmp_path)
    assert t["stage"] == 5 and t["tasks"] == 4 and t["sum_s"] == 22.0 and t["max_s"] == 10.0
    assert t["python_run_s"] == 20.3 and t["python_start_s"] == 0.4
    assert t["executor_cpu_s"] == 1.0 and t["gc_s"] == 0.1
    assert t["all_stages_s"] == 25.0 and t["stages"] == 2
    assert t["steady_records_s"] == 375.0  # median of 500 and 250 records/s: the first wave left out
    assert scale.task_times(tmp_path / "none") == {}


def test_machine_cpu_between_two_readings_splits_busy_idle_and_stolen() -> None:
    from collections import namedtuple

    scale = _scale()
    T = namedtuple("T", "user nice system idle iowait irq softirq steal guest guest_nice")
    before = T(100.0, 1.0, 20.0, 500.0, 3.0, 0.0, 2.0, 10.0, 0.0, 0.0)
    after = T(160.0, 1.0, 30.0, 520.0, 3.5, 0.0, 3.0, 17.5, 0.0, 0.0)
    assert scale.cpu_between(before, after) == {"busy_s": 71.0, "idle_s": 20.0, "iowait_s": 0.5, "steal_s": 7.5}
    real = scale.cpu_between(scale.machine_cpu(), scale.machine_cpu())
    assert set(real) == {"busy_s", "idle_s", "iowait_s", "steal_s"} and all(v >= 0 for v in real.values())
