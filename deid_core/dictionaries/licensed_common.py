"""What the MedDRA and WHODrug readers share: the error and provenance types, and careful line reading.

The rule-based de-identifier treats words found in medical terminologies as
"safe": they may be let back into de-identified text. MedDRA (ICH) and WHODrug
(Uppsala Monitoring Centre) are licensed, so this project never ships them. A
centre that holds a licence points the config (`meddra_dir`, `whodrug_path`) at
its own release files, and `deid_core.dictionaries.meddra` and
`deid_core.dictionaries.whodrug` read the official file layouts as extra safe
lists. This module exists so that both readers fail, decode and report
provenance the same way.

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
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

__all__ = [
    "LicensedFormatError",
    "LicensedSource",
    "NumberedLine",
]

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
