"""Tests for the optional MedDRA reader (and the line reading it shares with WHODrug).

Fixtures under tests/fixtures/meddra are tiny, hand-made files in the
official layout with fictitious codes; the names are ordinary medical words,
not licensed release content and not personal data.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.dictionaries.licensed_common import LicensedFormatError, LicensedSource
from deid_core.dictionaries.meddra import describe_meddra_release, read_meddra_terms
from tests.dictionaries.safe_errors import assert_safe_error as _assert_safe_error

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MEDDRA = FIXTURES / "meddra"
MEDASCII = MEDDRA / "MedAscii"

LLT_NAMES = [
    "Headache",
    "Head pain",
    "Cephalgia",
    "Nausea",
    "Feeling queasy",
    "Vomiting",
    "Throwing up",
    "Hepatic failure",
    "Liver failure NOS",
    "Pyrexia",
    "Fever",
]
NON_CURRENT_LLTS = ["Throwing up", "Liver failure NOS"]
PT_NAMES = ["Headache", "Nausea", "Vomiting", "Hepatic failure", "Pyrexia"]
HLT_NAMES = [
    "Headaches NEC",
    "Nausea and vomiting symptoms",
    "Hepatic failure and associated disorders",
    "Febrile disorders",
]
HLGT_NAMES = [
    "Headaches",
    "Gastrointestinal signs and symptoms",
    "Hepatic and hepatobiliary disorders",
    "Body temperature conditions",
]
SOC_NAMES = [
    "Nervous system disorders",
    "Gastrointestinal disorders",
    "Hepatobiliary disorders",
    "General disorders and administration site conditions",
]
ALL_MEDDRA = LLT_NAMES + HLT_NAMES + HLGT_NAMES + SOC_NAMES  # PTs all repeat LLTs


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("llt", LLT_NAMES),
        ("pt", PT_NAMES),
        ("hlt", HLT_NAMES),
        ("hlgt", HLGT_NAMES),
        ("soc", SOC_NAMES),
    ],
)
def test_meddra_reads_each_level(level: str, expected: list[str]) -> None:
    assert read_meddra_terms(MEDASCII, levels=[level]) == expected


def test_meddra_default_levels_are_unique_in_first_seen_order() -> None:
    terms = read_meddra_terms(MEDASCII)
    assert terms == ALL_MEDDRA
    assert terms.count("Headache") == 1  # an LLT and a PT, kept once


def test_meddra_levels_follow_requested_order() -> None:
    assert read_meddra_terms(MEDASCII, levels=("soc", "pt")) == SOC_NAMES + PT_NAMES


def test_meddra_single_string_level_is_one_level() -> None:
    assert read_meddra_terms(MEDASCII, levels="soc") == SOC_NAMES


def test_meddra_non_current_llts_included_by_default() -> None:
    terms = read_meddra_terms(MEDASCII, levels=["llt"])
    assert all(name in terms for name in NON_CURRENT_LLTS)


def test_meddra_current_llt_only_drops_non_current() -> None:
    terms = read_meddra_terms(MEDASCII, levels=["llt"], current_llt_only=True)
    assert terms == [name for name in LLT_NAMES if name not in NON_CURRENT_LLTS]


def test_meddra_upper_case_file_names() -> None:
    upper = MEDDRA / "MedAsciiUpper"
    assert read_meddra_terms(upper) == [
        "Abdominal pain upper",
        "Stomach ache",
        "Gastrointestinal disorders",
    ]


def test_meddra_release_root_with_medascii_child() -> None:
    # tests/fixtures/meddra holds no .asc itself, only a MedAscii folder.
    assert read_meddra_terms(MEDDRA) == ALL_MEDDRA


def test_meddra_cp1252_fallback() -> None:
    path = MEDDRA / "cp1252" / "pt.asc"
    raw = path.read_bytes()
    assert b"Barr\xe9" in raw  # the fixture really is cp1252 ...
    assert b"\x8cd\xe8me" in raw  # ... with a byte Latin-1 would decode wrongly
    assert read_meddra_terms(path.parent, levels=["pt"]) == [
        "Syndrome de Guillain-Barré",
        "Céphalée",
        "Nausée",
        "Œdème de Quincke",
    ]


def test_meddra_explicit_encoding_is_used() -> None:
    terms = read_meddra_terms(MEDDRA / "cp1252", levels=["pt"], encoding="cp1252")
    assert terms[0] == "Syndrome de Guillain-Barré"


def test_meddra_explicit_wrong_encoding_reports_file_and_line() -> None:
    with pytest.raises(LicensedFormatError) as err:
        read_meddra_terms(MEDDRA / "cp1252", levels=["pt"], encoding="utf-8")
    _assert_safe_error(err, "pt.asc", 1, "Guillain")
    assert "utf-8" in str(err.value)


def test_meddra_utf8_is_decoded_as_utf8(tmp_path: Path) -> None:
    (tmp_path / "pt.asc").write_bytes("10090602$Céphalée$$10090001$\n".encode())
    assert read_meddra_terms(tmp_path, levels=["pt"]) == ["Céphalée"]  # not mojibake


def test_meddra_unknown_encoding_rejected() -> None:
    with pytest.raises(ValueError, match="unknown text encoding"):
        read_meddra_terms(MEDASCII, encoding="no-such-codec")


def test_meddra_malformed_fixture_names_file_and_line_only() -> None:
    with pytest.raises(LicensedFormatError) as err:
        read_meddra_terms(MEDDRA / "malformed", levels=["pt"])
    _assert_safe_error(err, "pt.asc", 4, "Jane", "Doe", "reported", "10090703")


@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        ("SECRETCODE$Headache$", "not numeric"),
        ("10090001$   $", "empty"),
        ("10090001", "'$'-delimited"),
        ("12a45678$SecretName$", "not numeric"),
    ],
)
def test_meddra_malformed_lines(tmp_path: Path, bad_line: str, problem: str) -> None:
    (tmp_path / "llt.asc").write_text(f"10090301$Headache$10090301$\n\n{bad_line}\n")
    with pytest.raises(LicensedFormatError) as err:
        read_meddra_terms(tmp_path, levels=["llt"])
    _assert_safe_error(err, "llt.asc", 3, "SECRET", "Secret", bad_line)
    assert problem in str(err.value)
    assert str(tmp_path) not in str(err.value)  # basename, not the full path


def test_meddra_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(LicensedFormatError, match="not found"):
        read_meddra_terms(tmp_path / "nowhere")


def test_meddra_directory_without_asc_files(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("not a release\n")
    with pytest.raises(LicensedFormatError, match=r"no MedDRA ASCII term files \(llt\.asc"):
        read_meddra_terms(tmp_path)


def test_meddra_no_file_for_requested_levels() -> None:
    with pytest.raises(LicensedFormatError, match=r"hlgt\.asc"):
        read_meddra_terms(MEDDRA / "MedAsciiUpper", levels=["hlgt"])


def test_meddra_missing_levels_are_skipped_with_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="deid_core.dictionaries.meddra"):
        terms = read_meddra_terms(MEDDRA / "MedAsciiUpper")
    assert terms[-1] == "Gastrointestinal disorders"
    assert "hlt, hlgt" in caplog.text


@pytest.mark.parametrize("levels", [["llt", "meddra"], [], ["smq"]])
def test_meddra_invalid_levels(levels: list[str]) -> None:
    with pytest.raises(ValueError, match="MedDRA levels"):
        read_meddra_terms(MEDASCII, levels=levels)


def test_describe_meddra_release() -> None:
    source = describe_meddra_release(MEDASCII)
    assert source == LicensedSource("MedDRA", "27.0", str(MEDASCII), len(ALL_MEDDRA))


def test_describe_meddra_release_upper_case_and_root() -> None:
    assert describe_meddra_release(MEDDRA / "MedAsciiUpper").version == "26.1"
    from_root = describe_meddra_release(MEDDRA)
    assert (from_root.version, from_root.path) == ("27.0", str(MEDASCII))


def test_describe_meddra_release_without_release_file() -> None:
    source = describe_meddra_release(MEDDRA / "cp1252")
    assert (source.version, source.n_terms) == (None, 4)


def test_describe_meddra_release_bad_version(tmp_path: Path) -> None:
    shutil.copy(MEDASCII / "soc.asc", tmp_path / "soc.asc")
    (tmp_path / "meddra_release.asc").write_text("\nConfidential$English$\n")
    with pytest.raises(LicensedFormatError) as err:
        describe_meddra_release(tmp_path)
    _assert_safe_error(err, "meddra_release.asc", 2, "Confidential")


_MEDDRA_NAME = (
    st.text(
        alphabet=st.characters(
            codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters="$"
        ),
        min_size=1,
        max_size=30,
    )
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=60, deadline=None)
@given(names=st.lists(_MEDDRA_NAME, min_size=1, max_size=12))
def test_meddra_round_trip_property(names: list[str]) -> None:
    """Any '$'-free names written in pt.asc layout come back, unique, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        lines = [f"{10090000 + i}${name}$$10090001$" for i, name in enumerate(names)]
        (Path(tmp) / "pt.asc").write_bytes(("\r\n".join(lines) + "\r\n").encode())
        assert read_meddra_terms(Path(tmp), levels=["pt"]) == list(dict.fromkeys(names))
