"""Write output files all-or-nothing.

A de-identification run that fails half-way must not leave a truncated
output that a later step could mistake for a complete, de-identified file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_text_writer(path: Path, encoding: str = "utf-8", mode: int = 0o644) -> Iterator[IO[str]]:
    """Yield a file in the target folder; rename it into place only on success.

    `mode` 0o600 for files that hold original text (QA samples).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="\n") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
