"""Optional readers for licensed terminologies: MedDRA and WHODrug.

The rule-based de-identifier treats words found in medical terminologies as
"safe": they may be let back into de-identified text. MedDRA (ICH) and WHODrug
(Uppsala Monitoring Centre) are licensed, so this project never ships them. A
centre that holds a licence points the config (`meddra_dir`, `whodrug_path`) at
its own release files, and this module reads the official file layouts as extra
safe lists. Only the term and drug NAME strings are returned: the dictionary
builder tokenises them into words itself. `describe_*` records which release
went into a dictionary artifact.

Error messages name a file by its basename and a line number, never the line's
text. These messages end up in logs and CI output; a release file is licensed
content and a hand-made export could hold anything a user pasted into it, so
neither should leak through an error.

Encoding: unless one is given, each file is tried as UTF-8, then cp1252, then
Latin-1. MedDRA ships English and Western European languages as "extended
ASCII" and other languages as UTF-8 (release readme); older WHODrug text files
are likewise single-byte. A cp1252 file is almost never valid UTF-8, so trying
UTF-8 first is safe; Latin-1 comes last because it decodes every byte (cp1252
leaves five undefined). Files are decoded line by line so that a decoding error
carries an exact line number, and a file is re-read whole under the next
encoding as soon as one of its lines does not decode.
"""

from __future__ import annotations

import codecs
import csv
import functools
import itertools
import logging
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

__all__ = [
    "MEDDRA_LEVELS",
    "WHODRUG_FORMATS",
    "LicensedFormatError",
    "LicensedSource",
    "describe_meddra_release",
    "describe_whodrug",
    "read_meddra_terms",
    "read_whodrug_names",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
#: One physical line: (1-based line number, text without its line terminator).
NumberedLine = tuple[int, str]
_LineParser = Callable[[Iterator[NumberedLine]], _T]

#: Tried in order when the caller gives no encoding (see module docstring).
#: "utf-8-sig" is UTF-8 that also drops a byte-order mark (Excel CSV exports).
_FALLBACK_ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")

_ASCII_DIGITS = re.compile(r"[0-9]+")


class LicensedFormatError(ValueError):
    """A licensed dictionary source is missing or not in the expected layout.

    The message names the file by basename and line number only, never the
    offending line's content (see module docstring).
    """


@dataclass(frozen=True)
class LicensedSource:
    """Provenance of one licensed source that went into a dictionary artifact.

    `version` is None where the release does not say (for example a WHODrug
    file without a `version.txt` beside it).
    """

    name: str
    version: str | None
    path: str
    n_terms: int


# --------------------------------------------------------------------------
# Shared helpers: reading lines, encoding fallback, errors, de-duplication
# --------------------------------------------------------------------------


class _UndecodableLine(Exception):
    """Internal: a line did not decode under the encoding being tried."""

    def __init__(self, lineno: int) -> None:
        super().__init__(lineno)
        self.lineno = lineno


def _line_error(path: Path, lineno: int, problem: str) -> LicensedFormatError:
    """Build the one error shape used for bad lines: basename, line, problem.

    `problem` must be a fixed description, never text taken from the file.
    """
    return LicensedFormatError(f"{path.name}, line {lineno}: {problem}")


def _iter_lines(path: Path, encoding: str) -> Generator[NumberedLine, None, None]:
    """Yield the file's lines decoded one at a time, without terminators.

    Reading bytes and decoding per line (instead of a text-mode file) gives
    exact line numbers for decoding errors and keeps memory flat for large
    releases. Only ASCII-compatible encodings are supported (not UTF-16).
    """
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError:
                # `from None`: the UnicodeDecodeError holds the raw line.
                raise _UndecodableLine(lineno) from None
            if lineno == 1:
                text = text.lstrip("\ufeff")  # byte-order mark, whatever the encoding
            yield lineno, text.rstrip("\r\n")


def _check_encoding(encoding: str | None) -> None:
    """Fail early, as a ValueError, on an encoding name Python does not know."""
    if encoding is None:
        return
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f"unknown text encoding: {encoding!r}") from None


