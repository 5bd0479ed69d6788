"""Print a summary of a `deid detect` output file: counts only, never text.

`make run` ends with this so the user sees what happened without opening a
file that, for the input side, holds PHI.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False)


@app.command()
def main(in_path: Annotated[Path, typer.Option("--in", exists=True, dir_okay=False)]) -> None:
    docs = masked = 0
    by_label: Counter[str] = Counter()
    with in_path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            obj = json.loads(line)
            docs += 1
            masked += len(obj["spans"])
            by_label.update(s["label"] for s in obj["spans"])
    console = Console()
    table = Table(title=f"De-identified {docs} documents -> {in_path}")
    table.add_column("category")
    table.add_column("masked tokens", justify="right")
    for label, n in by_label.most_common():
        table.add_row(label, str(n))
    table.add_row("[bold]total[/bold]", f"[bold]{masked}[/bold]")
    console.print(table)


if __name__ == "__main__":
    app()
