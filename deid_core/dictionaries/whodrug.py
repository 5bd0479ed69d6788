"""Optional reader for the licensed WHODrug dictionary (B3/C3 fixed-width files, CSV exports, name lists).

Drug names are medical vocabulary, so the dictionary builder adds their words
to the safe lists. WHODrug (Uppsala Monitoring Centre) is licensed, so this
project never ships it: a centre that holds a licence points the config
(`whodrug_path`) at its own release file, folder or export, and this module
reads the official file layouts. Only the drug NAME strings are returned: the
dictionary builder tokenises them into words itself. `describe_whodrug`
records which release went into a dictionary artifact.

Errors, encodings and provenance follow `deid_core.dictionaries.licensed_common`:
an error names a file by basename and line number, never the line's text.
"""

from __future__ import annotations

import csv
import functools
import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from deid_core.dictionaries.licensed_common import (
    _ASCII_DIGITS,
    LicensedFormatError,
    LicensedSource,
    NumberedLine,
    _casefold_listing,
    _check_encoding,
    _first_nonblank,
    _line_error,
    _parse_file,
    _unique,
)

__all__ = [
    "WHODRUG_FORMATS",
    "describe_whodrug",
    "read_whodrug_names",
]

WhoDrugFormat = Literal["auto", "b3", "c3", "csv", "lines"]
WHODRUG_FORMATS: tuple[str, ...] = ("auto", "b3", "c3", "csv", "lines")

# Fixed-width layouts. WHODrug text files have no delimiter, so they are
# hand-parsed by column; the standard library has no fixed-width reader.
#
# B3 `DD.txt` (Drug Dictionary): a 30-character block -- drug record number
# (6), sequence number 1 (2), sequence number 2 (3), check digit (1),
# designation (1), source year, source, company, number of ingredients (2),
# salt/ester code (1), year quarter (3) -- then the drug name to the end of the
# record (up to 1500 characters since B3). Verified against public parsers:
# the CDISC rules engine takes `line[:6]` as the record number and
# `line[30:].strip()` as the name, with sample records such as
# "000001010016N  001      01 854METHYLDOPA". The split of the middle block
# between source and company is not needed here and was not confirmed.
_B3_NAME_START = 30
# The 11-character drug code: record number and seq1 are digits; seq2 may be
# alphanumeric (e.g. 001092 01 A3D for a trade name).
_DRUG_CODE = re.compile(r"[0-9]{8}[0-9A-Za-z]{3}")

# C3 `MP.txt` (Medicinal Product), 1-based columns: MPID 1-10, MedID 11-45,
# drug record number 46-51, seq1 52-53, seq2 54-56, seq3 57-66, seq4 67-76,
# generic flag 77, drug name 78-1577 (1500 characters), then name specifier,
# marketing authorisation, country, company, ... dates, 1742 characters in all.
# Columns are counted in decoded characters (the same as bytes for the
# single-byte encodings these files have used).
# Verified against the vigicaen R package (tb_who(), which slices MP.txt at
# exactly these columns, and its example MP.txt record). The pre-2017 C-format
# had the same columns with an 80-character drug name (public WHO-DDE SQL
# schemas: "Drug name varchar(80)"); a record too short to hold the 1500-wide
# field is read with the 80-wide one.
_C3_MPID = slice(0, 10)
_C3_DRUG_CODE = slice(45, 56)
_C3_NAME_START = 77
_C3_NAME_WIDTH = 1500
_C_NAME_WIDTH = 80

#: For a directory: which release files to read, per `fmt`, in reading order.
_WHODRUG_DIR_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "auto": (("DD.txt", "b3"), ("MP.txt", "c3")),
    "b3": (("DD.txt", "b3"),),
    "c3": (("MP.txt", "c3"),),
}
_CSV_DELIMITERS = (",", "\t", ";", "|")
_CSV_NAME_COLUMN = "drug_name"
_VERSION_FILE = "version.txt"
_MAX_VERSION_CHARS = 200


