"""Review JSONL: template, reading back with every error path, per-token counting, aggregation."""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deid_core.qa.items import MaskedSpan, ReviewItem, SampleInfo
from deid_core.qa.review import (
    REVIEW_INSTRUCTIONS,
    ItemCounts,
    Mark,
    ReviewRecord,
    aggregate,
    count_item,
    read_review_jsonl,
    template_record,
    write_review_jsonl,
)
from deid_core.qa.stats import clopper_pearson_upper

from .conftest import make_item

PHI = "Jane Roe"  # the identifier the error tests try to leak

TEMPLATE_KEYS = [
    "sample_id", "item_id", "report_no", "case_id", "version", "field", "kind", "label", "model_version",
    "policy_version", "strata", "original", "original_sha256", "deidentified", "masked", "reviewed", "reviewer",
    "missed_phi", "over_masked", "comment",
]


def write_lines(path: Path, lines: list[Any]) -> Path:
    """Dicts become JSON lines, strings are written as they are (to test broken lines)."""
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write((json.dumps(line, ensure_ascii=False) if isinstance(line, dict) else line) + "\n")
    return path


def record(text: str, masked: list[tuple[str, str]], **review: Any) -> dict[str, Any]:
    """A template line for `text` with (quote, label) masked, then the reviewer's fields applied."""
    line = template_record(make_item(1, 1, "narrative", text, masked))
    line.update(review)
    return line


def counts_of(text: str, masked: list[tuple[str, str]], **review: Any) -> ItemCounts:
    return count_item(ReviewRecord.model_validate(record(text, masked, reviewed=True, **review)))


def read_one(tmp_path: Path, line: Any) -> tuple[list[ReviewRecord], list[str]]:
    return read_review_jsonl(write_lines(tmp_path / "review.jsonl", [line]))


# ---- template and writing ----------------------------------------------------------------------


def test_template_record_has_the_item_and_empty_review_fields(
    sample: tuple[SampleInfo, list[ReviewItem]],
) -> None:
    item = sample[1][0]
    line = template_record(item)
    assert list(line) == TEMPLATE_KEYS
    assert line["original"] == item.original
    assert line["original_sha256"] == hashlib.sha256(item.original.encode("utf-8")).hexdigest()
    assert line["masked"] == [{"start": s.start, "end": s.end, "label": s.label} for s in item.spans]
    assert line["strata"] == item.strata
    assert (line["reviewed"], line["reviewer"], line["missed_phi"], line["over_masked"], line["comment"]) == (
        False, "", [], [], "",
    )
    assert "instructions" not in line


def test_instructions_explain_both_mark_forms_and_both_lists() -> None:
    words = " ".join(REVIEW_INSTRUCTIONS.split())  # the text is wrapped for a README
    for needle in ('{"quote":', '{"start":', "missed_phi", "over_masked", "reviewed", "ORIGINAL",
                   "drug, dose, lab value, reaction, time to onset", "even if"):
        assert needle in words


def test_write_is_private_utf8_one_line_per_item(
    tmp_path: Path, sample: tuple[SampleInfo, list[ReviewItem]],
) -> None:
    polish = make_item(4, 1, "narrative", "Seen in Łódź by Dr Ęła.", [("Łódź", "LOCATION")])
    items = sample[1] + [polish]
    path = tmp_path / "qa" / "review.jsonl"
    assert write_review_jsonl(items, path) == len(items)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = path.read_text(encoding="utf-8")
    assert "Łódź" in raw  # ensure_ascii=False: reviewers see the text, not \u escapes
    lines = raw.splitlines()
    assert [json.loads(x)["item_id"] for x in lines] == [i.item_id for i in items]
    assert list(tmp_path.joinpath("qa").iterdir()) == [path]


