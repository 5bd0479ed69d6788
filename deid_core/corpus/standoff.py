"""Stand-off annotations: gold offsets kept in the repository, texts kept elsewhere.

Why this exists: the hand-annotated VAERS evaluation set
(`bench/annotations/vaers_pv/`) must live with the code, but the narratives
it annotates are in the read-only shared data folder and may never be copied
into the repository. So each annotation line holds no text, only where to
find it and what was marked on it::

    {"doc_id": "VAERS-916710", "source": "vaers_2021_jan.jsonl", "field": "text",
     "text_sha256": "<sha256 of the UTF-8 text>",
     "spans": [{"start", "end", "label"}], "keep": [{"start", "end", "label"}]}

`read_standoff` looks each text up in `<shared_root>/vaers/<source>` (the
record's `text`, or `fields[<field>]` for lab data, other medications, ...),
checks the hash, because a text changed after annotation would silently
shift every offset, and returns ordinary `Document`s. Span objects are
checked by the corpus JSONL reader's own code. A document from a field
other than `text` gets the id `<doc_id>#<field>`, so a report's narrative
and its lab data can sit in one corpus.

`python -m deid_core.corpus.standoff materialise` writes the documents as a
normal corpus JSONL (spans and keep spans) for `deid eval --gold` and the
benchmarks. That output holds the narratives: write it under `build/`, never
into a tracked folder.

Errors name the annotation file, line, doc_id, field and source file, never
the text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from deid_core.corpus.document import Document
from deid_core.corpus.jsonl import CorpusFormatError, document_from_json, iter_jsonl, write_jsonl

#: Sub-folder of the shared data root that holds the source files.
SOURCE_DIR = "vaers"
#: The field that holds the narrative itself; others are looked up in `fields`.
TEXT_FIELD = "text"


class StandoffError(ValueError):
    """An annotation that cannot be joined with its text; names files, lines and ids, never text."""


def text_sha256(text: str) -> str:
    """The hash stored with an annotation: SHA-256 of the UTF-8 text, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_id(doc_id: str, field: str) -> str:
    """`doc_id` for the narrative, `doc_id#field` for another field of the same report."""
    return doc_id if field == TEXT_FIELD else f"{doc_id}#{field}"


def _annotation_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The annotation records with their line numbers; required keys checked."""
    out: list[tuple[int, dict[str, Any]]] = []
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path.name}: line {line_no}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise StandoffError(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(rec, dict):
                raise StandoffError(f"{where}: expected a JSON object")
            for key in ("doc_id", "source", "field", "text_sha256"):
                if not isinstance(rec.get(key), str) or not rec[key]:
                    raise StandoffError(f"{where}: needs a non-empty string '{key}'")
            source = rec["source"]
            if Path(source).name != source or source in (".", ".."):
                raise StandoffError(f"{where}: 'source' must be a file name in {SOURCE_DIR}/, not a path")
            out.append((line_no, rec))
    return out


def _source_texts(shared_root: Path, source: str, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The texts of the (doc_id, field) pairs in `wanted` that the source file holds."""
    path = shared_root / SOURCE_DIR / source
    if not path.is_file():
        raise StandoffError(f"source file {source} not found under {shared_root / SOURCE_DIR}")
    ids = {doc_id for doc_id, _ in wanted}
    found: dict[tuple[str, str], str] = {}
    try:
        for _, doc in iter_jsonl(path):
            if doc.doc_id not in ids:
                continue
            fields = doc.meta.get("fields")
            for doc_id, field in wanted:
                if doc_id != doc.doc_id:
                    continue
                if field == TEXT_FIELD:
                    text: Any = doc.text
                else:
                    text = fields.get(field) if isinstance(fields, dict) else None
                if isinstance(text, str):
                    found[(doc_id, field)] = text
    except CorpusFormatError as exc:
        raise StandoffError(f"source {exc}") from None
    return found


def read_standoff(path: Path, shared_root: Path) -> list[Document]:
    """Join the annotations in `path` with their texts under `shared_root`, in file order.

    Raises StandoffError when an annotation line is malformed, names a
    document twice, names a source file, report or field that is absent,
    or when the text's SHA-256 differs from the one annotated; span
    problems (offsets outside the text, bad keep labels) are reported as
    the corpus reader reports them.
    """
    path, shared_root = Path(path), Path(shared_root)
    records = _annotation_lines(path)
    seen: dict[tuple[str, str], int] = {}
    by_source: dict[str, set[tuple[str, str]]] = {}
    for line_no, rec in records:
        key = (rec["doc_id"], rec["field"])
        if key in seen:
            raise StandoffError(f"{path.name}: line {line_no}: {document_id(*key)} already annotated on line {seen[key]}")
        seen[key] = line_no
        by_source.setdefault(rec["source"], set()).add(key)
    texts = {src: _source_texts(shared_root, src, wanted) for src, wanted in by_source.items()}

    docs: list[Document] = []
    for line_no, rec in records:
        doc_id, field, source = rec["doc_id"], rec["field"], rec["source"]
        where = f"{path.name}: line {line_no}: {doc_id} ({field}) in {source}"
        text = texts[source].get((doc_id, field))
        if text is None:
            raise StandoffError(f"{where}: no such report or field in the source file")
        if text_sha256(text) != rec["text_sha256"]:
            raise StandoffError(f"{where}: the text differs from the annotated one (SHA-256 mismatch)")
        obj = {
            "doc_id": document_id(doc_id, field),
            "text": text,
            "spans": rec.get("spans"),
            "keep": rec.get("keep"),
            "source": source,
            "field": field,
            "report_id": doc_id,
        }
        try:
            docs.append(document_from_json(obj, path, line_no))
        except CorpusFormatError as exc:
            raise StandoffError(f"{exc} ({doc_id}, {field})") from None
    return docs


def materialise(annotations: Path, shared_root: Path, out: Path) -> int:
    """Write the joined documents as a corpus JSONL (atomically); returns how many."""
    return write_jsonl(read_standoff(annotations, shared_root), out)


app = typer.Typer(add_completion=False, no_args_is_help=True, help="Stand-off annotations over the shared VAERS files.")


@app.callback()
def _main() -> None:
    """Stand-off annotations over the shared VAERS files (kept a command group for later commands)."""


@app.command("materialise")
def materialise_command(
    annotations: Annotated[Path, typer.Option("--annotations", exists=True, dir_okay=False, help="stand-off JSONL")],
    shared: Annotated[Path, typer.Option("--shared", exists=True, file_okay=False, help="shared data root (holds vaers/)")],
    out: Annotated[Path, typer.Option("--out", dir_okay=False, help="corpus JSONL to write (holds text: keep it under build/)")],
) -> None:
    """Join annotations and texts into a corpus JSONL that `deid eval --gold` reads."""
    try:
        n = materialise(annotations, shared, out)
    except StandoffError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(f"wrote {n} documents to {out}", err=True)


if __name__ == "__main__":
    app()
