"""ID detection: codes after an identifier keyword, SSNs, mixed letter/digit codes, long digit runs.

Why this module exists: record numbers, case and report numbers, SSNs and
company report IDs ("US-PFIZER-2014-123456") have no common format. What
marks them is a keyword before them ("MRN", "case no.") or a shape no
clinical value has (five or more digits mixed with letters, among them a
serial of four or more digits in a row; six or more digits in a row). A
series of short numbers joined by "-", "/" or "x" is how nursing notes and
narratives write vital signs, ventilator settings and rates ("BP
88-130/50-60s", "AC 700x12", "100-200cc/hr", "ABG-90/30/7"): five digits
and a letter, but no serial, so no ID. Doses with a unit code ("5000000IU") and yyyymmdd dates
are left out here; the combining detector lets a keyword-introduced code win
over a DATE, PHONE or AGE reading of the same characters ("MRN 20140112").

Lot and batch numbers are not identifiers: in a pharmacovigilance narrative
they name a product batch, which safety reviewers need for batch signals
(VAERS publishes them). "lot" and "batch" are therefore no ID keywords, and
the code after such a cue (`find_lot_codes`: "Lot EL1442", "lot # EK9231",
"Lot number: 030M20A") is exempt from the shape rules here, even where it
has five digits ("039K20A"). The clinical evidence (`rules/clinical.py`,
kind ``lot``) calls it safe. An SSN, a date or a phone number in that place
is still found by its own detector and wins ("lot 12/03/2019").
"""

from __future__ import annotations

from collections.abc import Iterator

import regex as re

from deid_core.rules.patterns.common import (
    _NOT_UNIT,
    _UNIT_CODE_RE,
    PatternMatch,
    _digit_count,
    _preceded_by,
    unit_range,
)
from deid_core.rules.patterns.dates import _is_compact_date

