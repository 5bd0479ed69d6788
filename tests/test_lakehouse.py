"""The table layouts and field keys of `deid_core.lakehouse`, without Spark."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deid_core.lakehouse import (
    BRONZE,
    FIELD_KINDS,
    KIND_STRUCTURED,
    KIND_TEXT,
    PARSED,
    Layout,
    field_key,
    split_field_key,
)


@pytest.mark.parametrize(("kind", "name", "key"), [
    (KIND_TEXT, "narrative", "text:narrative"),
    (KIND_STRUCTURED, "patient.birth_date", "structured:patient.birth_date"),
    (KIND_STRUCTURED, "reporter[0].family_name", "structured:reporter[0].family_name"),
])
def test_field_key_round_trip(kind: str, name: str, key: str) -> None:
    assert field_key(kind, name) == key
    assert split_field_key(key) == (kind, name)


@given(kind=st.sampled_from(FIELD_KINDS), name=st.text())
def test_any_name_survives_the_round_trip(kind: str, name: str) -> None:
    assert split_field_key(field_key(kind, name)) == (kind, name)


def test_a_name_may_hold_colons() -> None:
    key = field_key(KIND_TEXT, "drug[0]:dose:text")
    assert key == "text:drug[0]:dose:text"
    assert split_field_key(key) == (KIND_TEXT, "drug[0]:dose:text")
    assert split_field_key(field_key(KIND_STRUCTURED, ":")) == (KIND_STRUCTURED, ":")
    assert split_field_key(field_key(KIND_TEXT, "")) == (KIND_TEXT, "")


@pytest.mark.parametrize("kind", ["", "Text", "narrative", "text ", "struct", "text:x"])
def test_an_unknown_kind_is_rejected(kind: str) -> None:
    with pytest.raises(ValueError, match="unknown field kind"):
        field_key(kind, "narrative")


@pytest.mark.parametrize("key", ["other:narrative", "Text:narrative", ":narrative", " text:narrative"])
def test_a_key_of_an_unknown_kind_is_rejected(key: str) -> None:
    with pytest.raises(ValueError, match="unknown field kind"):
        split_field_key(key)


@pytest.mark.parametrize("key", ["", "narrative", "text"])
def test_a_string_without_a_kind_is_not_a_key(key: str) -> None:
    with pytest.raises(ValueError, match="not a field key"):
        split_field_key(key)


def test_a_layout_names_its_columns_and_ddl_once() -> None:
    layout = Layout((("case_id", "string"), ("n", "int")), key=("case_id",))
    assert layout.names == ("case_id", "n")
    assert layout.schema == "case_id string, n int"
    assert layout.schema is layout.schema  # one string, shared by whoever declares it


def test_a_layout_refuses_duplicates_and_a_key_outside_it() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        Layout((("a", "string"), ("a", "int")))
    with pytest.raises(ValueError, match="key"):
        Layout((("a", "string"),), key=("b",))


def test_parsed_rows_carry_bronze_with_the_same_types() -> None:
    parsed = dict(PARSED.columns)
    assert all(parsed[name] == typ for name, typ in BRONZE.columns)
    assert set(PARSED.names) - set(BRONZE.names) == {"row_kind", "error_code", "reason"}

