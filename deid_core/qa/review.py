"""The review file: one JSON line per sampled item, filled in by a pharmacist.

Reviewers mark what the engine got wrong in each item, and `count_item`
turns their marks into per-token counts with the same tokeniser the
evaluation uses, so review rates and benchmark rates mean the same thing.

Marks refer to the ORIGINAL text of an item (a quote or character offsets),
because that is the one text in which both a missed identifier and an
over-masked drug name can be pointed at. The template carries a hash of the
original so that an accidental edit of it (which would shift every offset)
is caught instead of silently mis-counted.

Errors name the file, line, item id and what is wrong, never text content:
the file holds identifiable data and error lines end up in job logs.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import re
import textwrap
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from deid_core.corpus.atomic import atomic_text_writer
from deid_core.qa.items import ReviewItem
from deid_core.qa.stats import clopper_pearson_upper
from deid_core.text.tokenize import tokenize

#: The reviewer's steps in plain words (no JSON), shared with the HTML page.
REVIEW_STEPS: tuple[str, ...] = (
    "Read each item's original and de-identified text side by side; the item id "
    "(shown in grey on the page) finds the item's line in review.jsonl.",
    "Missed PHI: identifying text (a name, date, place, phone number, e-mail, "
    "ID, ...) left in clear in the de-identified version. Mark it in missed_phi.",
    "Over-masking: clinical content (drug, dose, lab value, reaction, time to "
    "onset) that was masked and should not have been. Mark it in over_masked.",
    "A mark is either the exact quote from the ORIGINAL text (it then marks "
    "every occurrence in that item) or the start and end character offsets "
    "in the ORIGINAL text.",
    "Set reviewed to true when you are done with an item, even if you found "
    "nothing, and put your initials in reviewer.",
    "Do not change any other field, the original text in particular: it is "
    "checked against its hash.",
)

REVIEW_INSTRUCTIONS: str = (
    "How to review a QA sample (review.jsonl)\n"
    "\n"
    "review.jsonl has one line per item (one field of one sampled report).\n"
    "Open it in a text editor that keeps UTF-8 and one line per item.\n"
    "\n"
    + "\n".join(
        textwrap.fill(f"{i}. {step}", 76, subsequent_indent="   ") for i, step in enumerate(REVIEW_STEPS, 1)
    )
    + "\n\n"
    "Writing a mark\n"
    "\n"
    '  by quote:    {"quote": "exact text"}\n'
    '  by offsets:  {"start": 120, "end": 128}\n'
    "\n"
    "A quote must appear in the item's original text exactly as written (same\n"
    "case, same spacing) and marks every occurrence of it in that item.\n"
    "Offsets count characters of the original text from 0; end is exclusive.\n"
    "\n"
    "Example of a reviewed line (other keys left as they were):\n"
    '  "reviewed": true, "reviewer": "AB",\n'
    '  "missed_phi": [{"quote": "Jane Roe"}],\n'
    '  "over_masked": [{"start": 40, "end": 49}],\n'
    '  "comment": ""\n'
    "\n"
    "Nothing found in an item: set reviewed to true and leave both lists empty.\n"
)

#: Only ids that look generated (a digit, no spaces) are echoed in errors;
#: anything else may be text a reviewer typed and is shown as "?".
_SAFE_ID = re.compile(r"(?=.*\d)[A-Za-z0-9._:-]{1,64}")


class Mark(BaseModel):
    """A reviewer's mark: a quote of the original, or offsets into it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    quote: str | None = None
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_form(self) -> Mark:
        has_offsets = self.start is not None or self.end is not None
        if self.quote is not None:
            if has_offsets:
                raise PydanticCustomError("mark_both_forms", "give a quote or start and end, not both")
            if not self.quote:
                raise PydanticCustomError("mark_empty_quote", "the quote is empty")
        elif self.start is None or self.end is None:
            raise PydanticCustomError("mark_no_form", "a mark needs a quote, or both start and end")
        elif self.start >= self.end:
            raise PydanticCustomError("mark_order", "start must be less than end")
        return self


