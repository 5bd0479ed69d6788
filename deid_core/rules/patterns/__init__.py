"""Pattern detectors for PHI-shaped substrings: dates, ages, phones, e-mail, URLs, IPs, IDs.

Why this package exists: the rule layer is an *inverse* de-identifier. It masks
every token it cannot vouch for, and a token that overlaps a match found here
is masked and labelled with the match's category, which decides the
placeholder ([DATE], [PHONE], ...). A missed identifier leaks while an extra
match only costs readability, so the patterns lean towards recall. They still
keep clinical values (doses, lab values, vital signs, clock times, durations)
out of DATE/PHONE/ID where the context says so: those numbers are masked by a
separate digit rule anyway, and the only effect of a wrong category here is a
visibly wrong placeholder.

Date and age patterns are composed from small parts (month names, 1-2 digit
days, 2/4 digit years; "y.o.", "years old", "aged N"), as rule-based
de-identification of VigiBase narratives did, and extended with the shapes of
nursing notes (month/day without a year, ordinal days, space-separated
dates). Phone numbers combine the `phonenumbers` matcher with regexes for the
notations it cannot be relied on for.

One module per detector family; the families import only `common` (and
`ids` also `dates`, so that a yyyymmdd date is never an ID), and `detector`
imports them all:

* :mod:`.common` -- `PatternMatch`, unit words, look-around helpers, and the
  notes on regex speed;
* :mod:`.dates` -- DATE; :mod:`.ages` -- AGE; :mod:`.phones` -- PHONE;
* :mod:`.internet` -- EMAIL, URL, IP and social-media handles (as ID); :mod:`.spoken` -- phone
  numbers and e-mail addresses read out in words; :mod:`.ids` -- ID, and `find_lot_codes`,
  the lot and batch numbers that are no ID (kept by `rules.clinical`);
* :mod:`.detector` -- `PatternDetector`, which runs the enabled families and
  resolves overlaps, with `CATEGORIES` and `DEFAULT_PHONE_REGIONS`.

Callers import from this package (`from deid_core.rules.patterns import
PatternDetector`), not from the modules.
"""

from __future__ import annotations

from deid_core.rules.patterns.ages import find_ages
from deid_core.rules.patterns.common import PatternMatch
from deid_core.rules.patterns.dates import find_dates
from deid_core.rules.patterns.detector import (
    CATEGORIES,
    DEFAULT_PHONE_REGIONS,
    PatternDetector,
    _resolve,  # noqa: F401  (the overlap resolver, tested on its own)
)
from deid_core.rules.patterns.ids import find_ids, find_lot_codes
from deid_core.rules.patterns.internet import find_emails, find_handles, find_ips, find_urls
from deid_core.rules.patterns.spoken import SPOKEN_DETECTORS, find_spoken_contacts

__all__ = [
    "CATEGORIES",
    "DEFAULT_PHONE_REGIONS",
    "PatternDetector",
    "PatternMatch",
    "SPOKEN_DETECTORS",
    "find_ages",
    "find_dates",
    "find_emails",
    "find_handles",
    "find_ids",
    "find_lot_codes",
    "find_ips",
    "find_spoken_contacts",
    "find_urls",
]