def _parse_file(path: Path, encoding: str | None, parse: _LineParser[_T]) -> _T:
    """Run `parse` over the file's lines, falling back through encodings.

    With an explicit `encoding` only that one is tried, and a line that does
    not decode is reported as a format error.
    """
    candidates = (encoding,) if encoding else _FALLBACK_ENCODINGS
    failure = _UndecodableLine(0)
    for candidate in candidates:
        lines = _iter_lines(path, candidate)
        try:
            return parse(lines)
        except _UndecodableLine as exc:
            failure = exc
        finally:
            lines.close()  # parsers may stop early (first line only)
    raise _line_error(path, failure.lineno, f"cannot be decoded as {candidates[-1]}")


def _unique(names: Iterable[str]) -> list[str]:
    """Unique names in first-seen order (exact string match; case is kept)."""
    return list(dict.fromkeys(names))


def _casefold_listing(directory: Path) -> dict[str, Path]:
    """Files in `directory` keyed by case-folded name (releases vary: LLT.ASC)."""
    listing: dict[str, Path] = {}
    for entry in sorted(directory.iterdir()):
        listing.setdefault(entry.name.casefold(), entry)
    return listing


def _first_nonblank(lines: Iterator[NumberedLine]) -> NumberedLine | None:
    """The first line with any non-space text, or None for an empty file."""
    return next(((n, text) for n, text in lines if text.strip()), None)


# --------------------------------------------------------------------------
# MedDRA
# --------------------------------------------------------------------------

#: The five MedDRA hierarchy levels whose term files carry names.
MEDDRA_LEVELS: tuple[str, ...] = ("llt", "pt", "hlt", "hlgt", "soc")

# Layout of the MedAscii term files, as in the MedDRA distribution file format
# document and loaders built on it (e.g. OHDSI Vocabulary-v5.0 MedDRA/*.ctl):
# every record is '$'-delimited with a trailing '$'; field 1 is the code and
# field 2 the name in all five files. llt.asc goes on: pt_code, whoart, harts,
# costart, icd9, icd9cm, icd10, llt_currency, jart -- so the currency flag is
# the 10th field (index 9).
_LLT_CURRENCY_FIELD = 9
_MEDDRA_RELEASE_FILE = "meddra_release.asc"
_MEDDRA_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def read_meddra_terms(
    release_dir: Path | str,
    levels: Iterable[str] = MEDDRA_LEVELS,
    encoding: str | None = None,
    *,
    current_llt_only: bool = False,
) -> list[str]:
    """Term names from a MedDRA ASCII release, unique, in first-seen order.

    `release_dir` is the release's `MedAscii` folder (a release root holding a
    `MedAscii` folder is accepted too). Files are read level by level in the
    order of `levels`; file names may be upper- or lower-case.

    Non-current LLTs (currency flag `N`) are included by default: they are
    retired spellings and synonyms that still occur in narratives, and they
    are medical vocabulary all the same. Pass `current_llt_only=True` to drop
    them. Requested levels whose file is absent are skipped with a warning;
    if none is present, LicensedFormatError is raised.
    """
    wanted = _check_levels(levels)
    _check_encoding(encoding)
    ascii_dir = _meddra_ascii_dir(Path(release_dir))
    names: list[str] = []
    for level, path in _meddra_level_files(ascii_dir, wanted):
        skip_non_current = current_llt_only and level == "llt"
        parse = functools.partial(_meddra_file_names, path, skip_non_current)
        names.extend(_parse_file(path, encoding, parse))
    return _unique(names)


def describe_meddra_release(release_dir: Path | str, encoding: str | None = None) -> LicensedSource:
    """Name, version and term count of a MedDRA release, for artifact provenance.

    The version is the first field of `meddra_release.asc` (e.g. "27.0"), or
    None where that file is absent.
    """
    _check_encoding(encoding)
    ascii_dir = _meddra_ascii_dir(Path(release_dir))
    n_terms = len(read_meddra_terms(ascii_dir, encoding=encoding))
    version = _meddra_version(ascii_dir, encoding)
    return LicensedSource("MedDRA", version, str(ascii_dir), n_terms)


