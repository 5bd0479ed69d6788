"""Generate the project's own sample data.

The repository may not contain real case narratives, so ``make run`` feeds
the de-identifier with documents produced here. Each kind of sample is one
sub-command of :data:`app`: ``narratives`` (JSON Lines with gold spans) and
``e2b`` (E2B(R3) and E2B(R2) batch files for the ingest job). All of them
write atomically (temporary file, then rename), so an interrupted run never
leaves a half-written sample file for ``make`` to pick up.

Usage::

    python -m jobs.generate_samples narratives --n 200 --seed 7 --out data/samples/narratives.jsonl
    python -m jobs.generate_samples e2b --n 40 --seed 7 --out-dir data/samples/e2b --files 2
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from deid_core.corpus.atomic import atomic_text_writer
from deid_core.e2b.synthetic import case_of, synthetic_r2_batch, synthetic_r3_batch
from deid_core.synthetic import LABELS, generate_narratives

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
def _progress(total: int, enabled: bool, what: str) -> Iterator[Callable[[], None]]:
    """Yield a tick function; draws a transient bar on stderr when enabled."""
    if not enabled:
        yield lambda: None
        return
    columns = (TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=_stderr, transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda: bar.advance(task)


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


if __name__ == "__main__":
    app()