def test_write_is_all_or_nothing(tmp_path: Path, sample: tuple[SampleInfo, list[ReviewItem]]) -> None:
    path = tmp_path / "review.jsonl"
    write_review_jsonl(sample[1][:2], path)
    before = path.read_bytes()

    def failing() -> Iterator[ReviewItem]:
        yield sample[1][0]
        raise RuntimeError("source table went away")

    with pytest.raises(RuntimeError):
        write_review_jsonl(failing(), path)
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_round_trip_template_edit_read_count(
    tmp_path: Path, sample: tuple[SampleInfo, list[ReviewItem]],
) -> None:
    items = sample[1]
    path = tmp_path / "review.jsonl"
    write_review_jsonl(items, path)
    records, errors = read_review_jsonl(path)
    assert errors == []
    assert [r.item_id for r in records] == [i.item_id for i in items]
    assert not any(r.reviewed for r in records)

    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    first = lines[0]  # report 1 narrative: "... amoxicillin 500 mg ... within 3 days ..."
    first.update(
        reviewed=True, reviewer="AB",
        # the reviewer counts the title "Dr" left in clear before the masked name as a miss;
        # "3 days" is a time to onset that was masked; "amoxicillin" was not masked, so that
        # over_masked mark is moot.
        missed_phi=[{"quote": "Dr"}],
        over_masked=[{"quote": "3 days"}, {"quote": "amoxicillin"}],
    )
    for line in lines[1:]:
        line.update(reviewed=True, reviewer="AB")
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")

    records, errors = read_review_jsonl(path)
    assert errors == []
    assert all(r.reviewed for r in records)
    assert records[0].missed_phi == [Mark(quote="Dr")]
    c = count_item(records[0])
    assert (c.missed_phi, c.over_masked) == (1, 2)  # "3", "days"
    assert c.tokens == c.released + c.masked
    total = sum((count_item(r) for r in records), ItemCounts())
    m = aggregate([count_item(r) for r in records], items=len(items), reviewed_items=len(records))
    assert m.complete
    assert (m.tokens, m.masked, m.missed_phi, m.over_masked) == (total.tokens, total.masked, 1, 2)


# ---- counting --------------------------------------------------------------------------------


def test_tokens_masked_and_released() -> None:
    c = counts_of("Seen by Jane Roe on 12-JAN-2026.", [("Jane Roe", "NAME"), ("12-JAN-2026", "DATE")])
    # Seen by | Jane Roe | on | 12 JAN 2026
    assert c == ItemCounts(tokens=8, released=3, masked=5, missed_phi=0, over_masked=0)


def test_quote_marks_every_occurrence() -> None:
    text = "Roe called. Later Roe called again about Roe's rash."
    c = counts_of(text, [], missed_phi=[{"quote": "Roe"}])
    assert c.missed_phi == 3


def test_quote_inside_a_longer_word_marks_that_word() -> None:
    c = counts_of("Mrs Roebuck was seen.", [], missed_phi=[{"quote": "Roe"}])
    assert c.missed_phi == 1


def test_offset_marks_count_each_overlapped_token_once() -> None:
    text = "Visited by Jane Ann Roe today."
    start = text.index("Jane")
    c = counts_of(
        text, [],
        missed_phi=[{"start": start, "end": start + 8}, {"start": start + 5, "end": text.index(" today")},
                    {"quote": "Ann"}],
    )
    assert c.missed_phi == 3  # Jane, Ann, Roe: overlapping marks do not double-count


def test_missed_mark_on_masked_text_is_not_a_miss() -> None:
    c = counts_of("Seen by Jane Roe.", [("Jane", "NAME")], missed_phi=[{"quote": "Jane Roe"}])
    assert (c.masked, c.missed_phi) == (1, 1)  # only "Roe" was left in clear


def test_over_masked_mark_on_clear_text_does_not_count() -> None:
    c = counts_of("Aspirin 100 mg on 3 May.", [("3 May", "DATE")], over_masked=[{"quote": "Aspirin 100 mg"}])
    assert c.over_masked == 0
    c = counts_of("Aspirin 100 mg on 3 May.", [("Aspirin 100", "NAME")], over_masked=[{"quote": "Aspirin 100 mg"}])
    assert (c.masked, c.over_masked) == (2, 2)


