"""Accumulate the fields of one report under unique, structure-derived paths.

The extractors name fields after the E2B structure ("reaction[2].start_date")
and never after content. Real files are messier than the guides, though: a
reporter may have two telephone numbers, a sender may repeat a comment.
Rather than have every extractor guard against that, the collector makes
paths unique on its own: a second field at an existing path gets ``_2``, a
third ``_3``, in document order. Paths stay deterministic for a given file,
which is all that joining de-identified values back needs.

Blank values are dropped here too, so an empty ``<reportermiddlename/>``
never becomes a field to replace.
"""

from __future__ import annotations

from collections import Counter

from deid_core.e2b.model import Label, StructuredField, TextField


class FieldCollector:
    """Collects text and structured fields of one report, with unique paths."""

    def __init__(self) -> None:
        self._texts: list[TextField] = []
        self._structured: list[StructuredField] = []
        self._used: set[str] = set()
        self._counters: Counter[str] = Counter()

    def _unique(self, path: str) -> str:
        if path not in self._used:
            self._used.add(path)
            return path
        n = 2
        while f"{path}_{n}" in self._used:
            n += 1
        unique = f"{path}_{n}"
        self._used.add(unique)
        return unique

    def next_index(self, kind: str) -> int:
        """0, 1, 2, ... per ``kind``: the index of the next occurrence of an ownerless repeat."""
        index = self._counters[kind]
        self._counters[kind] += 1
        return index

    def text(self, path: str, text: str | None) -> str | None:
        """Add a free-text field unless blank; returns the path used (None when skipped)."""
        if text is None or not text.strip():
            return None
        used = self._unique(path)
        self._texts.append(TextField(used, text))
        return used

    def structured(self, path: str, label: Label, value: str | None) -> str | None:
        """Add a structured field (value stripped) unless blank; returns the path used."""
        if value is None:
            return None
        value = value.strip()
        if not value:
            return None
        used = self._unique(path)
        self._structured.append(StructuredField(used, label, value))
        return used

    def has_path(self, path: str) -> bool:
        return path in self._used

    @property
    def text_fields(self) -> tuple[TextField, ...]:
        return tuple(self._texts)

    @property
    def structured_fields(self) -> tuple[StructuredField, ...]:
        return tuple(self._structured)
