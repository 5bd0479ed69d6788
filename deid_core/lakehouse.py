"""The row formats of the Delta tables, and the field keys that name a report's fields in them.

One place owns what each table holds, so that the code that writes a row
and the code that reads it cannot drift apart:

* :data:`BRONZE` -- ``bronze_reports``, one row per report version
  (written by ``jobs.ingest_e2b`` from the rows of :data:`PARSED`, the
  output of the parse UDF ``udfs.parse_e2b``, whose input is
  :data:`LANDED_FILES`);
* :data:`SILVER` -- ``silver_fields``, one row per de-identified field
  (the output of the UDF ``udfs.deidentify_fields``, whose input is
  :data:`FIELD_ROWS`, made by ``jobs.deidentify``);
* :data:`QUARANTINE` -- what could not be ingested or processed;
* :data:`PENDING` and :data:`GOLD` -- a report regrouped from silver
  (``jobs.pending``) and ``published_reports``, the same plus when it was
  published (``jobs.publish``), with :data:`PUBLISH_LOG`;
* :data:`QA_SAMPLE_ITEMS`, :data:`QA_REVIEW_ITEMS`, :data:`QA_METRICS` --
  the QA tables (``jobs.qa_sample``, ``jobs.qa_ingest_review``).

Each :class:`Layout` lists its columns in order with their Spark SQL types
and names the key every MERGE into the table matches on. Its
:attr:`~Layout.schema` is a Spark DDL string (``"case_id string, ..."``):
a plain string that ``mapInPandas`` and ``createDataFrame`` accept, so
nothing here needs Spark.

A field of a report is named in silver, quarantine and the QA tables by
its *field key*: the field's kind (:data:`KIND_TEXT` or
:data:`KIND_STRUCTURED`, also the ``kind`` column), a colon, and its path
in the report (``"text:narrative"``, ``"structured:patient.birth_date"``).
:func:`field_key` builds one and :func:`split_field_key` takes one apart;
the Spark column forms (``jobs.tables.field_key_column`` and
``field_name_column``) follow the same rule. A path may itself hold a
colon: only the first colon separates, and kinds never hold one.

Why here, at the bottom of ``deid_core`` and not in ``jobs`` or
``deid_core.e2b``: the executor code (``udfs``) emits these rows and the
entry points (``jobs``) declare and write them, and ``udfs`` may not import
``jobs``; ``deid_core`` may be imported by both and never imports Spark.
``deid_core.e2b`` reads E2B files (its package imports the XML parser) and
knows nothing of silver, quarantine or the QA tables. This module imports
nothing from the project (checked by ``tests/test_layering.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

#: the two kinds of field a report has (the ``kind`` column): free text, and structured values
KIND_TEXT = "text"
KIND_STRUCTURED = "structured"
FIELD_KINDS = (KIND_TEXT, KIND_STRUCTURED)
#: between the kind and the path in a field key
FIELD_KEY_SEPARATOR = ":"


def field_key(kind: str, name: str) -> str:
    """The key of the field `name` (its path in the report) of `kind`: ``"text:narrative"``."""
    if kind not in FIELD_KINDS:
        raise ValueError(f"unknown field kind {kind!r} (use one of: {', '.join(FIELD_KINDS)})")
    return f"{kind}{FIELD_KEY_SEPARATOR}{name}"


def split_field_key(key: str) -> tuple[str, str]:
    """(kind, name) of a field key: the inverse of :func:`field_key`; ValueError for anything else."""
    kind, sep, name = key.partition(FIELD_KEY_SEPARATOR)
    if not sep:
        raise ValueError("not a field key: no kind before a colon")
    if kind not in FIELD_KINDS:
        raise ValueError(f"unknown field kind {kind!r} (use one of: {', '.join(FIELD_KINDS)})")
    return kind, name


@dataclass(frozen=True)
class Layout:
    """The columns of one kind of row, in order, as (name, Spark SQL type); `key` is what MERGE matches on."""

    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [n for n, _ in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate column in {names}")
        if not set(self.key) <= set(names):
            raise ValueError(f"key {self.key} is not among the columns {names}")

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.columns)

    @cached_property
    def schema(self) -> str:
        """The Spark DDL string: ``"case_id string, version string, ..."``."""
        return ", ".join(f"{n} {t}" for n, t in self.columns)


_S = "string"
TEXT_FIELDS_TYPE = "array<struct<path:string,text:string>>"
STRUCTURED_FIELDS_TYPE = "array<struct<path:string,label:string,value:string>>"
SPANS_TYPE = "array<struct<start:int,end:int,label:string,replacement:string>>"

#: the parse UDF's input: one row per listed landing file (`jobs.landing`); size is None when unreadable
LANDED_FILES = Layout((("path", _S), ("size", "long")))

#: bronze_reports: one row per report version, raw text included (the restricted landing zone).
#: `country` came with a later release (MERGE adds it to older tables), hence last. A table
#: created since issue 16 also has `received_month`, its partition column, which Delta
#: generates from `received_date` (`jobs.tables.table_layout`): no job writes or needs it.
BRONZE = Layout(
    (
        ("case_id", _S), ("version", _S), ("format", _S), ("report_id", _S), ("received_date", _S),
        ("sender", _S), ("file_sha256", _S), ("content_sha256", _S), ("source_file", _S),
        ("ingest_time", "timestamp"), ("text_fields", TEXT_FIELDS_TYPE),
        ("structured_fields", STRUCTURED_FIELDS_TYPE), ("country", _S),
    ),
    key=("case_id", "version"),
)

#: the parse UDF's output: `row_kind` "report" (a bronze row) or "file" (one outcome per landed file,
#: with its error code and reason, or none); the ingest job keeps the bronze columns of clean files' reports
PARSED = Layout((("row_kind", _S), *BRONZE.columns, ("error_code", _S), ("reason", _S)))

#: the de-identification UDF's input: one row per field of a bronze report (`field` is a field key)
FIELD_ROWS = Layout(
    (("case_id", _S), ("version", _S), ("field", _S), ("kind", _S), ("label", _S), ("text", _S),
     ("input_sha256", _S)),
)

#: silver_fields: one row per de-identified field, exactly as the de-identification UDF emits it
SILVER = Layout(
    (
        ("case_id", _S), ("version", _S), ("field", _S), ("kind", _S), ("label", _S), ("text_deid", _S),
        ("spans", SPANS_TYPE), ("status", _S), ("error_code", _S), ("input_sha256", _S),
        ("model_version", _S), ("dictionary_version", _S), ("policy_version", _S), ("processing_ms", "double"),
    ),
    key=("case_id", "version", "field"),
)

#: where a piece of a long text lies in its field (`deid_core.text.pieces`): a field of
#: `pieces` pieces is de-identified as that many rows, `offset` characters into the text
PIECE_COLUMNS = (("piece", "int"), ("pieces", "int"), ("offset", "int"))
#: the de-identification UDF's input and output when long texts are cut in pieces: the piece
#: columns pass through, and the job joins the pieces back into one silver row per field
FIELD_PIECES = Layout((*FIELD_ROWS.columns, *PIECE_COLUMNS))
SILVER_PIECES = Layout((*SILVER.columns, *PIECE_COLUMNS))

#: quarantine: what could not be ingested or processed; key columns never hold NULL
#: (MERGE would not match NULL = NULL): '' instead
QUARANTINE = Layout(
    (
        ("stage", _S), ("source_file", _S), ("case_id", _S), ("version", _S), ("field", _S),
        ("error_code", _S), ("reason", _S), ("recorded_at", "timestamp"),
    ),
    key=("stage", "source_file", "case_id", "version", "field"),
)

#: a de-identified report regrouped from silver (`jobs.pending`): the rows QA samples and the gate publishes
PENDING = Layout(
    (
        ("case_id", _S), ("version", _S), ("text_fields", TEXT_FIELDS_TYPE),
        ("structured_fields", STRUCTURED_FIELDS_TYPE), ("model_versions", "array<string>"),
        ("policy_versions", "array<string>"), ("dictionary_versions", "array<string>"), ("failed_fields", "int"),
        ("content_sha256", _S), ("format", _S), ("sender", _S), ("country", _S),
    ),
    key=("case_id", "version"),
)

#: published_reports (gold): one de-identified report per (case id, version), written only through the gate
GOLD = Layout((*PENDING.columns, ("published_run_id", _S), ("published_at", "timestamp")), key=PENDING.key)

#: publish_log: one row per gate decision (appended)
PUBLISH_LOG = Layout(
    (("run_id", _S), ("decided_at", _S), ("allowed", "boolean"), ("reports", "long"), ("model_versions", _S),
     ("verdicts", _S)),
)

#: qa_sample_items: what each QA sample holds (ids, versions, strata, a hash of the original; never text)
QA_SAMPLE_ITEMS = Layout(
    (
        ("sample_id", _S), ("item_id", _S), ("run_id", _S), ("sample_created_at", _S), ("report_no", "int"),
        ("case_id", _S), ("version", _S), ("field", _S), ("kind", _S), ("model_version", _S),
        ("policy_version", _S), ("original_sha256", _S), ("sender", _S), ("country", _S),
        ("length_bucket", _S), ("weight", "double"),
    ),
    key=("sample_id", "item_id"),
)

#: qa_review_items: reviewers' verdicts per item, as token counts (never text)
QA_REVIEW_ITEMS = Layout(
    (
        ("sample_id", _S), ("item_id", _S), ("model_version", _S), ("reviewer", _S), ("tokens", "int"),
        ("released", "int"), ("masked", "int"), ("missed_phi", "int"), ("over_masked", "int"),
        ("source_file", _S), ("ingested_at", _S),
    ),
    key=("sample_id", "item_id"),
)

#: qa_metrics: residual-PHI and over-masking rates with upper bounds, per sample and model version
#: (recomputed whole and overwritten on every review ingest)
QA_METRICS = Layout(
    (
        ("sample_id", _S), ("model_version", _S), ("sample_created_at", _S), ("run_id", _S), ("items", "int"),
        ("reviewed_items", "int"), ("complete", "boolean"), ("tokens", "int"), ("released", "int"),
        ("masked", "int"), ("missed_phi", "int"), ("over_masked", "int"), ("residual_phi_rate", "double"),
        ("residual_phi_upper", "double"), ("over_masking_rate", "double"), ("over_masking_upper", "double"),
        ("confidence", "double"), ("computed_at", _S),
    ),
)

#: the parse UDF's input for E2B documents held in a table (`jobs.ingest_e2b --table`): one row per
#: document, named by `source_file` (``table:<path>#<id>``); `document` is the XML's bytes (NULL for a
#: NULL cell), `from_text` true when they are the UTF-8 of a string column (whatever encoding the XML
#: declaration names is then void), `received_date` the table's received date for reports without one
TABLE_DOCUMENTS = Layout(
    (("source_file", _S), ("document", "binary"), ("document_sha256", _S), ("from_text", "boolean"),
     ("received_date", _S)),
)

#: job_runs: one row per invocation of a job (appended, never merged: a fresh `invocation_id` never
#: matches). `run_id` is the orchestrator's run (Airflow's run id), shared by every job and retry of it;
#: `attempt` is Airflow's try number (NULL outside Airflow). Counts, durations and versions only, never
#: text: `deid_core.runs.JobRun` is the row, `jobs.run_log` writes it
JOB_RUNS = Layout(
    (
        ("run_id", _S), ("job", _S), ("invocation_id", _S), ("attempt", "int"), ("mode", _S), ("status", _S),
        ("started_at", "timestamp"), ("finished_at", "timestamp"), ("seconds", "double"),
        ("input_count", "bigint"), ("output_count", "bigint"), ("failed_count", "bigint"),
        ("quarantined_by_code", "map<string,bigint>"), ("durations", "map<string,double>"),
        ("versions", "map<string,string>"), ("detail", "map<string,string>"),
    ),
    key=("run_id", "job", "invocation_id"),
)

#: the lineage columns `jobs.deidentify_table` appends to a de-identified narrative table (after the
#: source's own columns): versions that made the row, its outcome ("ok" | "failed") and error code, and
#: the SHA-256 of the row's inputs (an unchanged row under the same versions is not processed again)
NARRATIVE_LINEAGE = Layout(
    (("deid_model_version", _S), ("deid_dictionary_version", _S), ("deid_policy_version", _S),
     ("deid_status", _S), ("deid_error_code", _S), ("deid_input_sha256", _S)),
)