def test_tokens_crossing_span_and_mark_edges() -> None:
    # The engine masked "ohn Do" only: tokens "John" and "Doe" overlap the span, so both count as masked.
    text = "John Doe took 5mg."
    item = make_item(1, 1, "narrative", text, [])
    line = template_record(item)
    line.update(masked=[{"start": 1, "end": 7, "label": "NAME"}], reviewed=True,
                over_masked=[{"start": 7, "end": 9}],   # "e " : touches "Doe" only
                missed_phi=[{"start": 15, "end": 16}])  # "m" inside the released "5mg"
    c = count_item(ReviewRecord.model_validate(line))
    assert c == ItemCounts(tokens=4, released=2, masked=2, missed_phi=1, over_masked=1)


def test_adjacent_but_not_overlapping_does_not_count() -> None:
    text = "Roe, 45"
    c = counts_of(text, [], missed_phi=[{"start": 3, "end": 5}])  # ", " between the tokens
    assert c == ItemCounts(tokens=2, released=2, masked=0, missed_phi=0, over_masked=0)


def test_item_counts_add() -> None:
    a = ItemCounts(10, 7, 3, 1, 2)
    b = ItemCounts(5, 5, 0, 0, 0)
    assert a + b == ItemCounts(15, 12, 3, 1, 2)
    assert sum([a, b], ItemCounts()) == a + b


# ---- aggregation -----------------------------------------------------------------------------


def test_aggregate_rates_and_bounds() -> None:
    m = aggregate([ItemCounts(600, 550, 50, 1, 5), ItemCounts(400, 390, 10, 0, 1)], items=3, reviewed_items=2,
                  confidence=0.9)
    assert not m.complete
    assert (m.tokens, m.released, m.masked, m.missed_phi, m.over_masked) == (1000, 940, 60, 1, 6)
    assert m.residual_phi_rate == pytest.approx(1 / 1000)
    assert m.residual_phi_upper == pytest.approx(clopper_pearson_upper(1, 1000, 0.9))
    assert m.over_masking_rate == pytest.approx(6 / 60)
    assert m.over_masking_upper == pytest.approx(clopper_pearson_upper(6, 60, 0.9))
    d = m.as_dict()
    assert d["confidence"] == 0.9 and d["complete"] is False and d["tokens"] == 1000
    assert set(d) == {
        "items", "reviewed_items", "complete", "tokens", "released", "masked", "missed_phi", "over_masked",
        "residual_phi_rate", "residual_phi_upper", "over_masking_rate", "over_masking_upper", "confidence",
    }


def test_aggregate_with_empty_denominators_fails_safe() -> None:
    m = aggregate([], items=0, reviewed_items=0, confidence=0.95)
    assert not m.complete  # an empty sample is not a complete review
    assert (m.residual_phi_rate, m.residual_phi_upper) == (0.0, 1.0)
    assert (m.over_masking_rate, m.over_masking_upper) == (0.0, 1.0)
    m = aggregate([ItemCounts(10, 10, 0, 0, 0)], items=1, reviewed_items=1, confidence=0.95)
    assert m.complete
    assert (m.over_masking_rate, m.over_masking_upper) == (0.0, 1.0)
    assert m.residual_phi_upper < 1.0


@pytest.mark.parametrize(("items", "reviewed"), [(2, 3), (-1, 0), (2, -1)])
def test_aggregate_refuses_impossible_item_counts(items: int, reviewed: int) -> None:
    with pytest.raises(ValueError):
        aggregate([], items=items, reviewed_items=reviewed)


# ---- reading: errors -------------------------------------------------------------------------

TEXT = f"Seen by {PHI} on 12-JAN-2026 after aspirin 100 mg."