class MaskedRecord(BaseModel):
    """A span the engine masked, as written in the template."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    label: str

    @model_validator(mode="after")
    def _ordered(self) -> MaskedRecord:
        if self.start >= self.end:
            raise PydanticCustomError("mark_order", "start must be less than end")
        return self


class ReviewRecord(BaseModel):
    """One line of review.jsonl; unknown keys are refused so that a typo is not a lost mark."""

    model_config = ConfigDict(extra="forbid", strict=True)

    sample_id: str
    item_id: str = Field(min_length=1)
    report_no: int = Field(ge=1)
    case_id: str
    version: str
    field: str
    kind: Literal["text", "structured"]
    label: str | None
    model_version: str
    policy_version: str
    strata: dict[str, str]
    original: str
    original_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    deidentified: str
    masked: list[MaskedRecord]
    reviewed: bool
    reviewer: str
    missed_phi: list[Mark]
    over_masked: list[Mark]
    comment: str


_KNOWN_KEYS = frozenset(ReviewRecord.model_fields) | frozenset(Mark.model_fields) | frozenset(
    MaskedRecord.model_fields
)

#: What each pydantic error type means, in the reviewer's words. Pydantic's
#: own messages (and str(ValidationError)) can quote the input, i.e. PHI.
_ERROR_TEXT = {
    "missing": "missing",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "string_type": "must be text in quotes",
    "list_type": "must be a list [...]",
    "dict_type": "must be an object {...}",
    "model_type": "must be an object {...}",
    "model_attributes_type": "must be an object {...}",
    "literal_error": "is not one of the allowed values",
    "greater_than_equal": "is too small",
    "string_too_short": "must not be empty",
    "string_pattern_mismatch": "has the wrong format",
    "mark_both_forms": "give a quote or start and end, not both",
    "mark_empty_quote": "the quote is empty",
    "mark_no_form": "a mark needs a quote, or both start and end",
    "mark_order": "start must be less than end",
}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def template_record(item: ReviewItem) -> dict[str, Any]:
    """The line a reviewer starts from: the item as shown, plus empty review fields."""
    return {
        "sample_id": item.sample_id,
        "item_id": item.item_id,
        "report_no": item.report_no,
        "case_id": item.case_id,
        "version": item.version,
        "field": item.field,
        "kind": item.kind,
        "label": item.label,
        "model_version": item.model_version,
        "policy_version": item.policy_version,
        "strata": dict(item.strata),
        "original": item.original,
        "original_sha256": sha256_text(item.original),
        "deidentified": item.deidentified,
        "masked": [{"start": s.start, "end": s.end, "label": s.label} for s in item.spans],
        "reviewed": False,
        "reviewer": "",
        "missed_phi": [],
        "over_masked": [],
        "comment": "",
    }


def private_text_writer(path: Path) -> contextlib.AbstractContextManager[IO[str]]:
    """An all-or-nothing writer readable by its owner only (0600): QA files hold original text."""
    return atomic_text_writer(path, mode=0o600)


def write_review_jsonl(items: Iterable[ReviewItem], path: Path) -> int:
    """Write the template, all-or-nothing; returns the number of lines."""
    count = 0
    with private_text_writer(path) as fh:
        for item in items:
            fh.write(json.dumps(template_record(item), ensure_ascii=False))
            fh.write("\n")
            count += 1
    return count


def _safe_id(value: object) -> str:
    return value if isinstance(value, str) and _SAFE_ID.fullmatch(value) else "?"


def _loc_text(loc: tuple[int | str, ...]) -> str:
    """Field path of an error; keys that are not ours are hidden (a reviewer may have typed anything)."""
    return ".".join(str(p) if isinstance(p, int) or p in _KNOWN_KEYS else "?" for p in loc) or "line"


def _schema_errors(exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        loc = tuple(err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden":
            where = _loc_text(loc[:-1])
            key = loc[-1] if loc else ""
            close = difflib.get_close_matches(str(key), sorted(_KNOWN_KEYS), n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            out.append(f"unknown key{hint}" if where == "line" else f"{where}: unknown key{hint}")
        else:
            out.append(f"{_loc_text(loc)}: {_ERROR_TEXT.get(kind, kind)}")
    return out


def find_all(text: str, quote: str) -> list[tuple[int, int]]:
    """Every occurrence of `quote`, overlapping ones included (they may cover different tokens)."""
    found: list[tuple[int, int]] = []
    pos = text.find(quote)
    while pos != -1:
        found.append((pos, pos + len(quote)))
        pos = text.find(quote, pos + 1)
    return found


def mark_intervals(original: str, mark: Mark) -> list[tuple[int, int]]:
    """Where a mark lies in the original: all occurrences of a quote, or its offsets."""
    if mark.quote is not None:
        return find_all(original, mark.quote)
    assert mark.start is not None and mark.end is not None  # guaranteed by Mark's validator
    return [(mark.start, mark.end)]


def _coverage(length: int, intervals: Iterable[tuple[int, int]]) -> bytearray:
    """Per-character flags: a token overlaps the intervals iff any of its characters is flagged."""
    cov = bytearray(length)
    for start, end in intervals:
        start, end = max(0, start), min(length, end)
        if start < end:
            cov[start:end] = b"\x01" * (end - start)
    return cov


def _content_errors(rec: ReviewRecord) -> list[str]:
    """Checks that need the whole record: the hash, and marks/spans against the original."""
    errors: list[str] = []
    n = len(rec.original)
    if sha256_text(rec.original) != rec.original_sha256:
        errors.append("original: does not match original_sha256 (the original text was edited)")
    for i, span in enumerate(rec.masked):
        if span.end > n:
            errors.append(f"masked.{i}: end {span.end} is beyond the original's {n} characters")
    words = _coverage(n, ((t.start, t.end) for t in tokenize(rec.original)))
    for name in ("missed_phi", "over_masked"):
        marks: list[Mark] = getattr(rec, name)
        for i, mark in enumerate(marks):
            intervals = mark_intervals(rec.original, mark)
            if mark.quote is not None and not intervals:
                errors.append(f"{name}.{i}: quote not found in original")
            elif mark.end is not None and mark.end > n:
                errors.append(f"{name}.{i}: end {mark.end} is beyond the original's {n} characters")
            elif not any(1 in words[s:e] for s, e in intervals):
                errors.append(f"{name}.{i}: mark covers no letters or digits, so it counts nothing")
    return errors


def _parse_line(raw: bytes, seen: set[str]) -> tuple[ReviewRecord | None, str, list[str]]:
    """One line: the record if valid, the item id to name in errors, and what is wrong."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, "?", [f"not valid UTF-8 (byte {exc.start})"]
    if not line.strip():
        return None, "?", []
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        # exc.msg is one of json's fixed phrases ("Expecting ',' delimiter"), never the input
        return None, "?", [f"not valid JSON ({exc.msg} at column {exc.colno})"]
    if not isinstance(data, dict):
        return None, "?", ["not a JSON object"]
    raw_id = data.get("item_id")
    item = _safe_id(raw_id)
    if isinstance(raw_id, str):
        if raw_id in seen:
            return None, item, ["item_id repeats an earlier line; this line is ignored"]
        seen.add(raw_id)
    try:
        rec = ReviewRecord.model_validate(data)
    except ValidationError as exc:
        return None, item, _schema_errors(exc)
    problems = _content_errors(rec)
    return (None if problems else rec), item, problems


