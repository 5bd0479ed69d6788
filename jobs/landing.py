"""Every file in a landing folder, listed on the driver, so that none can go unrecorded.

Why not Spark's own listing (`binaryFile`): it leaves out 0-byte files and
files whose names start with `.` or `_`, and a name filter (`*.xml`) drops
`report.XML` and every other name without a trace. The ingest promises that
each landed file ends in bronze or in quarantine with a reason, so the
listing must see everything: every regular file under the folder at any
depth (hidden ones too), and broken links, which the parser then records as
unreadable. What a file's name or content says about it is decided later,
per file, by `udfs.parse_e2b`.

Folders reached through symbolic links are followed once (a link cycle is
not a loop). The input is a local or mounted folder, a single file, or a
glob of them (`**` spans folders); files are named `file:` URIs with the
path percent-encoded, as Spark names them, so quarantine and bronze rows of
earlier releases keep matching.
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass
from urllib.parse import urlparse

from udfs.parse_e2b import file_uri, local_path

_GLOB_CHARS = frozenset("*?[")


class LandingError(ValueError):
    """The input cannot be listed (it does not exist, or is not a local folder); nothing was read."""


@dataclass(frozen=True)
class LandedFile:
    uri: str
    #: None when the entry is not a regular file that can be stat()ed: a broken
    #: link, a FIFO or socket (reading it could block), a file removed meanwhile
    size: int | None


def is_pattern(source: str) -> bool:
    return any(c in _GLOB_CHARS for c in source)


def list_landing(source: str) -> list[LandedFile]:
    """Every file under `source` (a folder, a file, or a glob), sorted by URI."""
    scheme = urlparse(source).scheme
    if scheme not in ("", "file") and len(scheme) > 1:  # one letter: a Windows drive
        raise LandingError(f"input scheme {scheme!r} is not supported: give a local or mounted folder")
    path = str(local_path(source)) if scheme == "file" else source
    roots = sorted(glob.glob(path, recursive=True, include_hidden=True)) if is_pattern(path) else [path]
    found: dict[str, LandedFile] = {}
    for root in roots:
        if not os.path.lexists(root):
            raise LandingError(f"input not found: {root}")
        if os.path.isdir(root):
            for f in _walk(root):
                found.setdefault(f.uri, f)
        else:
            f = _entry(root)
            found.setdefault(f.uri, f)
    return [found[u] for u in sorted(found)]


def _walk(root: str) -> list[LandedFile]:
    out: list[LandedFile] = []
    seen: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # reached again through a link: already listed
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        out.extend(_entry(os.path.join(folder, name)) for name in sorted(files))
    return out


def _entry(path: str) -> LandedFile:
    try:
        st = os.stat(path)
    except OSError:
        return LandedFile(file_uri(path), None)
    return LandedFile(file_uri(path), st.st_size if stat.S_ISREG(st.st_mode) else None)