def good(**review: Any) -> dict[str, Any]:
    return record(TEXT, [(PHI, "NAME"), ("12-JAN-2026", "DATE")], **review)


def test_a_valid_line_reads_without_errors(tmp_path: Path) -> None:
    records, errors = read_one(tmp_path, good(reviewed=True, missed_phi=[{"quote": "aspirin"}]))
    assert errors == [] and len(records) == 1


def edited(field: str, value: Any) -> dict[str, Any]:
    line = good()
    line[field] = value
    return line


def without(field: str) -> dict[str, Any]:
    line = good()
    del line[field]
    return line


def with_extra(key: str) -> dict[str, Any]:
    line = good()
    line[key] = PHI
    return line


CASES: list[tuple[str, Any, str]] = [
    ("bad json", '{"item_id": "r001-f01", "original": "Jane Roe", ', "not valid JSON"),
    ("not an object", json.dumps([PHI]), "not a JSON object"),
    ("missing field", without("reviewed"), "reviewed: missing"),
    ("typo key", with_extra("missed_pih"), "unknown key (did you mean 'missed_phi'?)"),
    ("phi as key", with_extra(PHI), "unknown key"),
    ("reviewed not bool", edited("reviewed", PHI), "reviewed: must be true or false"),
    ("reviewed as string true", edited("reviewed", "true"), "reviewed: must be true or false"),
    ("report_no as text", edited("report_no", PHI), "report_no: must be a whole number"),
    ("bad kind", edited("kind", PHI), "kind: is not one of the allowed values"),
    ("strata value", edited("strata", {PHI: 3}), "strata.?: must be text in quotes"),
    ("marks not a list", edited("missed_phi", PHI), "missed_phi: must be a list"),
    ("mark as bare string", edited("missed_phi", [PHI]), "missed_phi.0: must be an object"),
    ("mark both forms", edited("missed_phi", [{"quote": PHI, "start": 8, "end": 16}]), "not both"),
    ("mark no form", edited("over_masked", [{"end": 4}]), "over_masked.0: a mark needs a quote"),
    ("mark empty quote", edited("missed_phi", [{"quote": ""}]), "missed_phi.0: the quote is empty"),
    ("mark reversed", edited("missed_phi", [{"start": 16, "end": 8}]), "start must be less than end"),
    ("mark negative", edited("missed_phi", [{"start": -1, "end": 8}]), "missed_phi.0.start: is too small"),
    ("mark float offsets", edited("missed_phi", [{"start": 8.0, "end": 16}]), "must be a whole number"),
    ("mark typo key", edited("missed_phi", [{"qoute": PHI}]), "missed_phi.0: unknown key (did you mean 'quote'?)"),
    ("mark phi key", edited("over_masked", [{PHI: 1, "start": 0, "end": 4}]), "over_masked.0: unknown key"),
    ("mark beyond text", edited("missed_phi", [{"start": 8, "end": 999}]),
     f"missed_phi.0: end 999 is beyond the original's {len(TEXT)} characters"),
    ("quote not found", edited("missed_phi", [{"quote": PHI.upper()}]), "missed_phi.0: quote not found"),
    ("quote of separators", edited("missed_phi", [{"quote": "-"}]), "covers no letters or digits"),
    ("offsets on separators", edited("over_masked", [{"start": 7, "end": 8}]), "covers no letters or digits"),
    ("original edited", edited("original", TEXT.replace("Seen", "seen")), "original: does not match"),
    ("hash malformed", edited("original_sha256", PHI), "original_sha256: has the wrong format"),
    ("masked beyond text", edited("masked", [{"start": 0, "end": 999, "label": "NAME"}]),
     "masked.0: end 999 is beyond"),
    ("masked reversed", edited("masked", [{"start": 9, "end": 2, "label": "NAME"}]), "masked.0: start must"),
    ("item id missing", without("item_id"), "item_id: missing"),
]


