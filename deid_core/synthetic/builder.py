"""Assemble narrative text piece by piece so that annotations are exact.

Why a builder: the gold spans of a synthetic corpus are only as good as their
offsets. Finding PHI afterwards with ``str.find`` breaks as soon as a value
occurs twice, overlaps another value, or is changed by upper-casing ("ß"
becomes "SS"). Here every piece is transformed first and measured second, so
an offset is simply the length of everything appended before it.

A *piece* is one of:

* ``str``   -- literal text, never annotated;
* ``Phi``   -- a PHI value that becomes one gold span;
* ``Clin``  -- clinical content (drug, dose, lab, lot number, ...) that must survive
  de-identification; it is recorded too, so tests and training-data tools can
  check that nothing redacted it;
* ``Seq``   -- a sequence of pieces, so value factories can return phrases
  such as ``"a " + Phi("67", "AGE") + "-year-old"`` as one unit.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Union

from deid_core.categories import SYNTHETIC_LABELS

LABELS: tuple[str, ...] = SYNTHETIC_LABELS
"""The project's coarse PHI labels (i2b2 2014 categories, contacts split out)."""

CLINICAL_KINDS: tuple[str, ...] = ("DRUG", "DOSE", "LAB", "REACTION", "ONSET", "LOT")
"""Kinds of recorded non-PHI content that a de-identifier must leave alone."""


@dataclass(frozen=True, slots=True)
class Phi:
    """A PHI value: becomes exactly one span covering ``text``.

    ``subtype`` keeps the i2b2 fine-grained TYPE (PATIENT, DOCTOR, CITY, ...)
    so the corpus can be exported to i2b2 XML without losing detail.
    """

    text: str
    label: str
    subtype: str | None = None


@dataclass(frozen=True, slots=True)
class Clin:
    """Clinical content that is *not* PHI but is recorded by offset."""

    text: str
    kind: str


@dataclass(frozen=True, slots=True)
class Seq:
    """Several pieces that belong together (e.g. title + name)."""

    parts: tuple[Piece, ...]


Piece = Union[str, Phi, Clin, Seq]


def seq(*parts: Piece) -> Seq:
    """Shorthand for ``Seq(parts)`` that reads naturally in value factories."""
    return Seq(tuple(parts))


def plain(piece: Piece) -> str:
    """Render a piece without annotations (for values that feed other values)."""
    if isinstance(piece, str):
        return piece
    if isinstance(piece, (Phi, Clin)):
        return piece.text
    return "".join(plain(p) for p in piece.parts)


@dataclass(frozen=True, slots=True)
class BuiltText:
    """The result of a build: text plus aligned annotation lists."""

    text: str
    spans: list[tuple[int, int, str]]
    subtypes: list[str | None]
    clinical: list[tuple[int, int, str]]
    sentences: int


def _identity(s: str) -> str:
    return s


_FORMATTER = string.Formatter()