# Keyword-introduced codes: MRN 12345678, MR# 445566, case no. 2014-123,
# SSN 123-45-6789, ID: rg17 (never "Lot: AB1234": see find_lot_codes). The regex anchors on the *last*
# keyword before the code (a standalone keyword, a qualifier such as "no",
# "number", "id", or "#"); a qualifier is accepted only when a prefix word
# ("case", "record", "MR", ...) or a standalone keyword precedes it.
_ID_STANDALONE_WORDS = (
    "mrn ssn id serial license licence dea acct account policy npi passport upin medicaid medicare nhs"
).split()
_ID_QUALIFIER_WORDS = "no nr number num ref reference code identifier identification".split()
_ID_KEYWORD_RE = re.compile(
    r"(?i)(?:\b(?P<kw>\L<id_words>)\b\.?|(?P<kw2>#)|\b(?P<kw3>i\.d|m\.r\.n|s/n)\b\.?)"
    r"\s*[:#=]?\s*(?=[A-Za-z0-9./_-]*\d)(?P<code>[A-Za-z0-9](?:[A-Za-z0-9./_-]{0,38}[A-Za-z0-9])?)(?![A-Za-z0-9])",
    id_words=_ID_STANDALONE_WORDS + _ID_QUALIFIER_WORDS,
)
_ID_PREFIX_BEFORE_RE = re.compile(
    r"(?<![^\W\d_])(?:medical\s+record|health\s+record|record|chart|hospital|unit|health|patient|pt|subject|"
    r"case|report|safety\s+report|reference|ref|manufacturer|mfr|aer|worldwide|study|protocol|accession|"
    r"specimen|sample|member|insurance|claim|control|local|unique|company|sender|tracking|registration|"
    r"file|document|certificate|device|mr|social\s+security|serial|" + "|".join(_ID_STANDALONE_WORDS) + r")"
    r"(?:\s*(?:id|identifier|identification|no|nr|number|num|ref(?:erence)?|code)\b\.?)*\s*#?\s*$",
    re.IGNORECASE,
)
# Lot and batch numbers: "Lot EL1442", "lot # EK9231", "Lot number: 030M20A", "Lot#:039K20A",
# "batch no. AB12-34", "lot was EK9231", "the lot number was reported as 1R424B", "the lot number
# of dofetilide was DL90623"; a list goes on with codes of 4 to 12 characters that have
# a letter and a digit ("Lot numbers: EN6201, EL3248"; not "Lot EL1442, US-PFIZER-2014-123456").
# Never "a lot", "lots of", "lotion", "batches".
_LOT_CUE_RE = re.compile(
    r"(?i)(?<![^\W_])(?:lot|batch)(?![^\W_])"
    r"(?P<qual>(?:\s*(?:#|n[or]\b\.?|n°|num\b\.?|numbers?\b|id\b|code\b))*)"
    # "lot number of Tranylcypromine was HK62198": the product of up to three words before the verb
    r"(?:\s+of\s+[^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*){0,2}(?=\s+(?:is|was|were)\b))?"
    r"(?P<sep>\s*(?:[:=#]|-(?=\s)|\b(?:is|was|were)\b(?:\s+(?:reported|recorded|given|noted|documented|listed))?"
    r"(?:\s+as\b)?))?\s*"
    r"(?P<code>(?=[A-Za-z0-9/_-]*\d)[A-Za-z0-9](?:[A-Za-z0-9/_-]{0,38}[A-Za-z0-9])?)(?![A-Za-z0-9/_-]*[A-Za-z0-9])"
)
_LOT_MORE_RE = re.compile(
    r"(?i)\s*(?:[,;&/]|\band\b)\s*"
    r"(?P<code>(?=[A-Za-z0-9/_-]*\d)(?=[A-Za-z0-9/_-]*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9/_-]{2,10}[A-Za-z0-9]))"
    r"(?![A-Za-z0-9/_-]*[A-Za-z0-9])"
)
_A_LOT_BEFORE_RE = re.compile(r"\ba\s+$", re.IGNORECASE)
#: a lot code has at least this many characters ("lot 12" is more likely a count than a batch)
_LOT_MIN_LENGTH = 3
# E2B worldwide unique case IDs: the sender's country, its name (it may hold spaces) and a serial
# ("US-PFIZER INC-2021001217", "GB-MHRA-ADR12345678", "FR-AFSSAPS-AB20110123"; the serial's letters
# may stand apart, "GB-MHRA-ADR 27718345"): the whole ID, country too
_WORLDWIDE_ID_RE = re.compile(
    r"(?<![\w-])[A-Z]{2}-[A-Z0-9][A-Za-z0-9&.]*(?: [A-Z0-9][A-Za-z0-9&.]*){0,3}-(?:[A-Z]{2,5} )?[A-Za-z0-9]*\d{4,}"
    r"[A-Za-z0-9-]*(?![\w-])"
)
_SSN_RE = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w])(?!-\d)")
# Mixed letter/digit codes with >= 5 digits (US-PFIZER-2014-123456, AB123456)
# are found from a 5-digit core inside one token, then grown to the token; a code
# needs a serial of >= 4 digits in a row (not "88-130/50-60s", "700x12x1").
_ID_CODE_CORE_RE = re.compile(r"\d(?:[A-Za-z_/-]*\d){4}")
_ID_CODE_SHAPE_RE = re.compile(r"[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+){0,8}")
_CODE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/")
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
_SERIAL_RE = re.compile(r"\d{4}")
_ID_DIGITS_RE = re.compile(rf"(?<![\w.,])\d{{6,}}(?![\w])(?![.,]\d){_NOT_UNIT}")


def find_lot_codes(text: str) -> list[tuple[int, int]]:
    """(start, end) of each lot or batch code after a "lot"/"batch" cue, the cue left out.

    Not an identifier (see the module's docstring): the ID rules here leave
    these characters alone, and the clinical evidence calls them safe.
    """
    out: list[tuple[int, int]] = []
    lowered = text.lower()
    if "lot" not in lowered and "batch" not in lowered:
        return out
    for m in _LOT_CUE_RE.finditer(text):
        if not (m.group("qual") or m.group("sep")) and _preceded_by(text, m.start(), _A_LOT_BEFORE_RE, 6):
            continue  # "a lot 100 times"
        if m.end("code") - m.start("code") < _LOT_MIN_LENGTH:
            continue
        out.append((m.start("code"), m.end("code")))
        pos = m.end("code")
        while (more := _LOT_MORE_RE.match(text, pos)) is not None:
            out.append((more.start("code"), more.end("code")))
            pos = more.end("code")
    return out


