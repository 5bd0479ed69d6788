"""The combining pattern detector: runs every detector family and resolves overlaps.

Why this module exists: the rule layer is an *inverse* de-identifier. It
masks every token it cannot vouch for, and a token that overlaps a match
found here is masked and labelled with the match's category, which decides
the placeholder ([DATE], [PHONE], ...). The families in the sibling modules
report candidates that may overlap; `PatternDetector.find` runs those of the
enabled categories and keeps a non-overlapping subset: longer spans win, then
the more specific category (`_PRIORITY`), then the more specific detector
(`_DETECTOR_RANK`). `CATEGORIES` lists every category a configuration may
enable, and `DEFAULT_PHONE_REGIONS` the regions whose numbering plans the
phone family tries by default.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from deid_core.categories import PATTERN_CATEGORIES as CATEGORIES
from deid_core.rules.patterns.ages import find_ages
from deid_core.rules.patterns.common import PatternMatch
from deid_core.rules.patterns.dates import _NUMERIC_DATE_DETECTORS, find_dates
from deid_core.rules.patterns.ids import find_ids
from deid_core.rules.patterns.internet import find_emails, find_handles, find_ips, find_urls
from deid_core.rules.patterns.phones import _PhoneFinder
from deid_core.rules.patterns.spoken import find_spoken_contacts

#: Equal-length overlap tie-break (lower wins): the more specific shape first.
_PRIORITY = {"EMAIL": 0, "URL": 1, "IP": 2, "PHONE": 3, "DATE": 4, "AGE": 5, "ID": 6}

DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "SE", "IN", "AU", "CA", "JP", "BR")


#: Among identical spans of one category, report the most specific detector
#: ("MRN 445566" is an id_keyword match rather than a bare digit run).
_DETECTOR_RANK = {
    name: i
    for i, name in enumerate(
        (
            "id_keyword", "id_ssn", "id_code", "id_digits", "social_handle",
            "url_scheme", "url_www", "url_domain",
            "phone_keyword", "phone_lib", "phone_nanp", "phone_intl", "phone_local", "phone_spoken",
            "date_text", "date_iso", "date_numeric", "date_roman", "date_compact", "date_spaced", "date_month_year",
            "date_period", "date_month_day", "date_year", "date_ordinal", "date_month_name",
        )
    )
}


def _resolve(candidates: Iterable[PatternMatch]) -> list[PatternMatch]:
    """Non-overlapping subset sorted by start: longer spans win, then category priority."""
    ranked = sorted(
        candidates,
        key=lambda c: (c.start - c.end, _PRIORITY[c.category], c.start, _DETECTOR_RANK.get(c.detector, 99), c.detector),
    )
    chosen: list[PatternMatch] = []
    starts: list[int] = []
    for c in ranked:
        if c.end <= c.start:
            continue
        i = bisect.bisect_left(starts, c.start)
        if i > 0 and chosen[i - 1].end > c.start:
            continue
        if i < len(chosen) and chosen[i].start < c.end:
            continue
        starts.insert(i, c.start)
        chosen.insert(i, c)
    return chosen


def _cover(text: str, matches: Iterable[PatternMatch]) -> bytearray:
    """Per-character mask of the given spans, for cheap overlap tests."""
    cover = bytearray(len(text))
    for m in matches:
        cover[m.start : m.end] = b"\x01" * (m.end - m.start)
    return cover


class PatternDetector:
    """Finds DATE/AGE/PHONE/EMAIL/URL/IP/ID spans in free text.

    `enabled` restricts the categories reported; `phone_regions` are the
    regions whose numbering plans phonenumbers' matcher tries.
    """

    def __init__(
        self, enabled: Iterable[str] = CATEGORIES, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS
    ) -> None:
        self.enabled = frozenset(enabled)
        unknown = self.enabled - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown pattern categories: {sorted(unknown)}")
        self._phones = _PhoneFinder(phone_regions)

    def find(self, text: str) -> list[PatternMatch]:
        """Non-overlapping matches sorted by start. Where candidates overlap, keep the longer one;
        on equal length prefer EMAIL > URL > IP > PHONE > DATE > AGE > ID."""
        if not text or not self.enabled:
            return []
        en = self.enabled
        cands: list[PatternMatch] = []
        dates = find_dates(text) if ("DATE" in en or "PHONE" in en) else []
        if "DATE" in en:
            cands.extend(dates)
        if "AGE" in en:
            cands.extend(find_ages(text))
        if "PHONE" in en:
            # a number inside a date, numeric or written ("28 Oct, 88 0700-1245"), opens no phone number
            numeric = [d for d in dates if d.detector in _NUMERIC_DATE_DETECTORS or d.detector == "date_text"]
            cands.extend(self._phones.find(text, _cover(text, numeric)))
        if "EMAIL" in en or "PHONE" in en:
            # "five five five, oh one four four", "bert underscore fig at example dot com"
            cands.extend(m for m in find_spoken_contacts(text) if m.category in en)
        if "EMAIL" in en:
            cands.extend(find_emails(text))
        if "URL" in en:
            cands.extend(find_urls(text))
        if "IP" in en:
            cands.extend(find_ips(text))
        if "ID" in en:
            ids = find_ids(text)
            keyword = [m for m in ids if m.detector == "id_keyword"]
            if keyword:
                # A code after "MRN", "SSN", "case no." is an identifier even where
                # it looks like a date, a phone number or an age ("MRN 20140112").
                # "lot" and "batch" are no ID keywords (a lot number names a product
                # batch, not a person): a date after them stays a DATE ("lot 12/03/2019").
                kw_cover = _cover(text, keyword)
                cands = [
                    c
                    for c in cands
                    if c.category not in ("PHONE", "DATE", "AGE") or 1 not in kw_cover[c.start : c.end]
                ]
            cands.extend(ids)
            cands.extend(find_handles(text))
        return _resolve(cands)