def read_whodrug_names(
    path: Path | str,
    fmt: WhoDrugFormat | str = "auto",
    encoding: str | None = None,
) -> list[str]:
    """Drug names from a WHODrug release file or export, unique, first-seen order.

    Formats (`fmt`):
      * "b3": classic fixed-width `DD.txt` (drug name after a 30-char block);
      * "c3": fixed-width `MP.txt` (drug name in columns 78-1577);
      * "csv": a user export, CSV or TSV, whose header has a `drug_name` /
        `Drug Name` column (any case; `,` tab `;` or `|` delimited);
      * "lines": one drug name per line (blank lines and `#` comments skipped);
      * "auto": from the file name (`DD.txt` -> b3, `MP.txt` -> c3,
        `.csv`/`.tsv` -> csv), otherwise from the first non-blank line
        (a B3 or C3 record shape), otherwise "lines".

    `path` may be a directory: its `DD.txt` and/or `MP.txt` are read ("auto"),
    or only the one matching `fmt` "b3"/"c3". Names are kept as written (the
    same name in two cases is two entries); trailing padding is stripped.
    """
    fmt = _check_whodrug_format(fmt)
    _check_encoding(encoding)
    names: list[str] = []
    for file, file_fmt in _whodrug_sources(Path(path), fmt, encoding):
        parse = functools.partial(_WHODRUG_PARSERS[file_fmt], file)
        names.extend(_parse_file(file, encoding, parse))
    return _unique(names)


def describe_whodrug(
    path: Path | str,
    fmt: WhoDrugFormat | str = "auto",
    encoding: str | None = None,
) -> LicensedSource:
    """Name, version and name count of a WHODrug source, for provenance.

    WHODrug text files carry no version field. Where a `version.txt` (any
    case) sits in the directory, or beside the file, its first non-blank line
    is recorded verbatim as the version; otherwise the version is None.
    """
    p = Path(path)
    n_terms = len(read_whodrug_names(p, fmt, encoding))
    version = _whodrug_version(p if p.is_dir() else p.parent, encoding)
    return LicensedSource("WHODrug", version, str(p), n_terms)


def _check_whodrug_format(fmt: str) -> str:
    """Validate `fmt` (case-insensitive); a typo must not silently pick a parser."""
    folded = fmt.casefold()
    if folded not in WHODRUG_FORMATS:
        raise ValueError(f"WHODrug fmt must be one of {', '.join(WHODRUG_FORMATS)}")
    return folded


def _whodrug_sources(path: Path, fmt: str, encoding: str | None) -> list[tuple[Path, str]]:
    """(file, concrete format) pairs to read for `path`."""
    if path.is_dir():
        return _whodrug_dir_files(path, fmt)
    if path.is_file():
        return [(path, fmt if fmt != "auto" else _detect_format(path, encoding))]
    raise LicensedFormatError(f"WHODrug file or directory not found: {path}")


def _whodrug_dir_files(directory: Path, fmt: str) -> list[tuple[Path, str]]:
    """DD.txt and/or MP.txt in a release directory, as `fmt` allows."""
    wanted = _WHODRUG_DIR_FILES.get(fmt)
    if wanted is None:
        raise ValueError(f"WHODrug fmt {fmt!r} needs a file, not a directory")
    listing = _casefold_listing(directory)
    found: list[tuple[Path, str]] = []
    for name, file_fmt in wanted:
        entry = listing.get(name.casefold())
        if entry is not None and entry.is_file():
            found.append((entry, file_fmt))
    if not found:
        expected = " or ".join(name for name, _ in wanted)
        raise LicensedFormatError(f"no WHODrug {expected} in {directory}")
    return found


def _detect_format(path: Path, encoding: str | None) -> str:
    """Pick a parser for `fmt="auto"`: file name first, then record shape."""
    name = path.name.casefold()
    if name == "dd.txt":
        return "b3"
    if name == "mp.txt":
        return "c3"
    if path.suffix.casefold() in (".csv", ".tsv"):
        return "csv"
    first = _parse_file(path, encoding, _first_nonblank)
    if first is not None and _looks_like_c3(first[1]):
        return "c3"
    if first is not None and _looks_like_b3(first[1]):
        return "b3"
    return "lines"


def _looks_like_b3(line: str) -> bool:
    """A drug code at column 1 and a name after the 30-character block."""
    return bool(_DRUG_CODE.match(line)) and bool(line[_B3_NAME_START:].strip())


def _looks_like_c3(line: str) -> bool:
    """A numeric MPID, a drug code at column 46 and a name from column 78."""
    return (
        bool(_ASCII_DIGITS.fullmatch(line[_C3_MPID].strip()))
        and bool(_DRUG_CODE.fullmatch(line[_C3_DRUG_CODE]))
        and bool(line[_C3_NAME_START:].strip())
    )


