"""Generate the project's own sample data.

The repository may not contain real case narratives, so ``make run`` feeds
the de-identifier with documents produced here. Each kind of sample is one
sub-command of :data:`app` (``narratives`` now; ``e2b`` later), and all of
them write through :func:`write_jsonl_atomic`, so an interrupted run never
leaves a half-written sample file for ``make`` to pick up.

Usage::

    python -m jobs.generate_samples narratives --n 200 --seed 7 --out data/samples/narratives.jsonl
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


if __name__ == "__main__":
    app()
