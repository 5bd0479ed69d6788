"""The pandas UDF of the de-identification job: field rows in, de-identified rows out.

Used with `DataFrame.mapInPandas`: each Arrow batch of a partition arrives
as a pandas frame of fields (narratives, comments, structured values). Texts
are sorted by length and processed in chunks, so the network pads little.

Fail closed, row by row: a text the detector could not process is fully
masked; a surrogate that could not be made is tagged; if the pipeline
cannot even be loaded (model missing, bad configuration) or a chunk fails
as a whole, every row of it is fully masked. Such rows carry status
"failed" and an error code, and the job also writes them to quarantine.
Nothing here logs or raises with text content.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd

from deid_core.categories import UNKNOWN_LABEL
from deid_core.config import OutputConfig
from deid_core.lakehouse import KIND_STRUCTURED, KIND_TEXT, PIECE_COLUMNS, SILVER
from deid_core.render import render_masked, replacement as tag_for
from deid_core.results import mask_everything
from udfs.runtime import PipelineSpec, pipeline_for

log = logging.getLogger(__name__)

#: the tags and placeholder of the fail-closed form (validated once, not per failed value)
_OUTPUT = OutputConfig()
#: texts per detector call: bounded memory, enough to fill network batches
CHUNK = 64
#: structured values per chunk (a failing chunk is masked whole)
VALUE_CHUNK = 1024

#: the rows this UDF emits are silver's (`deid_core.lakehouse.SILVER`); it reads `FIELD_ROWS`.
#: Given `FIELD_PIECES` (pieces of long texts), it emits `SILVER_PIECES`: the piece columns pass through.
_COLUMNS = list(SILVER.names)
_PIECE_NAMES = tuple(n for n, _ in PIECE_COLUMNS)

# error codes (also documented in the README)
E_LOAD = "E_LOAD"        # the pipeline could not be loaded: row fully masked
E_CHUNK = "E_CHUNK"      # a whole chunk failed unexpectedly: rows fully masked
E_DETECT = "E_DETECT"    # the detector failed on this text: fully masked
E_REPLACE = "E_REPLACE"  # a surrogate failed: the entity was tagged


def fully_masked(kind: str, label: str | None, text: str) -> tuple[str, list[dict[str, Any]]]:
    """The fail-closed form of a field, and its spans: a structured value tagged whole, every token of a text masked.

    The one definition of what a failed field becomes, here and in the
    narrative-table job (`mask_columns`).
    """
    out = _OUTPUT
    if kind == KIND_STRUCTURED:
        tag = tag_for(label or UNKNOWN_LABEL, out)
        return tag, [{"start": 0, "end": len(text), "label": label or UNKNOWN_LABEL, "replacement": tag}]
    masked = mask_everything(text)
    spans = [{"start": m.start, "end": m.end, "label": m.label, "replacement": out.placeholder} for m in masked]
    return render_masked(text, masked, out), spans


def _failed_rows(chunk: pd.DataFrame, code: str, versions: dict[str, str], ms: float) -> list[dict[str, Any]]:
    rows = []
    for r in chunk.itertuples(index=False):
        text_deid, spans = fully_masked(r.kind, r.label, r.text or "")
        rows.append(_row(r, text_deid, spans, "failed", code, versions, ms))
    return rows


def _row(r: Any, text_deid: str, spans: list[dict[str, Any]], status: str, code: str | None,
         versions: dict[str, str], ms: float) -> dict[str, Any]:
    piece = {c: getattr(r, c) for c in _PIECE_NAMES if hasattr(r, c)}
    return piece | {
        "case_id": r.case_id, "version": r.version, "field": r.field, "kind": r.kind, "label": r.label,
        "text_deid": text_deid, "spans": spans, "status": status, "error_code": code,
        "input_sha256": r.input_sha256, "model_version": versions.get("model"),
        "dictionary_version": versions.get("dictionary"), "policy_version": versions.get("policy"),
        "processing_ms": ms,
    }


def _process_chunk(pipe: Any, chunk: pd.DataFrame, versions: dict[str, str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    texts = chunk[chunk["kind"] == KIND_TEXT]
    structured = chunk[chunk["kind"] != KIND_TEXT]
    if len(texts):
        results = pipe.process(list(texts["text"].fillna("")), list(texts["case_id"]))
        for r, res in zip(texts.itertuples(index=False), results, strict=True):
            ms = 1000 * res.seconds
            spans = [x.to_json() for x in res.replacements]
            if res.detection_failed:
                rows.append(_row(r, res.text, spans, "failed", E_DETECT, versions, ms))
            elif res.failures:
                rows.append(_row(r, res.text, spans, "failed", E_REPLACE, versions, ms))
            else:
                rows.append(_row(r, res.text, spans, "ok", None, versions, ms))
    for r in structured.itertuples(index=False):
        t1 = time.perf_counter()
        value = r.text or ""
        new = pipe.replacer.replace_value(value, r.label or UNKNOWN_LABEL, r.case_id)
        ms = 1000 * (time.perf_counter() - t1)
        if new is None:  # kept by the policy
            rows.append(_row(r, value, [], "ok", None, versions, ms))
        else:
            span = {"start": 0, "end": len(value), "label": r.label, "replacement": new}
            rows.append(_row(r, new, [span], "ok", None, versions, ms))
    return rows


def mask_columns(columns: dict[str, tuple[str, str | None]]) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """For `mapInPandas(..., the same schema)`: every named column fully masked (`fully_masked`), NULL kept NULL.

    `columns` maps a column to its field kind and label. Used for the rows of
    a narrative table that failed: all their declared columns are masked,
    including those that were de-identified without error.
    """

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch in batches:
            for column, (kind, label) in columns.items():
                batch[column] = [None if v is None or (isinstance(v, float) and pd.isna(v))
                                 else fully_masked(kind, label, str(v))[0] for v in batch[column]]
            yield batch

    return run


def deidentify_batches(
    spec: PipelineSpec, dictionary_bc: Any, key_bc: Any | None
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The function for `mapInPandas(..., SILVER.schema)` over `FIELD_ROWS`; broadcasts are read on the worker."""

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        pipe = None
        # the driver's versions until the worker's own pipeline is known: a row that
        # failed to load is then comparable with the good rows of an earlier run
        versions: dict[str, str] = dict(spec.versions)
        try:
            pipe = pipeline_for(spec, dictionary_bc.value, key_bc.value if key_bc is not None else None)
            versions = pipe.versions()
        except Exception as exc:  # noqa: BLE001 - fail closed: mask everything
            log.error("pipeline could not be loaded (%s); rows fully masked", type(exc).__name__)  # phi-safe
        for batch in batches:
            columns = _COLUMNS + [c for c in _PIECE_NAMES if c in batch.columns]
            # texts sorted by length, in chunks of CHUNK texts (full network batches);
            # structured values are cheap and go in larger chunks after them
            texts = batch[batch["kind"] == KIND_TEXT]
            texts = texts.assign(_len=texts["text"].fillna("").str.len()).sort_values("_len", kind="stable")
            values = batch[batch["kind"] != KIND_TEXT]
            chunks = [texts.iloc[i : i + CHUNK] for i in range(0, len(texts), CHUNK)]
            chunks += [values.iloc[i : i + VALUE_CHUNK] for i in range(0, len(values), VALUE_CHUNK)]
            out: list[dict[str, Any]] = []
            for chunk in chunks:
                if pipe is None:
                    out += _failed_rows(chunk, E_LOAD, versions, 0.0)
                    continue
                try:
                    out += _process_chunk(pipe, chunk, versions)
                except Exception as exc:  # noqa: BLE001 - fail closed
                    log.error("chunk failed (%s); rows fully masked", type(exc).__name__)  # phi-safe
                    out += _failed_rows(chunk, E_CHUNK, versions, 0.0)
            yield pd.DataFrame(out, columns=columns)

    return run

