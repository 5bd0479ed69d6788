"""Tests for the optional WHODrug reader.

Fixtures under tests/fixtures/whodrug are tiny, hand-made files in the
official layouts with fictitious codes; the names are ordinary drug words,
not licensed release content and not personal data.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deid_core.dictionaries.licensed_common import LicensedFormatError, LicensedSource
from deid_core.dictionaries.meddra import read_meddra_terms
from deid_core.dictionaries.whodrug import describe_whodrug, read_whodrug_names
from tests.dictionaries.safe_errors import assert_safe_error as _assert_safe_error

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WHODRUG = FIXTURES / "whodrug"

B3_NAMES = [
    "PARACETAMOL",
    "FEBRINOL",
    "IBUPROFEN",
    "IBUPROFEN LYSINE",
    "DOLOREX JUNIOR",
    "METHYLDOPA",
    "CODEINE PHOSPHATE;PARACETAMOL",
]
C3_NAMES = ["Paracetamol", "Febrinol", "Ibuprofen", "Dolorex Junior", "Methyldopa"]
CSV_NAMES = ["Paracetamol", "Ibuprofen, lysine salt", "Amoxicillin", "Ondansetron"]
LINES_NAMES = ["Paracetamol", "Omeprazole", "Metformin", "Acetylsalicylic acid"]

# Same layout as the fixtures: 30-char B3 block; 1742-char C3 record.
B3_BLOCK = "000200010014N  001      01 854"


def _c3_record(mpid: str, drug_code: str, name: str, name_width: int = 1500) -> str:
    """A C3 (name_width=1500) or pre-2017 C-format (80) MP.txt record."""
    head = mpid.ljust(10) + " " * 35 + drug_code + "0000000001" * 2 + "Y"
    tail = "500 mg tablets".ljust(30) + " " * 46 + "FRA".ljust(10) + "0".ljust(63)
    tail += "1985123120170907"  # create date, date changed
    return head + name.ljust(name_width) + tail


@pytest.mark.parametrize(
    ("path", "fmt", "expected"),
    [
        (WHODRUG / "b3" / "DD.txt", "b3", B3_NAMES),
        (WHODRUG / "c3" / "MP.txt", "c3", C3_NAMES),
        (WHODRUG / "export.csv", "csv", CSV_NAMES),
        (WHODRUG / "names.txt", "lines", LINES_NAMES),
    ],
)
def test_whodrug_explicit_formats(path: Path, fmt: str, expected: list[str]) -> None:
    assert read_whodrug_names(path, fmt=fmt) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (WHODRUG / "b3" / "DD.txt", B3_NAMES),
        (WHODRUG / "c3" / "MP.txt", C3_NAMES),
        (WHODRUG / "export.csv", CSV_NAMES),
        (WHODRUG / "names.txt", LINES_NAMES),
    ],
)
def test_whodrug_auto_detects_from_file_name(path: Path, expected: list[str]) -> None:
    assert read_whodrug_names(path) == expected


def test_whodrug_c3_excludes_name_specifier_and_trailing_fields() -> None:
    names = read_whodrug_names(WHODRUG / "c3" / "MP.txt")
    assert "Febrinol" in names
    assert not any("500 mg" in name or "FRA" in name for name in names)


@pytest.mark.parametrize(
    ("source", "new_name", "expected"),
    [
        (WHODRUG / "b3" / "DD.txt", "whodrug_extract.txt", B3_NAMES),
        (WHODRUG / "c3" / "MP.txt", "products.dat", C3_NAMES),
    ],
)
def test_whodrug_auto_detects_from_content(
    tmp_path: Path, source: Path, new_name: str, expected: list[str]
) -> None:
    target = tmp_path / new_name
    shutil.copy(source, target)
    assert read_whodrug_names(target) == expected


def test_whodrug_auto_falls_back_to_lines(tmp_path: Path) -> None:
    path = tmp_path / "drugs.lst"
    path.write_text("Ondansetron\nMetoclopramide\n")
    assert read_whodrug_names(path) == ["Ondansetron", "Metoclopramide"]


def test_whodrug_pre_2017_c_format_80_wide_name(tmp_path: Path) -> None:
    path = tmp_path / "MP.txt"
    path.write_text(_c3_record("7", "00020001001", "Febrinol Forte", name_width=80) + "\n")
    assert read_whodrug_names(path) == ["Febrinol Forte"]


@pytest.mark.parametrize(
    ("file_name", "text"),
    [
        ("export.tsv", "id\tdrug_name\n1\tParacetamol\n2\tIbuprofen\n"),
        ("export.csv", "id;DRUG NAME;route\n1;Paracetamol;oral\n2;Ibuprofen;oral\n"),
        ("export.csv", "\ufeffDrug-Name|id\nParacetamol|1\nIbuprofen|2\n"),
    ],
)
def test_whodrug_csv_delimiters_and_header_spellings(
    tmp_path: Path, file_name: str, text: str
) -> None:
    path = tmp_path / file_name
    path.write_bytes(text.encode("utf-8"))
    assert read_whodrug_names(path) == ["Paracetamol", "Ibuprofen"]


def test_byte_order_mark_dropped_with_explicit_encoding(tmp_path: Path) -> None:
    (tmp_path / "pt.asc").write_bytes("\ufeff10090301$Headache$$10090001$\n".encode())
    assert read_meddra_terms(tmp_path, levels=["pt"], encoding="utf-8") == ["Headache"]
    path = tmp_path / "export.csv"
    path.write_bytes("\ufeffDrug Name,id\nParacetamol,1\n".encode())
    assert read_whodrug_names(path, encoding="utf-8") == ["Paracetamol"]


def test_whodrug_csv_without_drug_name_column(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("\nid,substance\n1,Paracetamol\n")
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path)
    _assert_safe_error(err, "export.csv", 2, "substance")


def test_whodrug_csv_short_row(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text('id,route,drug_name\n1,oral,Paracetamol\n2,"Smith, John"\n')
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path)
    _assert_safe_error(err, "export.csv", 3, "Smith", "John")


def test_whodrug_csv_empty_name_cell(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("\n\nid,drug_name\n1,Paracetamol\n2,Ibuprofen\nJaneDoe,  \n")
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path)
    _assert_safe_error(err, "export.csv", 6, "JaneDoe")


def test_whodrug_csv_line_numbers_count_multiline_fields(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text('id,drug_name,note\n1,Paracetamol,"two\nlines"\n2,,x\n')
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path)
    _assert_safe_error(err, "export.csv", 4)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("ABCDEF010014N  001      01 854SECRETNAME", "no drug code"),
        (B3_BLOCK, "no drug name"),
        (B3_BLOCK[:20], "no drug name"),
    ],
)
def test_whodrug_b3_malformed(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "DD.txt"
    path.write_text(f"{B3_BLOCK}PARACETAMOL\n\n{line}\n")
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path)
    _assert_safe_error(err, "DD.txt", 3, "SECRETNAME", "ABCDEF")
    assert problem in str(err.value)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (_c3_record("MPSECRET", "00020001001", "Paracetamol"), "not numeric"),
        (_c3_record("12", "0002XX01001", "Paracetamol"), "no drug code"),
        (_c3_record("12", "00020001001", ""), "empty"),
    ],
)
def test_whodrug_c3_malformed(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "MP.txt"
    path.write_text(_c3_record("1", "00020001001", "Paracetamol") + "\n" + line + "\n")
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path)
    _assert_safe_error(err, "MP.txt", 2, "SECRET", "500 mg", "0002XX")
    assert problem in str(err.value)


def test_whodrug_cp1252_fallback_and_explicit_encoding(tmp_path: Path) -> None:
    path = tmp_path / "names.txt"
    path.write_bytes("Caféine\nSérum physiologique\nŒstradiol\n".encode("cp1252"))
    expected = ["Caféine", "Sérum physiologique", "Œstradiol"]
    assert read_whodrug_names(path) == expected
    assert read_whodrug_names(path, encoding="cp1252") == expected
    with pytest.raises(LicensedFormatError) as err:
        read_whodrug_names(path, encoding="ascii")
    _assert_safe_error(err, "names.txt", 1, "Caf")


def test_whodrug_directory_reads_dd_then_mp(tmp_path: Path) -> None:
    shutil.copy(WHODRUG / "b3" / "DD.txt", tmp_path / "DD.txt")
    shutil.copy(WHODRUG / "c3" / "MP.txt", tmp_path / "mp.TXT")  # any case
    assert read_whodrug_names(tmp_path) == B3_NAMES + C3_NAMES
    assert read_whodrug_names(tmp_path, fmt="c3") == C3_NAMES
    assert read_whodrug_names(tmp_path, fmt="B3") == B3_NAMES


def test_whodrug_fixture_directories() -> None:
    assert read_whodrug_names(WHODRUG / "b3") == B3_NAMES
    assert read_whodrug_names(WHODRUG / "c3") == C3_NAMES


def test_whodrug_directory_without_release_files(tmp_path: Path) -> None:
    (tmp_path / "DDA.txt").write_text("000001010016C02AB\n")
    with pytest.raises(LicensedFormatError, match=r"no WHODrug DD\.txt or MP\.txt"):
        read_whodrug_names(tmp_path)


def test_whodrug_directory_with_file_only_format() -> None:
    with pytest.raises(ValueError, match="needs a file"):
        read_whodrug_names(WHODRUG / "b3", fmt="csv")


def test_whodrug_missing_path(tmp_path: Path) -> None:
    with pytest.raises(LicensedFormatError, match="not found"):
        read_whodrug_names(tmp_path / "DD.txt")


def test_whodrug_unknown_format() -> None:
    with pytest.raises(ValueError, match="fmt must be one of"):
        read_whodrug_names(WHODRUG / "names.txt", fmt="xlsx")


def test_describe_whodrug_without_version() -> None:
    source = describe_whodrug(WHODRUG / "b3" / "DD.txt")
    assert source == LicensedSource("WHODrug", None, str(WHODRUG / "b3" / "DD.txt"), len(B3_NAMES))


def test_describe_whodrug_reads_version_txt(tmp_path: Path) -> None:
    shutil.copy(WHODRUG / "c3" / "MP.txt", tmp_path / "MP.txt")
    (tmp_path / "Version.txt").write_text("\n  WHODrug Global C3 2024 Mar 1  \n")
    expected = LicensedSource("WHODrug", "WHODrug Global C3 2024 Mar 1", "", len(C3_NAMES))
    for target in (tmp_path, tmp_path / "MP.txt"):
        source = describe_whodrug(target)
        assert source == LicensedSource(
            expected.name, expected.version, str(target), expected.n_terms
        )