def _check_levels(levels: Iterable[str]) -> tuple[str, ...]:
    """Validate requested levels; a bare string is one level, not letters."""
    if isinstance(levels, str):
        levels = (levels,)
    wanted = tuple(dict.fromkeys(level.casefold() for level in levels))
    unknown = [level for level in wanted if level not in MEDDRA_LEVELS]
    if unknown or not wanted:
        raise ValueError(
            f"MedDRA levels must be a non-empty selection of {', '.join(MEDDRA_LEVELS)}"
        )
    return wanted


def _meddra_ascii_dir(release_dir: Path) -> Path:
    """The folder holding the .asc files: `release_dir` or its MedAscii child."""
    if not release_dir.is_dir():
        raise LicensedFormatError(f"MedDRA release directory not found: {release_dir}")
    listing = _casefold_listing(release_dir)
    has_asc = any(name.endswith(".asc") for name in listing)
    child = listing.get("medascii")
    if not has_asc and child is not None and child.is_dir():
        return child
    return release_dir


def _meddra_level_files(ascii_dir: Path, levels: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(level, file) for each requested level present; error if none is."""
    listing = _casefold_listing(ascii_dir)
    found = [(lvl, listing[f"{lvl}.asc"]) for lvl in levels if f"{lvl}.asc" in listing]
    if not found:
        raise LicensedFormatError(
            f"no MedDRA ASCII term files ({', '.join(f'{lvl}.asc' for lvl in levels)}) "
            f"in {ascii_dir}; point the config at the release's MedAscii folder"
        )
    missing = [lvl for lvl in levels if f"{lvl}.asc" not in listing]
    if missing:
        log.warning("MedDRA files missing in %s for levels: %s", ascii_dir, ", ".join(missing))
    return found


def _meddra_file_names(
    path: Path, skip_non_current: bool, lines: Iterator[NumberedLine]
) -> list[str]:
    """All names in one MedAscii term file (blank lines skipped)."""
    names: list[str] = []
    for lineno, text in lines:
        name = _meddra_line_name(path, lineno, text, skip_non_current)
        if name is not None:
            names.append(name)
    return names


def _meddra_line_name(path: Path, lineno: int, text: str, skip_non_current: bool) -> str | None:
    """The name on one '$'-delimited record, or None for a line to skip."""
    if not text.strip():
        return None
    fields = text.split("$")
    if len(fields) < 2:
        raise _line_error(path, lineno, "expected '$'-delimited fields (code$name$...)")
    code, name = fields[0].strip(), fields[1].strip()
    if not _ASCII_DIGITS.fullmatch(code):
        raise _line_error(path, lineno, "term code (field 1) is not numeric")
    if not name:
        raise _line_error(path, lineno, "term name (field 2) is empty")
    if skip_non_current and _llt_flag(fields) == "N":
        return None
    return name


def _llt_flag(fields: list[str]) -> str:
    """The LLT currency flag (`Y`/`N`), or "" where the record stops short."""
    if len(fields) <= _LLT_CURRENCY_FIELD:
        return ""
    return fields[_LLT_CURRENCY_FIELD].strip().upper()


def _meddra_version(ascii_dir: Path, encoding: str | None) -> str | None:
    """Version from meddra_release.asc (`27.0$English$...`), None if absent."""
    path = _casefold_listing(ascii_dir).get(_MEDDRA_RELEASE_FILE)
    if path is None or not path.is_file():
        return None
    first = _parse_file(path, encoding, _first_nonblank)
    if first is None:
        return None
    lineno, text = first
    version = text.split("$")[0].strip()
    if not _MEDDRA_VERSION.fullmatch(version):
        raise _line_error(path, lineno, "version field is not like '27.0'")
    return version


# --------------------------------------------------------------------------
# WHODrug
# --------------------------------------------------------------------------

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
