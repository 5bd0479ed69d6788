"""The committed length table and the lengths the generator draws from it.

The scale run's cost depends on how long the synthetic texts are, so the
table must be what the shared data says (re-derived here when it is
present), hold numbers only, and the plan must be deterministic, follow the
table and put one huge narrative in every window of `huge_every` reports.
Fitted narratives keep the generator's promise of exact spans.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from deid_core.synthetic import generate_one
from deid_core.synthetic.lengths import (
    COMMENT,
    NARRATIVE,
    QUANTILES,
    TABLE_PATH,
    LengthPlan,
    LengthTable,
    cut_point,
    derive_table,
    dumps_table,
    fit_plain,
    load_table,
)
from deid_core.synthetic.phi import faker_for

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.shared_data
def test_committed_table_is_what_the_shared_data_gives(shared_data: Path) -> None:
    derived = dumps_table(derive_table(shared_data))
    assert TABLE_PATH.read_text(encoding="utf-8") == derived, (
        "deid_core/synthetic/lengths.json is stale: run `python -m deid_core.synthetic.lengths`")


def test_committed_table_holds_numbers_only() -> None:
    table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    assert {NARRATIVE, COMMENT} <= set(table["kinds"])
    for name, row in table["kinds"].items():
        assert set(row) == {"sources", "n", "mean", "max", "q"}, name
        assert all(isinstance(s, str) and s.replace(".", "").replace("_", "").isalnum() for s in row["sources"])
        assert len(row["q"]) == QUANTILES + 1 and all(type(x) is int for x in row["q"])
        assert row["q"] == sorted(row["q"]) and row["q"][-1] == row["max"] and row["n"] > 0
    assert table["kinds"][NARRATIVE]["n"] > 5000  # VAERS + PhysioNet + E2B


def test_sampling_follows_the_grid() -> None:
    t = LengthTable.from_dict({"kinds": {"k": {"q": list(range(0, 2 * QUANTILES + 1, 2))}}})
    assert t.sample("k", 0.0) == 1  # at least one character
    assert t.sample("k", 0.5) == QUANTILES
    assert t.sample("k", 0.99999999) <= 2 * QUANTILES
    with pytest.raises(ValueError):
        LengthTable.from_dict({"kinds": {"k": {"q": [3, 2, 1]}}})


def test_plan_is_deterministic_and_follows_the_table() -> None:
    plan = LengthPlan(11, long_share=0.0, huge_every=0)
    again = LengthPlan(11, long_share=0.0, huge_every=0)
    lengths = [plan.for_report(i).narrative for i in range(3000)]
    assert lengths == [again.for_report(i).narrative for i in range(3000)]
    assert lengths != [LengthPlan(12, long_share=0.0, huge_every=0).for_report(i).narrative for i in range(3000)]
    q = load_table().grids[NARRATIVE]
    assert 0.8 * q[500] <= statistics.median(lengths) <= 1.2 * q[500]
    assert max(lengths) <= q[-1]
    comments = [plan.for_report(i).reporter_comment for i in range(3000)]
    median_comment = load_table().grids[COMMENT][500]
    assert 0.7 * median_comment <= statistics.median(comments) <= 1.3 * median_comment


def test_one_huge_narrative_in_every_window_and_a_long_tail() -> None:
    plan = LengthPlan(5, huge_every=1000, huge_length=300_000, long_share=0.0)
    huge = [i for i in range(5000) if plan.for_report(i).narrative == 300_000]
    assert len(huge) == 5 and all(b - a == 1000 for a, b in zip(huge, huge[1:]))
    tail = LengthPlan(5, long_share=1.0, huge_every=0)
    lengths = [tail.for_report(i).narrative for i in range(200)]
    assert all(100_000 <= n <= 1_000_000 for n in lengths)
    assert min(lengths) < 200_000 and max(lengths) > 500_000  # log-uniform over the range
    default = LengthPlan(5)
    assert sum(default.is_huge(i) for i in range(20_000)) == 2


def test_cut_point_never_splits_a_span() -> None:
    text = "alpha beta Dr Jane Smith gamma"
    name = (11, 24)
    assert cut_point(text, 100) == len(text)
    assert cut_point(text, 20, [name]) == 10  # would fall inside the name: cut before it
    assert cut_point(text, 26, [name]) == 24
    assert cut_point("unbreakable", 3) == len("unbreakable")  # the first word stays whole


def test_fit_plain() -> None:
    assert fit_plain("one two three", 7) == "one two"
    long = fit_plain("MRN 1234.", 40)
    assert len(long) <= 40 and long.startswith("MRN 1234. MRN 1234.") and len(long) > 30
    with pytest.raises(ValueError):
        fit_plain("x", 0)


def _check_spans(doc) -> None:  # type: ignore[no-untyped-def]
    text = doc.text
    last_end = 0
    for start, end, _label in doc.spans:
        assert 0 <= last_end <= start < end <= len(text)
        assert text[start:end] == text[start:end].strip()
        last_end = end
    assert len(doc.meta["subtypes"]) == len(doc.spans)
    assert all(c["end"] <= len(text) for c in doc.meta["clinical"])


@pytest.mark.parametrize("length", [5, 60, 300, 2_000, 25_000])
def test_fitted_narratives_keep_exact_spans(length: int) -> None:
    for index in range(12):
        doc = generate_one(3, index, length)
        assert len(doc.text) <= max(length, len(doc.text.split()[0]))
        if length >= 300:
            assert len(doc.text) >= 0.9 * length
        assert doc.text == doc.text.strip()
        _check_spans(doc)
        assert doc.meta["fitted"]["target"] == length


def test_no_length_means_the_old_output() -> None:
    for index in range(8):
        a, b = generate_one(4, index), generate_one(4, index, None)
        assert a.text == b.text and a.spans == b.spans and "fitted" not in a.meta


def test_a_megabyte_narrative_has_phi_all_along() -> None:
    doc = generate_one(9, 17, 1_000_000)
    assert 990_000 <= len(doc.text) <= 1_000_000
    assert doc.spans[-1][1] > 900_000 and len(doc.spans) > 5_000
    _check_spans(doc)


def test_italian_cities_do_not_depend_on_the_hash_seed() -> None:
    """Faker builds its it_IT city list from a set; the generator sorts it (else output varies per process)."""
    [cities] = [p.cities for p in faker_for("it_IT").providers if isinstance(getattr(p, "cities", None), list)]
    assert cities == sorted(cities)
    code = ("import hashlib; from deid_core.e2b.synthetic import synthetic_reports; "
            "from deid_core.synthetic.lengths import LengthPlan; "
            "rs = synthetic_reports(120, 7, lengths=LengthPlan(7)); "
            "print(hashlib.sha256('|'.join(r.narrative.text + r.sender_comment + r.case.reporter.city "
            "for r in rs).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip() for seed in ("1", "2")}
    assert len(digests) == 1
    from deid_core.e2b.synthetic import synthetic_reports

    here = hashlib.sha256("|".join(r.narrative.text + r.sender_comment + r.case.reporter.city
                                   for r in synthetic_reports(120, 7, lengths=LengthPlan(7))).encode()).hexdigest()
    assert digests == {here}
