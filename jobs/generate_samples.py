"""Generate the project's own sample data.

The repository may not contain real case narratives, so ``make run`` feeds
the de-identifier with documents produced here. Each kind of sample is one
sub-command of :data:`app`: ``narratives`` (JSON Lines with gold spans),
``e2b`` (E2B(R3) and E2B(R2) batch files for the ingest job) and ``table``
(a Parquet table of one-report E2B documents, for the scale run: millions of
reports without a file per report). All of them write atomically (temporary
file or folder, then rename), so an interrupted run never leaves a
half-written sample for ``make`` or a benchmark to pick up.

Usage::

    python -m jobs.generate_samples narratives --n 200 --seed 7 --out data/samples/narratives.jsonl
    python -m jobs.generate_samples e2b --n 40 --seed 7 --out-dir data/samples/e2b --files 2
    python -m jobs.generate_samples table --n 10000 --seed 7 --out build/scale/10000-7 [--rows-per-file 5000]
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from deid_core.corpus.atomic import atomic_text_writer
from deid_core.e2b.synthetic import (
    case_of,
    report_document,
    synthetic_r2_batch,
    synthetic_r3_batch,
    synthetic_reports,
    ts,
)
from deid_core.synthetic import LABELS, generate_narratives
from deid_core.synthetic.lengths import LengthPlan

PROGRESS_THRESHOLD = 1000
"""Show a progress bar (in ``auto`` mode) from this many documents up."""

app = typer.Typer(
    help="Generate synthetic sample data (no real data is ever used).",
    add_completion=False,
    no_args_is_help=True,
)
_stderr = Console(stderr=True)


@app.callback()
def _main() -> None:
    """Generate synthetic sample data for the de-identifier.

    An explicit callback keeps this a command *group* even while it has a
    single command, so ``generate_samples narratives ...`` stays valid when
    more commands (e.g. ``e2b``) are added.
    """


# --- writing ----------------------------------------------------------------------


@dataclass
class WriteStats:
    """What was written: documents and spans per label (for the summary line)."""

    docs: int = 0
    spans: Counter[str] = field(default_factory=Counter)

    def add(self, record: dict[str, Any]) -> None:
        self.docs += 1
        self.spans.update(span["label"] for span in record.get("spans", ()))

    def summary(self, path: Path) -> str:
        """One line: ``wrote 200 docs, 1234 spans (DATE=..., NAME=...) to PATH``."""
        order = list(LABELS) + sorted(set(self.spans) - set(LABELS))
        parts = ", ".join(f"{label}={self.spans[label]}" for label in order if self.spans[label])
        total = sum(self.spans.values())
        return f"wrote {self.docs} docs, {total} spans ({parts or 'none'}) to {path}"


def write_jsonl_atomic(
    path: Path,
    records: Iterable[dict[str, Any]],
    *,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Write ``records`` as JSON Lines to ``path`` all-or-nothing (see `atomic_text_writer`)."""
    with atomic_text_writer(path) as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False))
            fh.write("\n")
            if on_record is not None:
                on_record(record)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write UTF-8 ``data`` (an XML file) to ``path`` all-or-nothing (see `atomic_text_writer`).

    XML serialised by lxml contains no carriage returns (they are written as
    character references), so going through the text writer keeps the bytes.
    """
    with atomic_text_writer(path) as fh:
        fh.write(data.decode("utf-8"))


@dataclass(frozen=True)
class E2BFile:
    """One planned E2B sample file: its name, format and slice of the report stream."""

    name: str
    format: str
    start: int
    count: int


def plan_e2b_files(n: int, files: int) -> list[E2BFile]:
    """Split reports ``0 .. n-1`` over ``files`` files, R3 and R2 alternating.

    The slices are consecutive, so case ids never repeat across files except
    for a follow-up whose first version ended the previous file (as happens
    between real transmissions).
    """
    base, extra = divmod(n, files)
    plan: list[E2BFile] = []
    start = 0
    for k in range(files):
        count = base + (1 if k < extra else 0)
        fmt = "R3" if k % 2 == 0 else "R2"
        plan.append(E2BFile(f"synthetic_{fmt.lower()}_{k:03d}.xml", fmt, start, count))
        start += count
    return plan


@contextlib.contextmanager
def _progress(total: int, enabled: bool, what: str) -> Iterator[Callable[..., None]]:
    """Yield a tick function (``tick()`` or ``tick(n)``); draws a transient bar on stderr when enabled."""
    if not enabled:
        yield lambda n=1: None
        return
    columns = (TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=_stderr, transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n=1: bar.advance(task, n)


def _want_progress(mode: str, n: int) -> bool:
    if mode == "auto":
        return n >= PROGRESS_THRESHOLD and _stderr.is_terminal
    return mode == "always"


def _run_writer(out: Path, records: Iterable[dict[str, Any]], n: int, progress: str, what: str) -> WriteStats:
    """Write records with progress and stats; turn file-system errors into exit code 1."""
    stats = WriteStats()
    try:
        with _progress(n, _want_progress(progress, n), what) as tick:
            def on_record(record: dict[str, Any]) -> None:
                stats.add(record)
                tick()

            write_jsonl_atomic(out, records, on_record=on_record)
    except OSError as exc:
        _stderr.print(f"[red]error:[/red] cannot write {out}: {exc.strerror or exc}", highlight=False)
        raise typer.Exit(code=1) from exc
    return stats


# --- commands -----------------------------------------------------------------------


@app.command()
def narratives(
    n: int = typer.Option(200, "--n", "-n", min=0, help="Number of narratives."),
    seed: int = typer.Option(0, "--seed", help="Seed; the same (n, seed) gives byte-identical output."),
    out: Path = typer.Option(Path("data/samples/narratives.jsonl"), "--out", "-o",
                             help="Output JSONL file (written atomically)."),
    progress: str = typer.Option("auto", "--progress",
                                 help="Progress bar on stderr: auto (large n on a terminal), always, never."),
) -> None:
    """Synthetic PV case narratives with gold PHI spans, one JSON object per line."""
    if progress not in ("auto", "always", "never"):
        raise typer.BadParameter("must be auto, always or never", param_hint="--progress")
    records = (doc.to_json_dict() for doc in generate_narratives(n, seed))
    stats = _run_writer(out, records, n, progress, "narratives")
    _stderr.print(stats.summary(out), highlight=False, soft_wrap=True)


@app.command()
def e2b(
    n: int = typer.Option(40, "--n", "-n", min=0, help="Number of reports, all files together."),
    seed: int = typer.Option(0, "--seed", help="Seed; the same (n, seed, files) gives byte-identical files."),
    out_dir: Path = typer.Option(Path("data/samples/e2b"), "--out-dir", "-o",
                                 help="Output folder (each file written atomically)."),
    files: int = typer.Option(2, "--files", "-k", min=1,
                              help="Number of files; they alternate E2B(R3) and E2B(R2)."),
) -> None:
    """Synthetic E2B batch files: PHI-bearing narratives, fake identities, follow-up versions."""
    if n and files > n:
        raise typer.BadParameter(f"cannot spread {n} reports over {files} files", param_hint="--files")
    plan = plan_e2b_files(n, files)
    per_format: Counter[str] = Counter()
    for item in plan:
        writer = synthetic_r3_batch if item.format == "R3" else synthetic_r2_batch
        data = writer(item.count, seed, start=item.start)
        path = out_dir / item.name
        try:
            write_bytes_atomic(path, data)
        except OSError as exc:
            _stderr.print(f"[red]error:[/red] cannot write {path}: {exc.strerror or exc}", highlight=False)
            raise typer.Exit(code=1) from exc
        per_format[item.format] += item.count
        _stderr.print(f"  {item.name}: {item.count} {item.format} reports, {len(data):,} bytes", highlight=False)
    follow_ups = sum(1 for i in range(n) if case_of(i)[1] > 1)
    formats = ", ".join(f"{fmt}={per_format[fmt]}" for fmt in ("R3", "R2") if fmt in per_format)
    _stderr.print(f"wrote {n} reports ({n - follow_ups} cases, {follow_ups} follow-ups; {formats}) "
                  f"in {len(plan)} files to {out_dir}", highlight=False, soft_wrap=True)


# --- the report table (scale run) ----------------------------------------------------------

TABLE_COLUMNS = ("doc_id", "xml", "received_date")
"""One row per report: the document's id, one E2B document holding that report alone, its received date."""
TABLE_MANIFEST = "_generator.json"
"""What the table holds and how it was made (counts and parameters, no text). A leading
underscore keeps Spark and pyarrow datasets from reading it as data."""
TABLE_CHUNK = 250
"""Reports per unit of work of a generator process."""
ROW_GROUP_BYTES = 64 << 20
"""A row group is closed at this many bytes of text (or --row-group-rows rows), whichever comes first."""


