"""Turn masked tokens into de-identified text.

Each masked token is replaced by a category tag ("[DATE]") when the category
is known, else by the generic placeholder ("[PHI]"). Separators between
tokens are kept, so "12-JAN-2014" becomes "[DATE]-[DATE]-[DATE]" and the
reader still sees the shape of what was removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from deid_core.categories import UNKNOWN_LABEL
from deid_core.config import OutputConfig
from deid_core.results import MaskedToken


def replacement(label: str, output: OutputConfig) -> str:
    return output.placeholder if label == UNKNOWN_LABEL else output.tag_format.format(label=label)


def splice(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """Put each (start, end, new text) in place; edits must not overlap."""
    parts: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: e[0]):
        if start < pos:
            raise ValueError("masked spans overlap")
        parts.append(text[pos:start])
        parts.append(new)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def render_masked(text: str, masked: Sequence[MaskedToken], output: OutputConfig) -> str:
    """Replace every masked span by its tag; spans must not overlap (tokens never do)."""
    return splice(text, ((m.start, m.end, replacement(m.label, output)) for m in masked))