@pytest.mark.parametrize(("name", "line", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_bad_line_is_reported_and_left_out(tmp_path: Path, name: str, line: Any, expected: str) -> None:
    records, errors = read_one(tmp_path, line)
    assert records == []
    assert errors, name
    assert any(expected in e for e in errors), errors
    for e in errors:
        assert e.startswith("review.jsonl:1: "), e
        assert PHI not in e and PHI.upper() not in e and "Jane" not in e, e
        if isinstance(line, dict) and "item_id" in line:
            assert e.startswith("review.jsonl:1: r001-f01: "), e


def _renumbered(i: int, line: Any) -> Any:
    """A distinct item id per line, so that each line shows its own error rather than a duplicate."""
    if isinstance(line, dict) and "item_id" in line:
        return {**line, "item_id": f"r{i:03d}-f01"}
    return line


def test_errors_never_echo_text_from_anywhere_in_the_file(tmp_path: Path) -> None:
    """Everything bad at once, PHI in every place a reviewer could put it: no error may quote it."""
    phi_id = good()
    phi_id["item_id"] = PHI  # not a generated id: named "?" instead
    phi_id["reviewed"] = "yes"
    lines: list[Any] = [_renumbered(i, case[1]) for i, case in enumerate(CASES, 1)] + [
        phi_id,
        f'{{"item_id": "{PHI}", "note": "{PHI}" ',
        b"\xff\xfe" + PHI.encode(),
    ]
    path = tmp_path / "review.jsonl"
    with path.open("wb") as fh:
        for line in lines:
            data = line if isinstance(line, bytes) else (
                json.dumps(line, ensure_ascii=False) if isinstance(line, dict) else line
            ).encode("utf-8")
            fh.write(data + b"\n")
    records, errors = read_review_jsonl(path)
    assert records == []
    assert len(errors) >= len(lines)
    for word in ("Jane", "Roe", "JANE", "aspirin", "Seen"):
        assert not any(word in e for e in errors), word
    assert f"review.jsonl:{len(CASES) + 1}: ?: reviewed: must be true or false" in errors
    assert any(e.startswith(f"review.jsonl:{len(lines)}: ?: not valid UTF-8") for e in errors)


def test_duplicate_item_id_keeps_the_first_line(tmp_path: Path) -> None:
    first = good(reviewed=True, reviewer="AB")
    second = good(reviewed=True, reviewer="CD", missed_phi=[{"quote": "aspirin"}])
    records, errors = read_review_jsonl(write_lines(tmp_path / "review.jsonl", [first, second]))
    assert [r.reviewer for r in records] == ["AB"]
    assert errors == ["review.jsonl:2: r001-f01: item_id repeats an earlier line; this line is ignored"]


def test_good_lines_survive_bad_neighbours_and_blank_lines(tmp_path: Path) -> None:
    other = record("Called back on 05/02/2026.", [("05/02/2026", "DATE")])
    other["item_id"] = "r001-f02"
    path = write_lines(tmp_path / "review.jsonl", [good(), "", "{oops", "   ", other])
    records, errors = read_review_jsonl(path)
    assert [r.item_id for r in records] == ["r001-f01", "r001-f02"]
    assert len(errors) == 1 and errors[0].startswith("review.jsonl:3: ?: not valid JSON")


def test_byte_order_mark_from_windows_editors_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "review.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(good()).encode("utf-8") + b"\n")
    records, errors = read_review_jsonl(path)
    assert errors == [] and len(records) == 1


def test_several_problems_of_one_line_are_all_reported(tmp_path: Path) -> None:
    line = good(missed_phi=[{"quote": "nowhere"}, {"start": 0, "end": 500}])
    line["original"] = line["original"] + " "
    _, errors = read_one(tmp_path, line)
    assert len(errors) == 3
    assert [e.split(": ", 2)[2].split(":")[0] for e in errors] == ["original", "missed_phi.0", "missed_phi.1"]
