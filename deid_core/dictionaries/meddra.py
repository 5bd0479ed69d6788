"""Optional reader for the licensed MedDRA terminology (ASCII release, `MedAscii` folder).

MedDRA term names (LLT, PT, HLT, HLGT, SOC) are medical vocabulary, so the
dictionary builder adds their words to the safe lists. MedDRA (ICH) is
licensed, so this project never ships it: a centre that holds a licence
points the config (`meddra_dir`) at its own release, and this module reads
the official MedAscii layout. Only the term name strings are returned: the
dictionary builder tokenises them into words itself.
`describe_meddra_release` records which release went into a dictionary
artifact.

Errors, encodings and provenance follow `deid_core.dictionaries.licensed_common`:
an error names a file by basename and line number, never the line's text.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

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
    "MEDDRA_LEVELS",
    "describe_meddra_release",
    "read_meddra_terms",
]

log = logging.getLogger(__name__)

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