#: a trial site's number ("Site IN-017", "Site: ZA-05", "site no. 1042"): with the subject's number it
#: points at a person. A country code and digits, or three digits or more: "injection site 3 cm" is no site
_SITE_ID_RE = re.compile(
    r"(?i)(?<![^\W\d_])site(?:\s*(?:no\b\.?|nr\b\.?|number|num\b\.?|id|#))?\s*[:#]?\s*"
    r"(?P<code>(?-i:[A-Z]{2,3})[-\s]?\d{2,5}|\d{3,6})(?![\w-]|[.,]\d)"
)


def _keyword_ids(text: str) -> Iterator[PatternMatch]:
    """Codes that follow an identifier keyword; the span is the code only."""
    for m in _ID_KEYWORD_RE.finditer(text):
        kw = (m.group("kw") or m.group("kw2") or m.group("kw3")).lower()
        if (kw in _ID_QUALIFIER_WORDS or kw == "#") and not _preceded_by(text, m.start(), _ID_PREFIX_BEFORE_RE, 40):
            continue  # "no. 5", "#3" on their own are not identifiers
        yield PatternMatch(m.start("code"), m.end("code"), "ID", "id_keyword")


def _code_ids(text: str) -> Iterator[PatternMatch]:
    """Mixed letter/digit codes with at least five digits, minus dose-like units (5000000IU)."""
    token_end = 0
    for core in _ID_CODE_CORE_RE.finditer(text):
        if core.start() < token_end:
            continue  # another core of the token just handled
        s, e = core.start(), core.end()
        while s > 0 and text[s - 1] in _CODE_CHARS:
            s -= 1
        while e < len(text) and text[e] in _CODE_CHARS:
            e += 1
        while text[s] in "-_/":
            s += 1
        token_end = e
        while text[e - 1] in "-_/":
            e -= 1
        code = text[s:e]
        if s >= 2 and text[s - 1] == "." and text[s - 2].isdigit():
            continue  # "CO/CI/SVR 3.43/1.98/1609-TD": the fraction of a decimal starts a series of values
        if (
            _ID_CODE_SHAPE_RE.fullmatch(code)
            and _ASCII_LETTER_RE.search(code)
            and _digit_count(code) >= 5
            and _SERIAL_RE.search(code)
            and not _UNIT_CODE_RE.fullmatch(code)
            and not unit_range(code)  # "500-1000CC": an amount's range, no code
        ):
            yield PatternMatch(s, e, "ID", "id_code")


def find_ids(text: str) -> list[PatternMatch]:
    """Identifier candidates: keyword-introduced codes, SSNs, mixed codes and long digit runs.

    A lot or batch code (`find_lot_codes`) is none of them, unless it has an SSN's shape.
    """
    out = list(_keyword_ids(text))
    if "ite" in text or "ITE" in text:
        out.extend(PatternMatch(m.start("code"), m.end("code"), "ID", "id_site") for m in _SITE_ID_RE.finditer(text))
    out.extend(_code_ids(text))
    out.extend(PatternMatch(m.start(), m.end(), "ID", "id_worldwide") for m in _WORLDWIDE_ID_RE.finditer(text))
    for m in _ID_DIGITS_RE.finditer(text):
        if not _is_compact_date(m.group()):  # yyyymmdd is left to DATE
            out.append(PatternMatch(m.start(), m.end(), "ID", "id_digits"))
    lots = find_lot_codes(text)
    if lots:
        out = [c for c in out if not any(s < c.end and c.start < e for s, e in lots)]
    out.extend(PatternMatch(m.start(), m.end(), "ID", "id_ssn") for m in _SSN_RE.finditer(text))
    return out
