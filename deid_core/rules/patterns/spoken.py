"""Phone numbers and e-mail addresses written out in words, as call transcripts give them.

Why: pharmacovigilance call centres and patient-support programmes transcribe
voicemails and calls ("call me on five five five, oh one four four", "it's
bert underscore fig at example dot com"). Each word is an everyday word ("five",
"at", "dot"), so no list masks it, and the digit and e-mail patterns never see
a digit or an "@". The spoken forms are regular enough for two patterns:

* a PHONE is a run of at least seven spoken digits ("zero"/"oh"/"o" to
  "nine", "double"/"triple" before one), separated by spaces, commas or
  hyphens, with "area code" and three digits before or after it;
* an EMAIL is a local part of words joined by spoken separators
  ("underscore", "dot", "dash", "hyphen"), then "at", a domain of one or more
  words joined by "dot", and "dot" plus a known top-level word ("com", "org",
  "net", "edu", "gov", a two-letter country code).

Counted digits ("2 doses, three times a day") never reach seven in a row.
"""

from __future__ import annotations

import re

from deid_core.rules.patterns.common import PatternMatch

_DIGIT = r"(?:zero|oh|o|one|two|three|four|five|six|seven|eight|nine)"
_REPEAT = r"(?:(?:double|triple)[ -])?"
_SEP = r"(?:[ \t]*[,\-][ \t]*|[ \t]+)"
#: seven spoken digits or more (a doubled digit counts once here, which only errs towards fewer matches)
_AREA_CODE = rf"area[ \t]+code{_SEP}{_DIGIT}(?:{_SEP}{_DIGIT}){{2}}"
_SPOKEN_PHONE_RE = re.compile(
    rf"(?i)(?<![^\W\d_])(?:area[ \t]+code[ \t]+)?{_REPEAT}{_DIGIT}(?:{_SEP}{_REPEAT}{_DIGIT}){{6,}}"
    rf"(?:{_SEP}{_AREA_CODE})?(?![^\W\d_])"
)
_DIGIT_RUN_RE = re.compile(rf"(?i)(?<![^\W\d_]){_REPEAT}{_DIGIT}(?:{_SEP}{_REPEAT}{_DIGIT})*(?![^\W\d_])")
_WORD = r"[a-z0-9]+"
_JOIN = r"[ \t]+(?:underscore|dot|dash|hyphen|period)[ \t]+"
_TLD = r"(?:com|org|net|edu|gov|info|[a-z]{2})"
_SPOKEN_EMAIL_RE = re.compile(
    rf"(?i)(?<![^\W\d_]){_WORD}(?:{_JOIN}{_WORD})*[ \t]+at[ \t]+{_WORD}(?:[ \t]+dot[ \t]+{_WORD})*[ \t]+dot[ \t]+{_TLD}(?![^\W\d_])"
)


#: the detectors of this module: their matches are words, which the rules' deidentifier never lets the
#: network release (the reason family "pattern", as for e-mail and URL matches)
SPOKEN_DETECTORS = frozenset({"phone_spoken", "email_spoken"})


def find_spoken_contacts(text: str) -> list[PatternMatch]:
    """Spoken phone numbers (PHONE) and e-mail addresses (EMAIL), whole."""
    low = text.lower()
    out: list[PatternMatch] = []
    if " dot " in low and " at " in low:
        out.extend(PatternMatch(m.start(), m.end(), "EMAIL", "email_spoken") for m in _SPOKEN_EMAIL_RE.finditer(text))
    if any(w in low for w in ("five", "four", "nine", "seven", "eight", "six", "three", "two", "one", "zero")):
        for m in _SPOKEN_PHONE_RE.finditer(text):
            # the digits only: "area code" is the cue, not part of the number
            out.extend(PatternMatch(d.start(), d.end(), "PHONE", "phone_spoken")
                       for d in _DIGIT_RUN_RE.finditer(text, m.start(), m.end()))
    return out
