"""Patient- or report-level folds: one definition for cross-validation and out-of-fold scoring.

A person's notes must never sit on both sides of a split, or a threshold (or a
model) would be judged on PHI it has already seen. Documents are grouped by
the first match of a regular expression in their id (PhysioNet "12-3" is
patient 12; VAERS "VAERS-1234567-narrative" is report 1234567) and a group's
fold is a hash of its key, so the assignment does not depend on the order or
the number of documents read and is the same on every machine.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TypeVar

from deid_core.corpus.document import Document

#: PhysioNet patients ("12-3") and VAERS reports ("VAERS-1234567-...")
DEFAULT_FOLD_KEY = r"^(?:VAERS-[0-9]+|[^-]+)"

D = TypeVar("D", bound=Document)


def compile_key(fold_key: str) -> re.Pattern[str]:
    """The grouping expression, or ValueError with the reason."""
    try:
        return re.compile(fold_key)
    except re.error as exc:
        raise ValueError(f"fold key is not a regular expression: {exc}") from None


def group_of(doc_id: str, key: re.Pattern[str]) -> str:
    """The group a document belongs to: the key's first match, else the whole id."""
    m = key.search(doc_id)
    return m.group(0) if m and m.group(0) else doc_id


def fold_of(doc_id: str, folds: int, key: re.Pattern[str]) -> int:
    """The fold (0 .. folds-1) of a document; every document of a group gets the same one."""
    if folds < 1:
        raise ValueError("folds must be >= 1")
    return int(hashlib.sha256(group_of(doc_id, key).encode("utf-8")).hexdigest(), 16) % folds


def split_folds(docs: Sequence[D], folds: int, fold_key: str = DEFAULT_FOLD_KEY) -> list[list[D]]:
    """Documents in `folds` lists, groups kept together, input order kept within a fold."""
    key = compile_key(fold_key)
    out: list[list[D]] = [[] for _ in range(folds)]
    for d in docs:
        out[fold_of(d.doc_id, folds, key)].append(d)
    return out
