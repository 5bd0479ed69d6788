"""The narrative table job's declarations, without Spark: every column has one role, labels are categories."""

from __future__ import annotations

import pytest

from deid_core.categories import CATEGORIES
from jobs.deidentify_table import NarrativeTable, TableSpecError, check_columns, parse_structured

COLUMNS = [("site", "string"), ("seq", "int"), ("case_no", "string"), ("narrative", "string"),
           ("onset", "string"), ("region", "string")]


def _spec(**kw: object) -> NarrativeTable:
    base: dict[str, object] = dict(path="/t", keys=("site", "seq"), texts=("narrative",),
                                   structured=(("onset", "DATE"),), case="case_no", passed=("region",))
    base.update(kw)
    return NarrativeTable(**base)  # type: ignore[arg-type]


def test_structured_labels_are_the_projects_categories() -> None:
    assert parse_structured(["onset=DATE", "a=b=NAME"]) == (("onset", "DATE"), ("a=b", "NAME"))
    assert all(parse_structured([f"c={c}"]) for c in CATEGORIES)
    for bad in ("onset=date", "onset=SAFE", "onset=", "onset", "=DATE"):
        with pytest.raises(TableSpecError):
            parse_structured([bad])


def test_a_table_whose_every_column_has_one_role_is_accepted() -> None:
    check_columns(COLUMNS, _spec())
    check_columns(COLUMNS[:2] + COLUMNS[3:], _spec(case="site", passed=("region",), keys=("site", "seq")))


@pytest.mark.parametrize(("spec", "columns", "match"), [
    (_spec(passed=()), COLUMNS, "undeclared columns \\['region'\\]"),
    (_spec(texts=("narrative", "region")), COLUMNS, "declared more than once"),
    (_spec(texts=("nope",)), COLUMNS, "text column 'nope' is not in the source"),
    (_spec(keys=()), COLUMNS, "at least one --key"),
    (_spec(texts=()), COLUMNS, "at least one --text"),
    (_spec(texts=("seq",), keys=("site",), case="case_no"), COLUMNS + [("narrative2", "string")],
     "'seq' is int"),
    (_spec(), COLUMNS + [("deid_status", "string")], "names the job writes itself"),
    (_spec(passed=("region", "__deid_rank")), COLUMNS + [("__deid_rank", "int")], "names the job writes itself"),
    (_spec(case="region", passed=()), COLUMNS, "undeclared columns \\['case_no'\\]"),
])
def test_a_table_that_does_not_fit_is_refused(spec: NarrativeTable, columns: list, match: str) -> None:
    with pytest.raises(TableSpecError, match=match):
        check_columns(columns, spec)