@dataclass
class NarrativeBuilder:
    """Append-only text buffer that records PHI and clinical offsets.

    ``casing`` is applied to every piece *before* it is measured, which is
    what keeps spans exact in ALL CAPS or all-lower-case documents even when
    case mapping changes a string's length.

    Sentences: :meth:`say` appends one sentence and remembers that a
    separator is owed; the separator (``sentence_sep``, a blank line after
    :meth:`paragraph`) is only written when the next sentence starts. That
    keeps documents free of trailing whitespace whatever the template does.
    """

    casing: Callable[[str], str] = _identity
    sentence_sep: str = " "
    _chunks: list[str] = field(default_factory=list)
    _length: int = 0
    _spans: list[tuple[int, int, str]] = field(default_factory=list)
    _subtypes: list[str | None] = field(default_factory=list)
    _clinical: list[tuple[int, int, str]] = field(default_factory=list)
    _pending_sep: str = ""
    _sentences: int = 0

    # -- low level -----------------------------------------------------------
    def _emit(self, text: str) -> tuple[int, int]:
        """Write already-cased text and return its offsets."""
        start = self._length
        self._chunks.append(text)
        self._length += len(text)
        return start, self._length

    def _flush_sep(self) -> None:
        if self._pending_sep:
            sep, self._pending_sep = self._pending_sep, ""
            self._emit(sep)

    def add(self, *pieces: Piece) -> NarrativeBuilder:
        """Append pieces in order; annotated pieces are recorded as spans."""
        self._flush_sep()
        for piece in pieces:
            self._add_one(piece)
        return self

    def _add_one(self, piece: Piece) -> None:
        if isinstance(piece, str):
            if piece:
                self._emit(self.casing(piece))
        elif isinstance(piece, Phi):
            text = self._checked(piece.text, piece.label)
            start, end = self._emit(text)
            self._spans.append((start, end, piece.label))
            self._subtypes.append(piece.subtype)
        elif isinstance(piece, Clin):
            text = self._checked(piece.text, piece.kind)
            start, end = self._emit(text)
            self._clinical.append((start, end, piece.kind))
        elif isinstance(piece, Seq):
            for part in piece.parts:
                self._add_one(part)
        else:  # pragma: no cover - a programming error in a template
            raise TypeError(f"not a piece: {type(piece).__name__}")

    def _checked(self, raw: str, what: str) -> str:
        """Case an annotated value and refuse values a span could not cover cleanly."""
        text = self.casing(raw)
        if not text or text != text.strip():
            raise ValueError(f"{what} value must be non-empty without outer whitespace: {raw!r}")
        return text

    # -- template helpers -------------------------------------------------------
    def fmt(self, template: str, /, **fields: Piece) -> NarrativeBuilder:
        """Append ``template`` with ``{name}`` fields replaced by pieces.

        The template is split with :class:`string.Formatter` and each literal
        or field is appended in turn, so offsets still come from construction,
        never from searching the result. Format specs are not supported: a
        field is a piece, not a value to format.
        """
        self._flush_sep()
        for literal, name, spec, conv in _FORMATTER.parse(template):
            if literal:
                self._add_one(literal)
            if name is None:
                continue
            if spec or conv:
                raise ValueError(f"format specs are not supported in field {name!r}")
            if name not in fields:
                raise KeyError(f"template field {name!r} has no value")
            self._add_one(fields[name])
        return self

    def say(self, template: str, /, **fields: Piece) -> NarrativeBuilder:
        """Append one sentence (with its own final punctuation) and owe a separator."""
        self.fmt(template, **fields)
        self._sentences += 1
        if not self._pending_sep:
            self._pending_sep = self.sentence_sep
        return self

    def line(self, template: str, /, **fields: Piece) -> NarrativeBuilder:
        """Append one form line (``Label: value``) and owe a newline."""
        self.fmt(template, **fields)
        self._sentences += 1
        self._pending_sep = "\n"
        return self

    def paragraph(self) -> NarrativeBuilder:
        """Make the next sentence start a new paragraph (no-op at the start)."""
        if self._length:
            self._pending_sep = "\n\n"
        return self

    def says(self, sentences: Iterable[tuple[str, dict[str, Piece]]]) -> NarrativeBuilder:
        """Append several ``(template, fields)`` sentences."""
        for template, fields in sentences:
            self.say(template, **fields)
        return self

    @property
    def sentences(self) -> int:
        """Number of sentences/lines written so far (drives length variation)."""
        return self._sentences

    def build(self) -> BuiltText:
        """Return the text and annotations; pending separators are dropped."""
        return BuiltText(
            text="".join(self._chunks),
            spans=list(self._spans),
            subtypes=list(self._subtypes),
            clinical=list(self._clinical),
            sentences=self._sentences,
        )


def cap(piece: Piece) -> Piece:
    """Capitalise the first letter of a piece that starts a sentence.

    Annotated pieces keep their kind: a capitalised drug is still a DRUG.
    PHI is left alone because names are already capitalised and changing a
    date's case ("jan2014") would misrepresent its format.
    """
    if isinstance(piece, str):
        return piece[:1].upper() + piece[1:]
    if isinstance(piece, Clin):
        return Clin(piece.text[:1].upper() + piece.text[1:], piece.kind)
    if isinstance(piece, Seq) and piece.parts:
        return Seq((cap(piece.parts[0]),) + piece.parts[1:])
    return piece