def table_format(index: int) -> str:
    """E2B format of report ``index`` in the table: a case (all its versions) is R3 or R2, alternating."""
    return "R3" if case_of(index)[0] % 2 == 0 else "R2"


def table_doc_id(seed: int, index: int) -> str:
    return f"PVDEID-DOC-{seed}-{index:09d}"


@dataclass
class TableStats:
    """Counts over the generated rows (for the summary and the manifest; no text)."""

    reports: int = 0
    follow_ups: int = 0
    formats: Counter[str] = field(default_factory=Counter)
    xml_chars: int = 0
    narrative_chars: int = 0
    longest_narrative: int = 0
    #: narratives from the long tail or the huge one per block (by target length)
    long_narratives: int = 0

    def merge(self, other: TableStats) -> None:
        self.reports += other.reports
        self.follow_ups += other.follow_ups
        self.formats.update(other.formats)
        self.xml_chars += other.xml_chars
        self.narrative_chars += other.narrative_chars
        self.longest_narrative = max(self.longest_narrative, other.longest_narrative)
        self.long_narratives += other.long_narratives


def table_rows(seed: int, start: int, count: int, plan: LengthPlan) -> tuple[dict[str, list[str]], TableStats]:
    """Rows ``start .. start + count - 1`` of the table for ``seed`` (columns as lists) and their counts."""
    cols: dict[str, list[str]] = {name: [] for name in TABLE_COLUMNS}
    stats = TableStats()
    for offset, report in enumerate(synthetic_reports(count, seed, start=start, lengths=plan)):
        index = start + offset
        fmt = table_format(index)
        xml = report_document(report, fmt, seed=seed, index=index).decode("utf-8")
        cols["doc_id"].append(table_doc_id(seed, index))
        cols["xml"].append(xml)
        cols["received_date"].append(ts(report.most_recent_info))
        n_chars = len(report.narrative.text)
        stats.reports += 1
        stats.follow_ups += report.version > 1
        stats.formats[fmt] += 1
        stats.xml_chars += len(xml)
        stats.narrative_chars += n_chars
        stats.longest_narrative = max(stats.longest_narrative, n_chars)
        stats.long_narratives += report.narrative.meta["fitted"]["target"] >= min(plan.long_min, plan.huge_length)
    return cols, stats