def _b3_names(path: Path, lines: Iterator[NumberedLine]) -> list[str]:
    """Drug names from a B3 `DD.txt`: the text after the 30-character block."""
    names: list[str] = []
    for lineno, text in lines:
        if not text.strip():
            continue
        if not _DRUG_CODE.match(text):
            raise _line_error(path, lineno, "no drug code (record, seq1, seq2) in columns 1-11")
        name = text[_B3_NAME_START:].strip()
        if not name:
            raise _line_error(path, lineno, "no drug name after column 30")
        names.append(name)
    return names


def _c3_names(path: Path, lines: Iterator[NumberedLine]) -> list[str]:
    """Drug names from a C3 `MP.txt` (columns 78-1577, or 78-157 in C-format)."""
    names: list[str] = []
    for lineno, text in lines:
        if not text.strip():
            continue
        if not _ASCII_DIGITS.fullmatch(text[_C3_MPID].strip()):
            raise _line_error(path, lineno, "product id (columns 1-10) is not numeric")
        if not _DRUG_CODE.fullmatch(text[_C3_DRUG_CODE]):
            raise _line_error(path, lineno, "no drug code in columns 46-56")
        width = _C3_NAME_WIDTH if len(text) >= _C3_NAME_START + _C3_NAME_WIDTH else _C_NAME_WIDTH
        name = text[_C3_NAME_START : _C3_NAME_START + width].strip()
        if not name:
            raise _line_error(path, lineno, "drug name (from column 78) is empty")
        names.append(name)
    return names


def _lines_names(path: Path, lines: Iterator[NumberedLine]) -> list[str]:
    """One name per line; blank lines and `#` comment lines are skipped."""
    del path  # every non-blank line is valid; kept for a uniform signature
    stripped = (text.strip() for _, text in lines)
    return [text for text in stripped if text and not text.startswith("#")]


def _csv_names(path: Path, lines: Iterator[NumberedLine]) -> list[str]:
    """The `drug_name` column of a CSV/TSV export, read with the csv module."""
    header_lineno, header = _csv_header(path, lines)
    delimiter, column = _csv_layout(path, header_lineno, header)
    texts = itertools.chain([header], (text for _, text in lines))
    # One string per physical line, so reader.line_num counts physical lines.
    reader = csv.reader((text + "\n" for text in texts), delimiter=delimiter)
    offset = header_lineno - 1
    names: list[str] = []
    try:
        next(reader)  # the header, already inspected
        for row in reader:
            lineno = offset + reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) <= column:
                raise _line_error(path, lineno, "row has fewer columns than the header")
            name = row[column].strip()
            if not name:
                raise _line_error(path, lineno, "drug name cell is empty")
            names.append(name)
    except csv.Error:
        raise _line_error(path, offset + reader.line_num, "not valid CSV") from None
    return names


def _csv_header(path: Path, lines: Iterator[NumberedLine]) -> NumberedLine:
    """The first non-blank line, which must be the header."""
    for lineno, text in lines:
        if text.strip():
            return lineno, text
    raise LicensedFormatError(f"{path.name}: empty file, expected a drug_name header")


def _csv_layout(path: Path, lineno: int, header: str) -> tuple[str, int]:
    """(delimiter, column index) of the drug name column in `header`.

    Each candidate delimiter is tried; the first whose split header has a
    `drug_name` / `Drug Name` column wins. This is deterministic, unlike
    csv.Sniffer on a single line.
    """
    for delimiter in _CSV_DELIMITERS:
        try:
            cells = next(csv.reader([header], delimiter=delimiter))
        except csv.Error:
            continue
        normalised = [_normalise_column(cell) for cell in cells]
        if _CSV_NAME_COLUMN in normalised:
            return delimiter, normalised.index(_CSV_NAME_COLUMN)
    raise _line_error(path, lineno, "header has no drug_name / Drug Name column")


def _normalise_column(cell: str) -> str:
    """'Drug Name', 'DRUG_NAME', 'drug-name' -> 'drug_name'."""
    return re.sub(r"[\s_-]+", "_", cell.strip().casefold())


def _whodrug_version(directory: Path, encoding: str | None) -> str | None:
    """First non-blank line of a `version.txt` in `directory`, if any."""
    if not directory.is_dir():
        return None
    path = _casefold_listing(directory).get(_VERSION_FILE)
    if path is None or not path.is_file():
        return None
    first = _parse_file(path, encoding, _first_nonblank)
    return first[1].strip()[:_MAX_VERSION_CHARS] if first is not None else None


_WHODRUG_PARSERS: dict[str, Callable[[Path, Iterator[NumberedLine]], list[str]]] = {
    "b3": _b3_names,
    "c3": _c3_names,
    "csv": _csv_names,
    "lines": _lines_names,
}
