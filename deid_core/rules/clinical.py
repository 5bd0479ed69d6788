"""Clinical-value evidence: the parts of a narrative that are measurements, never identifiers.

The inverse rule masks every number, unit letter and unknown word, which
protects identifiers but destroys what a safety reviewer needs: "warfarin
5 mg", "INR 2.3", "Na 118 mmol/L", "for 3 days", "q6h", "HR 88". This
module finds such expressions so that the rules can call their tokens safe
with a reason of their own (`clinical:<kind>`). It never overrides a PHI
detector: the rule de-identifier runs the pattern (date, phone, ID, age >=
90) and context detectors first, and a token they claim stays masked.

Kinds of evidence:

* ``quantity``: a number followed by a unit ("40 mg", "13.2 g/dL",
  "12.5 x10^9/L", "95%", "38.5 °C", "3 days", "2 tabs"). Physical units
  are recognised by `pint`'s unit registry (a well-kept units library),
  kept to the units and decimal prefixes clinical narratives measure with
  (pint also parses "Ma" as megayear and "Kim" as kibimeter); dose forms
  and clinical count units it does not know come from a word list
  (`rules.clinical.dose_units`).
* ``analyte``: an analyte, vital sign or score followed by its value
  ("Na 118", "ALT 3x ULN", "BP 120/80", "GCS 15"), from a word list
  (`rules.clinical.analytes`); an earlier, baseline or reference value in
  parentheses ("(was 36)", "(baseline 1.6)", "(target range 2.0-3.0)"), a
  range after a target or reference word even where it could read as a date
  ("(target 2-3)", "(goal 15-20)"); a Snellen acuity with its eye or after an
  acuity word ("20/60 OD", "visual acuity 6/9"); a titre ("ANA 1:80").
* ``timing``: a dosing scheme ("500 mg 1-0-1"), a schedule ("q6h", "x2", "day 5", "week 2", "cycle 3", "2nd
  dose", "3rd day", "days 1-14", "at weeks 0, 2 and 6"), time to onset in words ("the next day", "a few hours
  later", "two weeks"), a dosing frequency ("once daily", "per day", "BID",
  "at night", "every 8 hours", "nocte", "mane", "TIW"; "OD" right after a dose), a clock time ("10:30", "3:10 AM", "at 1850",
  "@ 0300", "1130 am") or a nursing shift ("7a-7p"). A time of day is no
  identifier (Safe Harbor lists the elements of dates, not hours), and it
  carries the time to onset of a reaction within a day ("vaccinated at
  10:30, hives at 10:45"). A four-digit time needs a cue before it ("at",
  "@", "until") and valid hours and minutes; a year in that place
  ("since 2010") is claimed by the date detector first.
* ``blood pressure``: a systolic over diastolic pair without its cue, as
  vital-sign tables write it ("10:55 98/59 59 16"), kind ``analyte``: the
  first number 70-260, the second 30-160 and smaller. No date has that shape
  (neither part is a month or a day), so it is never a date's disguise.
* ``score``: a pain or severity score out of ten after its word ("pain
  8/10", "pain score of 7/10"), or written out ("2 out of 10"); alone,
  "8/10" may be a date and stays masked. The value after the word "score"
  ("Naranjo score was 7", "PHQ-9 score 22"), and a type, stage, grade or
  class ("type 1 diabetes", "CKD 3b", "NYHA class III"). A paired score
  after its name ("Apgars 8/9", both parts at most ten) is a value, not a
  date, kind ``analyte``.
* ``lot``: the product's lot or batch code after a "lot"/"batch" cue ("Lot
  EL1442", "lot # EK9231", "Lot number: 030M20A", "batch no. AB12-34"),
  found by `rules.patterns.find_lot_codes`; the cue itself is an ordinary
  word. A lot number names a product batch, not a person, and safety
  reviewers need it for batch signals (VAERS publishes it). Within a lot
  code every token is safe, even a piece that is on a name list ("ED-1234").
  "a lot", "a lot of" and "lots of" are no cue.
* ``designation``: a product or disease designation with digits ("COVID-19",
  "SARS-CoV-2", "mRNA-1273", "BNT162b2", "H1N1", "CYP2D6"), from a word list
  (`rules.clinical.designations`); without it the "19" of every "COVID-19"
  is a masked number. Also an HLA allele ("HLA-B*58:01"), a microbe's abbreviated
  genus with its species ("E. coli", "H. pylori"), St John's wort, and letters that
  name a thing in the words around them ("X-ray", "vitamin K", "hepatitis B",
  "T wave", "CAR-T").
* ``eponym``: the physician's name in "Bell's palsy", "Graves' disease", "Stevens-Johnson
  syndrome", "Coombs test", "NIKOLSKY SIGN" (`_EPONYM`): a name right before a condition or a
  test word. Not after a title ("Mrs Bell's palsy") or a capitalised word that may be a given name
  ("John Parkinson's disease"); a possessive only before a condition ("Smith's test results"
  stays a person's), two names only before "syndrome" or "disease", and the rule de-identifier
  drops a given name's possessive ("Maria's disease"). Like a lot code, it wins over the name lists.
* ``product``: an investigational product's code ("KTR-2291", "BRX-7710/placebo") in every mention
  of a report that names it as a product once: right before a dose, beside a placebo or a partner
  drug, or after "study of", "candidate". A site or subject number has another shape or no such mention.
* ``shorthand``: clinical shorthand written with a slash ("s/p", "c/o",
  "w/", "d/t", "S/O:", "A/P", "d/ced"), from a word list (`rules.clinical.shorthand`); its
  single letters are no initials. A slashed pair of letters not on the list
  ("J/S") is left to the inverse rule.

Every expression is taken whole or not at all: if a PHI detector claims any
of its tokens ("Towson, MD 21204"), none of them is called safe. A ZIP-shaped
value after an analyte that is also a US state code ("CA 90210") is not
taken as a lab value, nor is a value that reads as a date ("PT 8/14",
"level 3-12", "2014").

Two kinds are decided by the rule de-identifier, which knows the dictionary
flags: ``strength``, a bare number right after a complete drug name
("Allegra 180", "co-codamol 30/500"), and ``product``, a word no list knows
right before a dose ("Microgynon 30 mcg").

A lone number, a lone letter and any word outside such an expression are
left to the inverse rule. Single letters inside an expression ("mmol/L",
"K 3.2") are safe; a lone initial stays unsafe.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex as re

from deid_core.config import read_word_list
from deid_core.rules.patterns import find_lot_codes
from deid_core.rules.patterns.dates import HHMM, ROUND_HHMM, TIME_RANGE_JOINT, UK_DURATION_AFTER, UK_WEEKS_BEFORE
from deid_core.text.tokenize import Token, tokenize

#: English function words that `pint` happens to parse as units ("in" inch,
#: "at" technical atmosphere, "a" year, "are" 100 m2): never a unit here.
_NOT_UNITS = frozenset(
    {"a", "an", "at", "are", "as", "in", "is", "it", "be", "by", "do", "me", "mi", "pm", "am", "or", "of", "on",
     "to", "the", "and", "for", "he", "she", "we", "us", "no", "so", "up", "go", "hi", "ha", "ho", "bar", "ton"}
)
_NUMBER = r"\d+(?:[.,]\d+)?"
#: a number, a range ("5-10", "2 to 3") or a number with an exponent ("12.5x10^9", "3 x 10⁹")
_VALUE = rf"(?:{_NUMBER}(?:\s?(?:-|–|(?i:to))\s?{_NUMBER})?(?:\s?[x×*]\s?10\s?(?:\^|\*\*)?\s?[-−]?[0-9⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?)"
#: one unit word ("mg", "µmol", "°C", "%"), optionally with an exponent digit ("mm3")
_UNIT_WORD = r"(?:%|°\s?[CF]?|\*[CF](?![^\W_])|[^\W\d_]+(?:[23])?)"
_UNIT_EXPR = rf"{_UNIT_WORD}(?:\s?/\s?(?:{_NUMBER}\s?)?{_UNIT_WORD})*"
#: "40 mg", "45-year-old", "12.5 x10^9/L" (a unit may follow an exponent with a slash)
#: a number that continues "9/2" or "3-12" is part of a compound (a date, a fraction) and is
#: never judged on its own: "BC from 9/2 GM" is a date and a Gram stain, not 2 grams
_NOT_CONTINUED = r"(?<![\w.])(?<!\d\s?[/-]\s?)"
_QUANTITY = re.compile(rf"{_NOT_CONTINUED}{_VALUE}(?:\s|-)?(?P<unit>/?\s?{_UNIT_EXPR})(?![^\W_])")
#: a body temperature with a bare letter for its scale ("fever of 39.2 C", "T 101.3F"): pint reads "C"
#: as the coulomb, and a lone letter is otherwise an initial; the value must lie in a body's range
#: (`_BODY_TEMPERATURE`) and carry a decimal or follow a temperature word, so "Room 40 C" stays masked
_TEMPERATURE = re.compile(
    rf"{_NOT_CONTINUED}(?P<value>\d{{2,3}}(?P<decimal>[.,]\d{{1,2}})?)\s?(?P<scale>[CF])(?![^\W_])")
_TEMPERATURE_CUE = re.compile(r"(?i)\b(?:fever|febrile|pyrexi\w*|temp\w*|tmax|t)\b\W{0,3}(?:\w+\W{1,3}){0,2}$")
_BODY_TEMPERATURE = {"C": (34.0, 43.0), "F": (93.0, 110.0)}
_TIMING = re.compile(
    r"(?i)(?<![\w.])(?<!\d\s?[/-]\s?)(?:q\s?\d+(?:-\d+)?\s?(?:h|hr|hrs|hours?|d|days?|wk|weeks?|min)\b|[x×]\s?\d+\b|\d+\s?x\b"
    # "day 5", "Cycle 3", "POD2", and the signed days of transplant and cell-therapy narratives ("day +11",
    # "Day -3"); "C1D22", "C2 D8": the cycle and the day of a trial's schedule
    r"|(?:day|week|month|cycle|dose|course|visit|pod|hd)(?:\s?#?\s?|\s[+−-])\d+\b|c\d{1,2}\s?d-?\d{1,2}\b"
    # a gestational age in weeks and days ("39+2 weeks", "at 38+5", "GA 27+3")
    # (the digits first, then the cue behind them: a look-behind tried at every position is slow)
    r"|[2-4]\d\+[0-6](?:\s?(?:weeks?|wks?|w|/40)\b|(?<=\b(?:at|ga|gestation|gestational\sage|of)\s\d\d\+\d))"
    # "2nd dose", "3rd day", "1st cycle": the count of a dose or a day, not a date
    r"|\d{1,2}(?:st|nd|rd|th)[\s-]?(?:doses?|dosing|boosters?|shots?|injections?|infusions?|vaccinations?"
    r"|cycles?|courses?|lines?|days?|weeks?|months?|trimester|sessions?|visits?|hours?|episodes?|attempts?)\b"
    # time to onset in words: "the next day", "the day after", "a few hours later", "two weeks",
    # "throughout the day", "all day long"
    r"|\b(?:the\s+)?(?:same|next|following|previous|prior)\s+(?:day|morning|evening|night|week)\b"
    r"|\bthe\s+day\s+(?:after|before|of)\b"
    r"|\b(?:throughout|during|all|for|that|this|every)\s+(?:the\s+)?(?:day|days|night|week|weeks)(?:\s+long)?\b"
    r"|\b(?:a\s+few|a\s+couple\s+of|an?|few|several|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"\s+(?:more\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?)(?:\s+(?:later|after|before|ago))?\b)"
)
#: a clock time or a nursing shift; a four-digit 24-hour time only after a cue (see the module's docstring)
_CLOCK = re.compile(
    r"(?i)(?<![\w.:/-])(?:"
    r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?(?:am|pm|a\.m\.|p\.m\.|hrs?|h)(?![^\W_]))?"
    r"|(?:1[0-2]|0?[1-9])(?:[0-5]\d)?\s?(?:am|pm|a\.m\.|p\.m\.)(?![^\W_])"
    r"|(?:1[0-2]|0?[1-9])\s?[ap]\s?-\s?(?:1[0-2]|0?[1-9])\s?[ap](?![^\W_])"
    r"|(?<=(?:\b(?:at|by|until|till|since|around|approx|before|after|from|starting|started|stopped)|@|~)\s?"
    r"(?:(?:approx|aprox|appr)\.?\s?|approximately\s|about\s|around\s)?)"
    r"(?:[01]\d|2[0-3])[0-5]\d(?:\s?(?:hrs?|h)(?![^\W_]))?(?![^\W_]|[.,:/-]\d)"
    # a nursing shift or time range of four-digit times on the hour or a quarter ("1900-0700", "0700->1930"),
    # not a range of years ("1990-2000"), nor a subject number ("0142-0037")
    rf"|(?<![\w.,:/-])(?!(?:19|20)\d\d{TIME_RANGE_JOINT}(?:19|20)\d\d){ROUND_HHMM}{TIME_RANGE_JOINT}{ROUND_HHMM}"
    r"(?![^\W_]|[.,:/-]\d)"
    # the next time of a list after a cued one ("at 2100, 0500 and 0900"): a year there is the date detector's
    rf"|(?<=(?<![\w.,:/-]){HHMM}(?:,\s?|\s(?:and|&|or)\s|,\s(?:and|&|or)\s)){ROUND_HHMM}(?![^\W_]|[.,:/-]\d)"
    r")(?![:/]\d)"
)
#: a dosing frequency ("once daily", "per day", "twice a week", "QD", "BID", "at night", "every 8 hours")
_FREQUENCY = re.compile(
    r"(?i)(?<![^\W_])(?:"
    r"(?:once|twice|thrice|(?:three|four|\d+)\s?(?:x|times))(?:\s+(?:a|per|each|every))?\s+(?:day|week|month|hour|night)"
    r"|(?:once|twice|thrice)\s+(?:daily|weekly|monthly|nightly)"
    r"|(?:per|a|each)\s+(?:day|week|month|hour|night|dose)|daily|weekly|monthly|nightly"
    r"|at\s+(?:night|bedtime)|every\s+(?:other\s+day|morning|evening|night|\d+(?:-\d+)?\s+(?:hours?|days?|weeks?|months?))"
    r"|q\.?d\.?|b\.?i\.?d\.?|t\.?i\.?d\.?|q\.?i\.?d\.?|qhs|qam|qpm|qod|prn|bd|tds|qds"
    # morning and night (UK and Commonwealth prescriptions), three and two times a week, every n weeks
    r"|mane|nocte|tiw|biw|q[1-8]w|q[1-8]wk"
    r")(?![^\W_])"
)
#: units a product's dose is written in: "Synthroid 50 mcg", "Xarelto 20 mg", "Ventolin 2 puffs". Not
#: `ClinicalEvidence.is_unit`, which takes any physical unit: "Zorvex 5 miles" names no product
PRODUCT_DOSE_UNITS = frozenset({
    "mg", "mcg", "µg", "μg", "ug", "g", "gm", "ml", "iu", "units", "unit", "u", "tab", "tabs", "tablet",
    "tablets", "cap", "caps", "capsule", "capsules", "puff", "puffs", "drops", "patch", "meq", "mmol",
})
#: "OD" (once daily) and "OM"/"ON" (every morning, night) only right after a dose (the group ``f``): alone,
#: "OD" is also the right eye or an overdose, "ON" a preposition. The digits first: a look-behind tried at
#: every position cost a second per thousand reports
_DOSE_FREQUENCY = re.compile(
    r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?i:" + "|".join(sorted(PRODUCT_DOSE_UNITS, key=len, reverse=True)) + ")"
    r"\s(?P<f>OD|od|o\.d\.|OM|om|ON|on)(?![^\W_])"
)
#: an eponym of a disease, sign or test ("Bell's palsy", "Graves' disease", "Stevens-Johnson syndrome",
#: "Coombs test", "NIKOLSKY SIGN"): the surname of a physician long dead, not of anyone in the case.
#: The name must stand right before its head word; after a title ("Mrs Bell's palsy") or a capitalised
#: word that is no clinical lead word ("John Parkinson's disease") it may be a person's and stays masked.
#: A possessive only before the heads of a condition: "Smith's test results" is somebody's test.
_EPONYM_PART = r"\p{Lu}[\p{Ll}\p{M}]+(?:-\p{Lu}[\p{Ll}\p{M}]+)*"
_EPONYM_CONDITION = (r"syndrome|disease|palsy|sign|phenomenon|thyroiditis|encephalopathy|sarcoma|lymphoma|ulcer"
                     r"|triad|tetralogy|chorea|anomaly|neuralgia|contracture|dementia|paralysis"
                     r"|neuroma|tumou?r|arteritis|cyst|nodes?")
_EPONYM_TOOL = r"test|scale|classification|nomogram|criteria|grade|grading|score|manoeuvre|maneuver|stain"
#: a device named after its maker or inventor ("Quinton cath", "Passy-Muir valve", "Hickman line", "Swan Ganz
#: catheter", "Jackson-Pratt drain"): the head word is the device's kind; no "pump" or "port", which end
#: place names ("Short Pump", "Glen Port")
_EPONYM_DEVICE = r"catheters?|caths?|valves?|lines?|drains?|shunts?"
_EPONYM = re.compile(
    rf"(?<![\w'’.-])(?:(?P<name>{_EPONYM_PART})(?:['’]s?)?\s+(?i:{_EPONYM_CONDITION})"
    # two names only before a syndrome or disease ("Ramsay Hunt syndrome") or a device ("Passy Muir valve"):
    # "John Smith test" is a person's
    rf"|(?P<name>{_EPONYM_PART}\s{_EPONYM_PART})\s+(?i:syndrome|disease|{_EPONYM_DEVICE})"
    rf"|(?P<name>{_EPONYM_PART})\s+(?i:{_EPONYM_TOOL}|{_EPONYM_DEVICE}))(?![^\W_])"
    # a report written in capitals: "NIKOLSKY SIGN", "BELL'S PALSY", "PASSY MUIR VALVE"
    rf"|(?<![\w'’.-])(?P<name>\p{{Lu}}{{3,}}(?:[- ]\p{{Lu}}{{3,}})?)"
    r"(?:['’]S?)?\s+(?:SYNDROME|DISEASE|PALSY|SIGN|PHENOMENON|THYROIDITIS|ENCEPHALOPATHY|TEST"
    # in capitals only the heads that are no everyday word ("PULL OUT LINES", "CAROL ORDERED LINES")
    r"|CATHS?|CATHETERS?|VALVES?|DRAINS?)(?![^\W_])"
)
#: what may stand before an eponym although capitalised: a sentence's clinical opening word
_EPONYM_LEADS = frozenset({
    "dx", "diagnosis", "diagnosed", "suspected", "confirmed", "possible", "probable", "likely", "acute",
    "chronic", "atypical", "severe", "mild", "moderate", "typical", "incomplete", "complete", "recurrent",
    "known", "history", "hx", "pmh", "developed", "idiopathic", "juvenile", "adult", "early", "late", "new",
    "left", "right", "bilateral", "positive", "negative", "query", "impression", "assessment", "with", "and",
    "secondary", "primary", "classic", "classical", "refractory", "background", "also", "of", "no", "not",
})
_WORD_BEFORE = re.compile(r"([^\W\d_]+)[ \t]+$")
#: an investigational product's code ("KTR-2291", "BRX-7710", "ZTB-201"): letters, a hyphen and digits,
#: named as a product where it stands before a dose or beside a placebo or a partner drug
#: ("KTR-2291 240 mg", "BRX-7710/placebo", "ZTB-201 or placebo"); then every mention of the same
#: code in the report is the product, not an identifier
_PRODUCT_CODE = re.compile(r"(?<![\w-])(?P<code>\p{Lu}{2,5}-?\d{2,6}[a-z]?)(?![\w-]|[.,/]\d)")
_PRODUCT_CODE_NAMED = re.compile(
    r"(?i)\s?(?:/\s?placebo|\s(?:or|and|vs\.?|versus|plus|\+)\s+placebo|\s?\+\s?[^\W\d_]{4,}"
    r"|\s\d+(?:[.,]\d+)?\s?(?:mg|mcg|µg|ug|g|ml|mg/kg|mg/m2|units?|iu)(?![^\W_]))"
)
_PRODUCT_CODE_CUE = re.compile(r"(?i)\b(?:study|studies|trial|candidate|compound|drug|product|vaccine|of)\s+$")
#: a score out of ten ("8/10", "6.5/10")
_OUT_OF_TEN = r"(?:10|\d)(?:\.\d)?\s?/\s?10"
#: a pain or severity score out of ten, after its word: never read as the date "8/10" on its own
_SCORE = re.compile(
    r"(?i)\b(?:pain|score|severity|rated|rates|rating)(?:\s+(?:score|scale|level|rating|severity))?"
    r"(?:\s*[:=]\s*|(?:\s+(?:of|was|is|at|now|as|to|from|a|an))+\s+|\s+)"
    # a change of score may follow ("pain score 6/10 -> 3/10", "8/10 to 4/10")
    rf"(?P<value>{_OUT_OF_TEN}(?:\s?(?:->|→|to|then)\s?{_OUT_OF_TEN})*)(?![\w/]|\.\d)"
    # "2 out of 10" reads as no date: a score wherever it stands
    r"|(?<![\w.,/])(?:10|\d)(?:\.\d)?\s+out\s+of\s+10\b"
)
#: the value of any named score after the word "score" ("Naranjo score was 7", "PHQ-9 score 22",
#: "burden score of 9"): a count on a scale, never an identifier; a slash after it may be a date
_SCORE_VALUE = re.compile(
    r"(?i)\bscores?(?:\s*[:=]\s*|(?:\s+(?:of|was|is|at|now|were|remained|rose\s+to|fell\s+to))+\s+|\s+)"
    r"(?P<value>\d{1,3}(?:\.\d)?)(?![\w/]|[.,]\d)"
)
#: a type, stage, grade or class of a disease ("type 1 diabetes", "CKD 3b", "grade 3", "NYHA class III")
_STAGE = re.compile(
    r"(?i)\b(?:type|stage|grade|class|ckd|nyha|tanner|gold)\s?(?:\d{1,2}[a-d]?|(?-i:IV|V?I{1,3}|V)[a-d]?)(?![\w/]|[.,]\d)"
)
#: a schedule over several days, weeks or cycles ("days 1-14", "at weeks 0, 2 and 6", "cycles 1 to 4");
#: in lower case or capitals only: "Weeks 3" may be a surname and a number
_TIMING_LIST = re.compile(
    r"(?<![\w.])(?:(?:days|weeks|months|cycles|doses|courses|visits)|(?:DAYS|WEEKS|MONTHS|CYCLES|DOSES|COURSES|VISITS))\s?\d{1,3}(?:\s?(?:-|–|to)\s?\d{1,3})?"
    r"(?:\s?(?:,\s?and|,|and|&)\s?\d{1,3}(?:\s?(?:-|–|to)\s?\d{1,3})?)*(?![\w/]|[.,]\d)"
)
#: a dosing scheme, doses in the morning, at noon, in the evening (and at night), as European
#: prescriptions write them ("metformin 500 mg 1-0-1", "Novaminsulfon 500 mg 1-1-1-1", "1/2-0-1/2"):
#: three or four parts of at most 4 units each
_DOSING_SCHEME = re.compile(
    r"(?<![\w./-])(?:[0-4]|1/2|½|¼)(?:\s?-\s?(?:[0-4]|1/2|½|¼)){2,3}(?![\w/-]|[.,]\d)"
)
#: British duration shorthand, weeks, days or months ("2/52 history", "3/7 later", "for 2/52"); the
#: DATE detector leaves the same contexts alone (`rules.patterns.dates`)
_UK_DURATION = re.compile(
    "(?i)(?:" + "|".join(rf"(?<=\b{w} )" for w in UK_WEEKS_BEFORE) + r")\d{1,2}/52(?![\w/]|[.,]\d)"
    rf"|(?<![\w./])\d{{1,2}}/(?:52|12|7)(?=[ \t]*(?:{'|'.join(UK_DURATION_AFTER)})\b)"
)
#: an earlier, baseline or reference value in parentheses after a measurement ("(was 36)",
#: "(baseline 1.6)", "(target range 2.0-3.0)", "(ULN 40)"); a trailing word must be a unit
_REFERENCE_VALUE = re.compile(
    r"(?i)\(\s*(?:was|baseline|previously|prev(?:ious)?|prior|from|(?P<range_cue>ref(?:erence)?(?:\s+range)?|normal(?:\s+range)?"
    r"|nl|(?:target|goal|therapeutic)(?:\s+range)?|range)|uln|lln|n)\s*[:=]?\s*[<>≤≥]?\s*"
    rf"(?P<value>{_VALUE})(?:\s?(?P<unit>{_UNIT_EXPR}))?\s*\)"
)
#: a range after a word that names a reference or a target is that range, not a date ("INR 6.2
#: (target 2-3)", "trough 22.4 (goal 15-20)"); only with a dash: "(target 8/10)" stays date-like
_CUED_RANGE = re.compile(rf"{_NUMBER}\s?[-–]\s?{_NUMBER}")
#: a reference range in parentheses after a value, with a decimal on each side ("Hb 9.8 (13.0-17.0) g/dL",
#: "10.3 (1.8-7.5) x10^9/L"): the decimals keep dates ("(12-14)") and identifiers out
_REFERENCE_RANGE = re.compile(rf"\(\s*(?P<value>\d+[.,]\d+\s?[-–]\s?\d+[.,]\d+)(?:\s?(?P<unit>{_UNIT_EXPR}))?\s*\)")
#: a word of steadiness that may precede the link ("BP stable in the 90s", "HR mostly in the 100s"):
#: a short list rather than any word, so that not every number after a measurement's name passes
_STEADY = r"(?:stable|steady|mostly|mainly|consistently|generally|still|persistently|usually)"
#: what may stand between an analyte and its value ("Na 118", "Na: 118", "Na was 118", "Na of 118")
_LINK = (r"(?:\+{1,2}(?=\s|[:=~@-]|\d))?(?:\s*[:=~@-]+\s*|\s+(?:" + _STEADY + r"\s+)?(?:was|is|of|at|to|from|peaked at|rose to|fell to|dropped to|increased to"
         r"|decreased to|now|down to|up to|down from|up from|came back at|came back|returned at|between|btwn"
         # "in the 90s", "sats in the mid 90s", "HR in the low-100s", "in the upper 80s"
         r"|in the(?:\s+(?:low|mid|high|upper|lower))?|high|low"
         # "visual acuity fell from 20/40", "INR improved from 4.1"
         r"|(?:fell|rose|dropped|improved|worsened|increased|decreased|went)\s+(?:from|to)"
         # "BP has been in the 90s", "K remained 3.2", "HR running 110-120", "sats ranging 88-92%"
         # "BP has been stable in the 120s", "rr cont in the 30s"
         r"|(?:(?:has|have|had)\s+been|remain(?:s|ed)?|stay(?:s|ed)?|maintained|running|ranging|ranged|cont|continu(?:es|ed|ing))"
         r"(?:\s+" + _STEADY + r")?(?:\s+(?:at|in the|between))?)"
         r"(?:\s+|-(?=\d))|\s+|(?=\s?[<>≤≥]))")
#: one part of a vital-sign series: "60s", "60's", "7.47", ".25", a range of them ("50-60s", "120s-140s");
#: "teens" ("RR in the teens")
_SERIES_NUMBER = rf"(?:\d+0'?s|teens|{_NUMBER}|\.\d+)"
_SERIES_PART = rf"(?:{_SERIES_NUMBER}(?:\s?(?:-|–)\s?{_SERIES_NUMBER})?)"
#: an analyte's value: a number, a ratio or series ("120/80", "100-120/50-60s", "7.38/47/72"),
#: a multiple of a limit ("3x ULN"), with optional unit
_ANALYTE_VALUE = (
    rf"[<>≤≥~^]?\s?(?:{_VALUE}|{_SERIES_PART})(?:\s?/\s?{_SERIES_PART})*"
    rf"(?:\s?(?:[x×]|times)\s?(?:ULN|LLN|normal)\b|\s?%|\s?(?:{_UNIT_EXPR}))?"
)
#: a plural written with an apostrophe may follow the name ("Sat's in the 90's", "sbp's 110-130")
_AFTER_ANALYTE = re.compile(rf"(?i)(?:['’]s)?{_LINK}(?P<value>{_ANALYTE_VALUE})(?![^\W_])")
_TRAILING_UNIT = re.compile(rf"{_UNIT_EXPR}$")
_LIMIT = re.compile(r"(?i)ULN|LLN|normal")
_LEADING_NUMBER = re.compile(rf"^{_NUMBER}\s?")
#: a value that could be read as a date ("8/14", "3-12-07", "2014"): never trusted as a lab value
_DATE_LIKE = re.compile(r"(?<!\d)(?P<a>\d{1,2})\s?[/-]\s?(?P<b>\d{1,2})(?!\d)|(?<![\d.])(?:19|20)\d{2}(?![\d.])")
#: a blood pressure without its cue ("98/59", "187/95"); the values are checked in `_blood_pressure`
_BP_PAIR = re.compile(r"(?<![\w.,/-])(?P<sys>[7-9]\d|1\d\d|2[0-6]\d)\s?/\s?(?P<dia>[3-9]\d|1[0-6]\d)(?![\w/]|[.,]\d)")
#: a series of measured values joined by slashes, one of them with a decimal fraction: a blood gas
#: ("7.32/72/84/7/39", "7.25/42/50"), cardiac output and index ("5.2/3.06/1292", "CO/CI 5.6/2.67"); no date,
#: phone number or identifier is written with a decimal fraction between slashes
_DECIMAL_SERIES = re.compile(r"(?<![\w./-])-?(?:\d+(?:\.\d+)?|\.\d+)(?:/-?(?:\d+(?:\.\d+)?|\.\d+))+(?![\w/]|[.,]\d)")
_DECIMAL_PART = re.compile(r"\d?\.\d")
#: ... but a date of two parts may look like one: "11/21.93" (month/day.year), "3.12/2020" (day.month/year)
_DATE_AS_SERIES = re.compile(r"\d{1,2}/\d{1,2}\.(?:\d{2}|\d{4})|\d{1,2}\.\d{1,2}/(?:\d{2}|\d{4})")
#: an HLA allele ("HLA-B*58:01", "HLA-A*31:01", "HLA-B*1502"): the pharmacogenetic marker of a
#: severe skin reaction, written in the WHO nomenclature's fields; never an identifier
_HLA_ALLELE = re.compile(r"(?<![\w-])(?i:HLA)-?(?:[A-Z]{1,4}\d?)\*\d{2,4}(?::\d{2,3}){0,3}[A-Z]?(?![\w:])")
#: a Snellen visual acuity, 20 or 6 feet/metres over a distance, with the eye after it ("20/60 OD,
#: 20/80 OS", "6/9 OU") or after an acuity word ("visual acuity 6/9", "VA 20/40 and 20/25"); alone
#: "6/9" may be a date and stays masked
_ACUITY = r"(?:20\s?/\s?(?:[1-9]\d{1,2})|6\s?/\s?(?:[3-9]|[1-6]\d))(?:\s?[-+]\d)?"
_EYE = r"(?:OD|OS|OU)"
_SNELLEN = re.compile(
    rf"(?<![\w./-]){_ACUITY}\s?{_EYE}(?![\w/])"
    r"|(?i:\b(?:acuity|VA|vision|snellen))\b[^.;\n\d]{0,20}"
    rf"(?:{_ACUITY}(?:\s?{_EYE}\b)?(?:\s?(?:,|and|&)\s?)?)+(?<![\s,&])(?![\w/]|[.,]\d)"
)
#: a titre or a dilution ratio after its name ("ANA 1:80", "titre of 1:320", "epinephrine 1:100,000")
_TITRE = re.compile(
    r"(?i)\b(?:ANA|ANCA|titres?|titers?|dilution|epinephrine|adrenaline|adrenalin)\b\s*(?:of|was|at|is|[:=])?\s*"
    r"1\s?:\s?\d{1,3}(?:,\d{3})*(?![\w:]|[.,]\d)"
)
#: St John's wort (Hypericum perforatum), the herbal medicine PV reports name for its interactions
#: ("St. John's Wort", "St Johns wort", "Saint John's wort"): a product, no saint's place or person
#: (`rules.context` leaves it alone too)
SAINTS_HERB = re.compile(r"(?i)(?<![\w.])(?:st\.?|saint)\s+johns?['’]?s?\s+wort\b")
#: letters that name a thing, not a person, in the words around them: an X-ray, the T wave, vitamin D,
#: hepatitis B, influenza A, factor V, blood group or type A, CAR-T; an initial stays an initial elsewhere
_LETTER_DESIGNATION = re.compile(
    r"(?<![\w-])(?:[Xx]-?(?i:rays?)\b|(?i:vitamins?|hepatitis|hep|influenza|flu|factor|type|group|blood\s+group|CAR)[\s-]"
    r"(?-i:[A-E]|K|V|VIII|IX|X|XI|XIII|T|O|AB)(?![\w-]|\.\w)|(?-i:[PQRST]|ST)[\s-]waves?\b)"
)
#: an abbreviated species of microbe, the genus's capital and a full stop before its species ("E. coli",
#: "H. pylori", "S. aureus", "C. difficile"): the species epithets of the pathogens ADR and infection
#: reports name most (facts of the nomenclature, written here); other lower-case words stay as they are
_SPECIES = (
    "coli", "pylori", "aureus", "epidermidis", "difficile", "pneumoniae", "aeruginosa", "tuberculosis", "albicans",
    "glabrata", "auris", "faecalis", "faecium", "pyogenes", "agalactiae", "influenzae", "meningitidis",
    "monocytogenes", "jirovecii", "fumigatus", "neoformans", "gondii", "mirabilis", "cloacae", "marcescens",
    "baumannii", "maltophilia", "typhi", "enteritidis", "jejuni", "trachomatis", "gonorrhoeae", "pallidum",
    "burgdorferi", "perfringens", "botulinum", "tetani", "anthracis", "cereus", "avium", "abscessus", "vulgaris",
    "lugdunensis", "hominis", "oxytoca", "vivax", "falciparum", "malariae", "mansoni", "vaginalis", "pertussis",
)
_BINOMIAL = re.compile(rf"(?<![\w.])[A-Z]\.\s?(?:{'|'.join(_SPECIES)})\b")
#: expressions found by a regex alone, and their kind
_PLAIN_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_TIMING, "timing"), (_TIMING_LIST, "timing"), (_FREQUENCY, "timing"), (_CLOCK, "timing"), (_DOSING_SCHEME, "timing"), (_UK_DURATION, "timing"),
    (_SCORE, "score"),
    (_SCORE_VALUE, "score"), (_STAGE, "score"),
    (_HLA_ALLELE, "designation"), (SAINTS_HERB, "designation"), (_LETTER_DESIGNATION, "designation"),
    (_BINOMIAL, "designation"), (_SNELLEN, "analyte"), (_TITRE, "analyte"),
)
#: a score of two parts out of ten after its name ("Apgars 8/9"): the analytes whose slashed value is no date
_PAIRED_SCORES = frozenset({"apgar"})
_PAIRED_SCORE = re.compile(r"\s*(?P<a>\d{1,2})\s?/\s?(?P<b>\d{1,2})\s*$")
#: letters joined by slashes, as clinical shorthand is written ("s/p", "w/", "w/o", "n/v/d"); the last
#: part may be longer ("d/ced", "w/out"): only whole strings of the shorthand list count
_SLASHED = re.compile(r"(?<![^\W\d_]|/)[^\W\d_]{1,2}(?:/[^\W\d_]{1,2})*/(?:[^\W\d_]{1,4}(?![^\W\d_]|/)|(?![^\W\d_]|/))")
#: a ZIP code's shape: never a lab value after a word that is also a US state code ("CA 90210")
_ZIP = re.compile(r"\d{5}(?:-\d{4})?")


@dataclass(frozen=True)
class ClinicalSpan:
    """A character span of a clinical expression and its kind (see the module's docstring)."""

    start: int
    end: int
    kind: str


class ClinicalEvidence:
    """Finds clinical-value expressions in a text; built once from word lists."""

    def __init__(self, analytes: Iterable[str], dose_units: Iterable[str], state_codes: Iterable[str] = (),
                 designations: Iterable[str] = (), shorthand: Iterable[str] = ()) -> None:
        self.dose_units = frozenset(u.lower() for u in dose_units)
        names = sorted({a.lower() for a in analytes}, key=len, reverse=True)
        self.analytes = frozenset(names)
        #: analytes that are also state codes ("Ca"): a ZIP-shaped value after them is no lab value
        self.state_like = frozenset(c.lower() for c in state_codes) & self.analytes
        _registry()  # built here, with the other dictionaries, not inside the first report
        # analyte names are found by token (a set lookup per token; a regex over ~200 names,
        # case-insensitive, costs more than all the pattern detectors together)
        self._names_by_first: dict[str, list[tuple[str, ...]]] = {}
        for name in names:
            parts = tuple(t.lower for t in tokenize(name))
            if parts:
                self._names_by_first.setdefault(parts[0], []).append(parts)
        for options in self._names_by_first.values():
            options.sort(key=len, reverse=True)
        #: names of one token, the only ones found in the plural ("MAPS", "GLUCOSES")
        self._one_word_names = frozenset(first for first, options in self._names_by_first.items()
                                         if any(len(p) == 1 for p in options))
        self._unit_cache: dict[str, bool] = {}
        #: ventilator and drip settings put the value first: "5 peep", "40% FiO2", "7.5peep"
        self._value_first = re.compile(
            rf"(?i){_NOT_CONTINUED}{_VALUE}\s?%?\s?(?P<name>\L<names>)(?![^\W_])", names=names or ["\x00"]
        )
        # "COVID-19", "Covid 19", "covid19": the parts of a designation, any of "-", " ", ".", "*" between
        forms = sorted({r"[-\s.*]?".join(re.escape(p) for p in re.findall(r"[^\W_]+", d)) for d in designations
                        if re.search(r"[^\W_]", d)}, key=len, reverse=True)
        self._designations = re.compile(rf"(?i)(?<![^\W_])(?:{'|'.join(forms)})(?![^\W_])") if forms else None
        self.shorthand = frozenset(w.lower() for w in shorthand if "/" in w)

    @classmethod
    def from_files(cls, analytes: Path, dose_units: Path, designations: Path | None = None,
                   shorthand: Path | None = None) -> ClinicalEvidence:
        import us  # the US state codes the dictionaries already use (places)

        states = [s.abbr for s in us.states.STATES_AND_TERRITORIES]
        return cls(read_word_list(analytes), read_word_list(dose_units), states,
                   read_word_list(designations) if designations is not None else (),
                   read_word_list(shorthand) if shorthand is not None else ())

    def curated(self, lowered: str) -> bool:
        """Is the word on the project's own analyte or dose-unit list (not merely a pint unit)?"""
        return lowered in self.analytes or lowered in self.dose_units

    def is_unit(self, word: str) -> bool:
        """A unit of measure or dose: the word list, else pint's registry (case as written)."""
        lowered = word.lower()
        if lowered in self.dose_units:
            return True
        if lowered in _NOT_UNITS:
            return False
        if word[-1:] in ("2", "3") and word[:-1].isalpha():  # "mm3", "m2": a power of a unit
            word = word[:-1]
        word = word.replace("µ", "u").replace("μ", "u")
        # notes written in capitals ("200 MG", "500CC"): units are case-sensitive in pint, so
        # an all-capital word is also tried in lower case
        return _pint_unit(word) or (len(word) > 1 and word.isupper() and _pint_unit(lowered))

    def _unit_expression(self, expr: str) -> bool:
        """Is every part of "mg/kg/day", "mmol/L", "mg/24 h" a unit?"""
        known = self._unit_cache.get(expr)
        if known is None:
            parts = [_LEADING_NUMBER.sub("", p.strip()) for p in expr.split("/") if p.strip()]  # "24 h" -> "h"
            # "°C", and "*F" as typed for a degree sign
            known = bool(parts) and all(p == "%" or p[:1] in ("°", "*") or self.is_unit(p) for p in parts)
            if len(self._unit_cache) < 65536:
                self._unit_cache[expr] = known
        return known

    def _analyte_names(self, text: str, tokens: Sequence[Token]) -> Iterator[tuple[int, int, str]]:
        """(start, end, name) of each analyte name in the text, by token."""
        lowered = [t.lower for t in tokens]
        for i, first in enumerate(lowered):
            if tokens[i].start and text[tokens[i].start - 1] == ".":
                continue
            options = self._names_by_first.get(first)
            if options is None:
                # a plural ("MAPS >60", "GLUCOSES 170'S"): only a one-word name
                if len(first) > 3 and first.endswith("s") and first[:-1] in self._one_word_names:
                    yield tokens[i].start, tokens[i].end, first[:-1]
                continue
            for parts in options:
                k = i + len(parts)
                if tuple(lowered[i:k]) == parts and all(
                    tokens[j + 1].start - tokens[j].end <= 1 for j in range(i, k - 1)
                ):
                    yield tokens[i].start, tokens[k - 1].end, " ".join(parts)
                    break

    def find(self, text: str, tokens: Sequence[Token] | None = None) -> list[ClinicalSpan]:
        """Clinical expressions in `text`, sorted by start (they may overlap).

        `tokens`: the text's tokens when the caller has them (the rules do).
        """
        if tokens is None:
            tokens = tokenize(text)
        out: list[ClinicalSpan] = []
        for m in _QUANTITY.finditer(text):
            if self._unit_expression(m.group("unit")) and not _falling_range(m.group()):
                out.append(ClinicalSpan(m.start(), m.end(), "quantity"))
        for m in _TEMPERATURE.finditer(text):
            low, high = _BODY_TEMPERATURE[m.group("scale")]
            if low <= float(m.group("value").replace(",", ".")) <= high and (
                    m.group("decimal") or _TEMPERATURE_CUE.search(text, max(0, m.start() - 30), m.start())):
                out.append(ClinicalSpan(m.start(), m.end(), "quantity"))
        for start, name_end, name in self._analyte_names(text, tokens):
            m = _AFTER_ANALYTE.match(text, name_end)
            if m is None:
                continue
            value = m.group("value")
            if name in self.state_like and _ZIP.fullmatch(value.strip()):
                continue
            if _date_like(value) and not (name in _PAIRED_SCORES and _paired_score(value)):
                continue
            unit = _TRAILING_UNIT.search(value)
            # a trailing word after the value must be a unit, else only the number is the value
            end = m.end()
            if (unit and not _LIMIT.fullmatch(unit.group()) and not self._unit_expression(unit.group())
                    and unit.group().lower() != "teens"):  # "RR in the teens": the word is the value
                end = m.start("value") + unit.start()
                while end > start and text[end - 1].isspace():
                    end -= 1
            out.append(ClinicalSpan(start, end, "analyte"))
        for m in self._value_first.finditer(text):
            # a name of one or two letters glued to a number is a code, not a setting: "Studio 19k",
            # the postcode "KA0 7BS"; "5 peep", "40% FiO2", "7.5peep" keep theirs
            if len(m.group("name")) <= 2 and not text[m.start("name") - 1].isspace():
                continue
            out.append(ClinicalSpan(m.start(), m.end(), "analyte"))
        for rx, kind in _PLAIN_KINDS:
            out.extend(ClinicalSpan(m.start(), m.end(), kind) for m in rx.finditer(text))
        out.extend(ClinicalSpan(m.start("f"), m.end("f"), "timing") for m in _DOSE_FREQUENCY.finditer(text))
        if "(" in text:
            for m in (*_REFERENCE_VALUE.finditer(text), *_REFERENCE_RANGE.finditer(text)):
                unit = m.group("unit")
                cued_range = bool(m.groupdict().get("range_cue")) and bool(_CUED_RANGE.fullmatch(m.group("value")))
                if (_date_like(m.group("value")) and not cued_range) or (
                        unit is not None and not self._unit_expression(unit)):
                    continue
                out.append(ClinicalSpan(m.start(), m.end(), "analyte"))
        if "/" in text:
            out.extend(ClinicalSpan(m.start(), m.end(), "analyte") for m in _BP_PAIR.finditer(text)
                       if int(m.group("sys")) > int(m.group("dia")))
            out.extend(ClinicalSpan(m.start(), m.end(), "analyte") for m in _DECIMAL_SERIES.finditer(text)
                       if _DECIMAL_PART.search(m.group()) and not _DATE_AS_SERIES.fullmatch(m.group()))
        for start, end in find_lot_codes(text):
            out.append(ClinicalSpan(start, end, "lot"))
        if self._designations is not None:
            for m in self._designations.finditer(text):
                out.append(ClinicalSpan(m.start(), m.end(), "designation"))
        if self.shorthand and "/" in text:
            for m in _SLASHED.finditer(text):
                if m.group().lower() in self.shorthand:
                    out.append(ClinicalSpan(m.start(), m.end(), "shorthand"))
        out.extend(_eponyms(text))
        out.extend(_product_codes(text))
        out.sort(key=lambda s: (s.start, s.end))
        return out


def _eponyms(text: str) -> Iterator[ClinicalSpan]:
    """The names of "Bell's palsy", "Stevens-Johnson syndrome", "Coombs test" (`_EPONYM`)."""
    for m in _EPONYM.finditer(text):
        start = m.start("name")
        first = text[start:m.end("name")].split(" ", 1)
        if len(first) == 2 and first[0].lower() in _EPONYM_LEADS:  # "Dx Guillain-Barré syndrome"
            start += len(first[0]) + 1
        # a title before it ("Mrs Bell's palsy") needs no check here: the titled-name detector claims the
        # name first, and a clinical expression a PHI detector touches is never trusted
        word = _WORD_BEFORE.search(text, max(0, start - 30), start)
        if word is not None and word.group(1)[:1].isupper() and word.group(1).lower() not in _EPONYM_LEADS \
                and not (word.group(1).isupper() and m.group("name").isupper()):
            continue
        yield ClinicalSpan(start, m.end("name"), "eponym")


def _product_codes(text: str) -> Iterator[ClinicalSpan]:
    """Every mention of an investigational code that the report names as a product once (`_PRODUCT_CODE`)."""
    found = list(_PRODUCT_CODE.finditer(text))
    named = {m.group("code") for m in found
             if _PRODUCT_CODE_NAMED.match(text, m.end())
             or _PRODUCT_CODE_CUE.search(text, max(0, m.start() - 20), m.start())}
    for m in found:
        if m.group("code") in named:
            yield ClinicalSpan(m.start(), m.end(), "product")


_RANGE = re.compile(rf"^({_NUMBER})\s?(?:-|–|to)\s?({_NUMBER})")


def _falling_range(quantity: str) -> bool:
    """"12-3 x" is no range of 12 to 3 (a date, more likely): a range rises."""
    m = _RANGE.match(quantity)
    return bool(m) and float(m.group(1).replace(",", ".")) > float(m.group(2).replace(",", "."))


def _paired_score(value: str) -> bool:
    """Two parts of at most ten ("8/9"): a paired score such as Apgar's at 1 and 5 minutes."""
    m = _PAIRED_SCORE.fullmatch(value)
    return m is not None and int(m.group("a")) <= 10 and int(m.group("b")) <= 10


def _date_like(value: str) -> bool:
    """"8/14", "12-3" (a month and a day either way round) or a year: a date detector may have missed it."""
    for m in _DATE_LIKE.finditer(value):
        if m.group("a") is None:
            return True
        a, b = int(m.group("a")), int(m.group("b"))
        if (1 <= a <= 12 and 1 <= b <= 31) or (1 <= a <= 31 and 1 <= b <= 12):
            return True
    return False


@functools.lru_cache(maxsize=1)
def _registry():  # type: ignore[no-untyped-def]
    import pint  # the registry takes about a second to build: once per process

    return pint.UnitRegistry(autoconvert_offset_to_baseunit=True)


#: pint units a narrative measures with; anything else pint knows (barn, tesla,
#: "Ma" megayear, "Kim" kibimeter, "Ed" exaday) is not taken as a unit
_CLINICAL_UNITS = frozenset({
    "gram", "liter", "mole", "meter", "second", "minute", "hour", "day", "week", "month", "year",
    "millimeter_Hg", "pascal", "standard_atmosphere", "degree_Celsius", "degree_Fahrenheit", "percent",
    "ppm", "enzyme_unit", "calorie", "cubic_centimeter", "gray", "hertz", "becquerel", "equivalent",
})
_CALENDAR = frozenset({"minute", "hour", "day", "week", "month", "year"})
#: decimal prefixes of clinical quantities (mega-, exa-, kibi- ... are not)
_CLINICAL_PREFIXES = ("", "milli", "micro", "nano", "pico", "femto", "centi", "deci", "kilo")


@functools.lru_cache(maxsize=65536)
def _pint_unit(word: str) -> bool:
    if not word or not word.isalpha() or len(word) > 12:
        return False
    try:
        name = str(_registry().parse_units(word))
    except Exception:  # noqa: BLE001 - pint raises several error types for "not a unit"
        return False
    if name in _CLINICAL_UNITS:
        return True
    # prefixed units: "mg", "µmol", "kPa", "ms"; never a prefixed calendar unit ("ma" would be a milliyear)
    return any(name.startswith(p) and name[len(p):] in _CLINICAL_UNITS - _CALENDAR for p in _CLINICAL_PREFIXES if p)