def _table_chunk(job: tuple[int, int, int, dict[str, Any]]) -> tuple[dict[str, list[str]], TableStats]:
    """A generator process's unit of work (module level, so that it can be sent to a spawned process)."""
    seed, start, count, plan_args = job
    return table_rows(seed, start, count, LengthPlan(seed, **plan_args))


def _chunks(seed: int, n: int, plan_args: dict[str, Any]) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    for start in range(0, n, TABLE_CHUNK):
        yield seed, start, min(TABLE_CHUNK, n - start), plan_args


def _generated(seed: int, n: int, plan_args: dict[str, Any], workers: int,
               ) -> Iterator[tuple[dict[str, list[str]], TableStats]]:
    """Chunks of rows in index order; with several workers at most 2 per worker are in flight (memory flat in n)."""
    jobs = _chunks(seed, n, plan_args)
    if workers <= 1:
        yield from map(_table_chunk, jobs)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending: deque[Future[tuple[dict[str, list[str]], TableStats]]] = deque()
        for job in jobs:
            pending.append(pool.submit(_table_chunk, job))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


class TableWriter:
    """Rows -> Parquet files of at most ``rows_per_file`` rows, in row groups of bounded rows and bytes.

    Rows are buffered only up to one row group, so memory does not grow
    with the number of reports. Files are ``part-00000.parquet``, ... (zstd).
    """

    def __init__(self, folder: Path, rows_per_file: int, row_group_rows: int,
                 row_group_bytes: int = ROW_GROUP_BYTES) -> None:
        import pyarrow as pa

        self.folder = folder
        self.rows_per_file = rows_per_file
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self.schema = pa.schema([(name, pa.string()) for name in TABLE_COLUMNS])
        self.files: list[dict[str, Any]] = []
        self.row_groups = 0
        self._writer: Any = None
        self._file_rows = 0
        self._buffer: dict[str, list[str]] = {name: [] for name in TABLE_COLUMNS}
        self._buffer_bytes = 0

    def add(self, cols: dict[str, list[str]]) -> None:
        for i in range(len(cols["doc_id"])):
            for name in TABLE_COLUMNS:
                self._buffer[name].append(cols[name][i])
            self._buffer_bytes += len(cols["xml"][i])
            room = min(self.row_group_rows, self.rows_per_file - self._file_rows)
            if len(self._buffer["doc_id"]) >= room or self._buffer_bytes >= self.row_group_bytes:
                self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = len(self._buffer["doc_id"])
        if not rows:
            return
        if self._writer is None:
            path = self.folder / f"part-{len(self.files):05d}.parquet"
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
            self.files.append({"name": path.name, "rows": 0, "row_groups": 0})
        batch = pa.table({name: pa.array(self._buffer[name], pa.string()) for name in TABLE_COLUMNS},
                         schema=self.schema)
        self._writer.write_table(batch, row_group_size=rows)
        self.files[-1]["rows"] += rows
        self.files[-1]["row_groups"] += 1
        self.row_groups += 1
        self._file_rows += rows
        self._buffer = {name: [] for name in TABLE_COLUMNS}
        self._buffer_bytes = 0
        if self._file_rows >= self.rows_per_file:
            self._close_file()

    def _close_file(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self.files[-1]["bytes"] = (self.folder / self.files[-1]["name"]).stat().st_size
            self._file_rows = 0

    def close(self) -> None:
        self._flush()
        self._close_file()


def _replaceable(out: Path) -> bool:
    """A folder this command may replace: absent, empty, or a table it wrote (it has the manifest)."""
    return not out.exists() or (out.is_dir() and (not any(out.iterdir()) or (out / TABLE_MANIFEST).is_file()))


def write_table(out: Path, *, n: int, seed: int, rows_per_file: int, row_group_rows: int, workers: int,
                plan: LengthPlan, progress: bool = False) -> dict[str, Any]:
    """Generate the table into a temporary sibling folder, then move it to ``out``; returns the manifest."""
    t0 = time.perf_counter()
    plan_args = {"long_share": plan.long_share, "long_min": plan.long_min, "long_max": plan.long_max,
                 "huge_every": plan.huge_every, "huge_length": plan.huge_length}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        writer = TableWriter(tmp, rows_per_file, row_group_rows)
        stats = TableStats()
        with _progress(n, progress, "reports") as tick:
            for cols, chunk_stats in _generated(seed, n, plan_args, workers):
                writer.add(cols)
                stats.merge(chunk_stats)
                tick(chunk_stats.reports)
        writer.close()
        manifest = {
            "generator": "jobs.generate_samples table",
            "format": 1,
            "n": n,
            "seed": seed,
            "columns": list(TABLE_COLUMNS),
            "rows_per_file": rows_per_file,
            "row_group_rows": row_group_rows,
            "lengths": {**plan_args, "huge_offset": plan.huge_offset},
            "reports": stats.reports,
            "follow_ups": stats.follow_ups,
            "formats": dict(sorted(stats.formats.items(), reverse=True)),
            "xml_chars": stats.xml_chars,
            "narrative_chars": stats.narrative_chars,
            "longest_narrative": stats.longest_narrative,
            "long_narratives": stats.long_narratives,
            "files": writer.files,
            "row_groups": writer.row_groups,
            "bytes": sum(f["bytes"] for f in writer.files),
            "workers": workers,
            "seconds": round(time.perf_counter() - t0, 2),
        }
        (tmp / TABLE_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
        return manifest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@app.command()
def table(
    n: int = typer.Option(..., "--n", "-n", min=0, help="Number of reports (rows)."),
    seed: int = typer.Option(0, "--seed", help="Seed; the same (n, seed, options) gives byte-identical files."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (written to a temporary folder, then renamed)."),
    rows_per_file: int = typer.Option(5000, "--rows-per-file", min=1, help="Rows per Parquet file."),
    row_group_rows: int = typer.Option(1000, "--row-group-rows", min=1,
                                       help="Rows per row group (also closed at 64 MB of text)."),
    workers: int = typer.Option(0, "--workers", min=0, help="Generator processes (0: one per core)."),
    long_share: float = typer.Option(1 / 20_000, "--long-share", min=0.0, max=1.0,
                                     help="Share of narratives drawn from 100 KB - 1 MB (log-uniform)."),
    huge_every: int = typer.Option(10_000, "--huge-every", min=0,
                                   help="One narrative of --huge-length per block of this many reports (0: none)."),
    huge_length: int = typer.Option(1_000_000, "--huge-length", min=1, help="Characters of that narrative."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a table this command wrote before."),
    progress: str = typer.Option("auto", "--progress",
                                 help="Progress bar on stderr: auto (large n on a terminal), always, never."),
) -> None:
    """A Parquet table of synthetic reports: one E2B(R3) or E2B(R2) document per row, lengths from real text."""
    if progress not in ("auto", "always", "never"):
        raise typer.BadParameter("must be auto, always or never", param_hint="--progress")
    if out.exists() and not overwrite:
        _stderr.print(f"[red]error:[/red] {out} exists (use --overwrite to replace a generated table)", highlight=False)
        raise typer.Exit(code=1)
    if not _replaceable(out):
        _stderr.print(f"[red]error:[/red] {out} is not a table written by this command; not replacing it",
                      highlight=False)
        raise typer.Exit(code=1)
    workers = workers or len(os.sched_getaffinity(0))
    plan = LengthPlan(seed, long_share=long_share, huge_every=huge_every, huge_length=huge_length)
    try:
        m = write_table(out, n=n, seed=seed, rows_per_file=rows_per_file, row_group_rows=row_group_rows,
                        workers=workers, plan=plan, progress=_want_progress(progress, n))
    except OSError as exc:
        _stderr.print(f"[red]error:[/red] cannot write {out}: {exc.strerror or exc}", highlight=False)
        raise typer.Exit(code=1) from exc
    formats = ", ".join(f"{k}={v}" for k, v in m["formats"].items())
    rate = f"{m['reports'] / m['seconds']:,.0f} reports/s" if m["seconds"] else "-"
    _stderr.print(
        f"wrote {m['reports']} reports ({m['reports'] - m['follow_ups']} cases, {m['follow_ups']} follow-ups; "
        f"{formats}) in {len(m['files'])} files, {m['row_groups']} row groups, {m['bytes'] / 1e6:.1f} MB to {out} "
        f"in {m['seconds']:.1f}s ({rate}, {workers} workers); narratives {m['narrative_chars']:,} chars, "
        f"longest {m['longest_narrative']:,}, {m['long_narratives']} long (tail or huge)",
        highlight=False, soft_wrap=True)


if __name__ == "__main__":
    app()