def read_review_jsonl(path: Path) -> tuple[list[ReviewRecord], list[str]]:
    """Valid records, and one error line per problem ("<file>:<line>: <item id or ?>: <what>").

    A record with any error is left out, so that a half-understood review is
    never counted; a repeated item id keeps the first line and flags the rest.
    """
    path = Path(path)
    records: list[ReviewRecord] = []
    errors: list[str] = []
    seen: set[str] = set()
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):  # BOM from some Windows editors
                raw = raw[3:]
            rec, item, problems = _parse_line(raw, seen)
            errors.extend(f"{path.name}:{lineno}: {item}: {what}" for what in problems)
            if rec is not None:
                records.append(rec)
    return records, errors


@dataclass(frozen=True)
class ItemCounts:
    """Token counts of one reviewed item; additive, so items and samples merge by `+`."""

    tokens: int = 0
    released: int = 0
    masked: int = 0
    missed_phi: int = 0
    over_masked: int = 0

    def __add__(self, other: ItemCounts) -> ItemCounts:
        if not isinstance(other, ItemCounts):
            return NotImplemented
        return ItemCounts(
            tokens=self.tokens + other.tokens,
            released=self.released + other.released,
            masked=self.masked + other.masked,
            missed_phi=self.missed_phi + other.missed_phi,
            over_masked=self.over_masked + other.over_masked,
        )


def count_item(rec: ReviewRecord) -> ItemCounts:
    """Count per token, as the evaluation does.

    A miss can only be a released token and an over-masking only a masked
    one: a missed_phi mark that lands on masked text is not a miss (the
    engine did catch it), and an over_masked mark on clear text is moot.
    Counts of an unreviewed record are counts of nothing checked: the caller
    keeps only records with `reviewed` true.
    """
    text = rec.original
    masked = _coverage(len(text), ((s.start, s.end) for s in rec.masked))
    missed = _coverage(len(text), (iv for m in rec.missed_phi for iv in mark_intervals(text, m)))
    over = _coverage(len(text), (iv for m in rec.over_masked for iv in mark_intervals(text, m)))
    tokens = released = n_masked = n_missed = n_over = 0
    for tok in tokenize(text):
        tokens += 1
        if 1 in masked[tok.start:tok.end]:
            n_masked += 1
            if 1 in over[tok.start:tok.end]:
                n_over += 1
        else:
            released += 1
            if 1 in missed[tok.start:tok.end]:
                n_missed += 1
    return ItemCounts(tokens, released, n_masked, n_missed, n_over)


@dataclass(frozen=True)
class ReviewMetrics:
    """A sample's review outcome: the counts, the rates and their exact upper bounds."""

    items: int
    reviewed_items: int
    complete: bool
    tokens: int
    released: int
    masked: int
    missed_phi: int
    over_masked: int
    #: missed PHI tokens per token reviewed
    residual_phi_rate: float
    residual_phi_upper: float
    #: over-masked tokens per masked token
    over_masking_rate: float
    over_masking_upper: float
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def aggregate(
    counts: Iterable[ItemCounts], items: int, reviewed_items: int, confidence: float = 0.95
) -> ReviewMetrics:
    """Sum reviewed items' counts into rates; an empty denominator gives rate 0 but bound 1 (fail safe)."""
    if items < 0 or not 0 <= reviewed_items <= items:
        raise ValueError(f"need 0 <= reviewed_items <= items, got {reviewed_items} of {items}")
    total = sum(counts, ItemCounts())
    return ReviewMetrics(
        items=items,
        reviewed_items=reviewed_items,
        complete=items > 0 and reviewed_items == items,
        tokens=total.tokens,
        released=total.released,
        masked=total.masked,
        missed_phi=total.missed_phi,
        over_masked=total.over_masked,
        residual_phi_rate=total.missed_phi / total.tokens if total.tokens else 0.0,
        residual_phi_upper=clopper_pearson_upper(total.missed_phi, total.tokens, confidence),
        over_masking_rate=total.over_masked / total.masked if total.masked else 0.0,
        over_masking_upper=clopper_pearson_upper(total.over_masked, total.masked, confidence),
        confidence=confidence,
    )
