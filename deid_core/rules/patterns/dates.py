"""DATE detection: dates with a month name, numeric dates, partial dates and years.

Why this module exists: dates are the most varied identifier in a narrative
and the largest detector family. Date patterns are composed from small parts
(month names, 1-2 digit days, 2/4 digit years), as rule-based
de-identification of VigiBase narratives did, and extended with the shapes of
nursing notes (month/day without a year, ordinal days, space-separated
dates). Clinical values (doses, lab values, vital signs, clock times,
durations) are kept out of DATE where the context says so; the only effect
of a wrong DATE on such a number is a visibly wrong placeholder, because the
number is masked by a separate digit rule anyway, while a missed date leaks.

`find_dates` yields every plausible (possibly overlapping) reading; the
combining detector in `deid_core.rules.patterns.detector` keeps the longest.
It also uses `_NUMERIC_DATE_DETECTORS` to keep numeric dates out of PHONE,
and the ID family uses `_is_compact_date` to leave yyyymmdd dates to DATE.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator

import regex as re

from deid_core.rules.patterns.common import (
    _NOT_UNIT,
    _UNIT_AHEAD,
    _UNIT_AHEAD_RE,
    PatternMatch,
    _followed_by,
    _preceded_by,
)
from deid_core.text.clauses import clause_around

_YEAR4 = r"(?:19|20)\d{2}"
_YEAR = rf"(?:{_YEAR4}|['’]\d{{2}}|\d{{2}})(?!\d)"

# Dates with a month name are grown outwards from each month word: one scan
# for month words, then anchored look-ups for a day or a year on either side.
# Forms: 12-JAN-2014, 12 Jan 14, 12JAN2014, 24th of January 2014, 24 January,
# January 24, 2014, Sept. 3rd, 2019, Jan 24, jan2014, Jan-2014, Jan '14,
# May of 2014, 2014 oct, 2014-Jan-12.
_MONTH_WORD_RE = re.compile(
    r"(?<![^\W\d_])(?P<mon>j(?:an(?:uary)?|u(?:ne?|ly?))|feb(?:ruary)?|ma(?:r(?:ch)?|y)|a(?:pr(?:il)?|ug(?:ust)?)"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![^\W\d_])\.?",
    re.IGNORECASE,
)
_DAY_BEFORE_RE = re.compile(r"(?<![\w.,/:])(?P<day>\d{1,2})(?i:st|nd|rd|th)?(?i:\s+of\s+(?:the\s+)?|[\s./-]{0,3})$")
_YEAR_BEFORE_RE = re.compile(r"(?<![\w.,/:])(?:19|20)\d{2}[\s./-]{0,3}$")
_DAY_AFTER_RE = re.compile(
    rf"[\s./-]{{0,3}}(?P<day>\d{{1,2}})(?i:st|nd|rd|th)?(?![^\W_])"
    rf"(?:(?:,\s*|,?[\s./-]{{1,3}})(?P<year>{_YEAR}){_NOT_UNIT})?"
)
_DAY_RANGE_AFTER_RE = re.compile(r"[ \t]?[-–][ \t]?(?P<day>\d{1,2})(?!\d|[:.,/]\d)")
_RANGE_BEFORE_RE = re.compile(r"\d[ \t]?[-–][ \t]?$")
_YEAR_AFTER_RE = re.compile(rf"[\s.,/-]{{0,3}}(?i:of\s+)?(?:{_YEAR4}|['’]\d{{2}})(?!\d){_NOT_UNIT}")
_ANY_YEAR_AFTER_RE = re.compile(rf"[\s.,/-]{{0,3}}{_YEAR}{_NOT_UNIT}")
#: Month words that are also ordinary English: in lower case they count only
#: when a number follows them inside the match ("may 2014", not "may be").
_AMBIGUOUS_MONTHS = frozenset({"may", "mar", "march"})
#: Full month names that stand alone as a DATE ("since January"); May and
#: March are left out because they are also common English words.
_FULL_MONTH_NAMES = frozenset("january february april june july august september october november december".split())

# Month names of the other languages safety narratives are written or quoted in (German, French,
# Spanish, Italian, Portuguese, Dutch, Swedish, Danish, Norwegian, Finnish, Polish, Czech, Romanian,
# Hungarian, Turkish; Polish and Czech in the genitive a day takes), with a few unambiguous
# abbreviations. Many are also words or names elsewhere ("mars", "mayo", "Maja", "Mei"), so they
# make a date only beside a day or a year: "1 maj", "15. März 2023", "5 de mayo", "le 3 mars",
# "março de 2024". English spellings the English scan already finds ("april", "august") are left out.
_INTERNATIONAL_MONTHS = (
    "januar jänner februar märz maerz mai juni juli oktober dezember "  # German (and Danish/Norwegian)
    "janvier février fevrier mars avril juin juillet août aout septembre octobre novembre décembre "
    "decembre "  # French
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre "
    "diciembre "  # Spanish
    "gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre "  # Italian
    "janeiro fevereiro março maio junho julho setembro outubro novembro dezembro "  # Portuguese
    "januari februari maart mei augustus "  # Dutch
    "augusti maj marts desember "  # Swedish, Danish, Norwegian
    "tammikuuta helmikuuta maaliskuuta huhtikuuta toukokuuta kesäkuuta heinäkuuta elokuuta "
    "syyskuuta lokakuuta marraskuuta joulukuuta "  # Finnish
    "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada "
    "grudnia "  # Polish
    "ledna února března dubna května června července srpna září října listopadu prosince "  # Czech
    "ianuarie februarie martie aprilie iunie iulie septembrie octombrie noiembrie decembrie "  # Romanian
    "január február március április május június július augusztus szeptember október "  # Hungarian
    "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık"  # Turkish
).split()
#: abbreviations, which may carry a full stop ("3. Okt. 2023", "12 janv.")
_INTERNATIONAL_MONTH_ABBREVIATIONS = frozenset({"janv", "févr", "fevr", "avr", "juil", "déc", "mrt", "okt", "dez"})
_INTERNATIONAL_MONTH_WORDS = frozenset(_INTERNATIONAL_MONTHS) | _INTERNATIONAL_MONTH_ABBREVIATIONS
#: between such a month and its year: "März 2023", "mayo de 2023", "Okt. 2023"
_MONTH_YEAR_SEP = r"(?:[ \t]+(?i:de|del)[ \t]+|[ \t.,/-]{1,3})"
# The scan starts from the digits, which few texts have many of, rather than from ~200 month words
# at every position: a day and the word after it ("1 maj", "15. März", "5 de mayo", "3 de março", "le 3
# mars"), or a word and the year after it ("März 2023", "mayo de 2023"), the word looked up in a set.
_DAY_THEN_WORD_RE = re.compile(
    r"(?<![\w.,/:])(?P<day>\d{1,2})(?:\.|º|°|er|(?i:[ \t]+de))?[ \t]{1,2}(?P<mon>[^\W\d_]{3,12})(?P<dot>\.)?"
    r"(?![^\W\d_])"
)
_YEAR4_ALONE_RE = re.compile(rf"(?<![\w.,/:-])(?:{_YEAR4})(?!\d)")
_WORD_BEFORE_YEAR_RE = re.compile(
    rf"(?<![^\W\d_])(?P<mon>[^\W\d_]{{3,12}})(?P<dot>\.)?{_MONTH_YEAR_SEP}$"
)
#: the year after it: "März 2023", "mayo de 2023", "5. května 2024", "2 avril 1929"
_INTERNATIONAL_YEAR_AFTER_RE = re.compile(rf"{_MONTH_YEAR_SEP}(?:{_YEAR4})(?!\d)")

# Where a numeric date may start: not inside a number, a path or a clock time. A word's full stop
# or colon may come straight before it ("HX:7/29", "Westfield.7/28"); a date with a year may
# also run into the word before it ("labs on11/12/84", "fx3/95"), a month/day may not ("RUE4/5").
_AFTER_WORD_MARK = r"(?:(?<![\w.,/:])|(?<=[^\W\d_]{2}[.:]))"
_AFTER_WORD = r"(?:(?<![\w.,/:])|(?<=[^\W\d_]{2}[.:]?))"

# 1/8/14, 01/08/2014, 21.03.2020, 21.3.20, 9/30/20 (either day or month first)
_DATE_NUMERIC_RE = re.compile(
    _AFTER_WORD + r"(?P<a>\d{1,2})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2})(?!\d)(?![./-]\d)"
)
# 2014-01-12, 2014/01/12, 2014-01-12T08:30 (an attached ISO time is kept)
_DATE_ISO_RE = re.compile(
    r"(?<![\w.,/:])(?P<y>\d{4})(?P<sep>[./-])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?!\d)(?![./-]\d)"
    r"(?:T\d{2}(?::?\d{2}){1,2}(?:Z|[+-]\d{2}:?\d{2})?(?!\d))?"
)
# 03/2014, 3-2014
_DATE_MONTH_YEAR_RE = re.compile(rf"(?<![\w.,/:])(?P<m>\d{{1,2}})[./-](?P<y>\d{{4}})(?!\d)(?![./-]\d){_NOT_UNIT}")
# 5/90, 11/92: month and two-digit year (the second part cannot be a day), as histories write them
# ("AVR 6/91", "PTCA 11/85"); in a value's context it is a value ("PS 5/40")
_DATE_MONTH_SHORT_YEAR_RE = re.compile(_AFTER_WORD + r"(?P<m>\d{1,2})/(?P<y>\d{2})(?![\w/])(?![.,:]\d)")
# 20140112: yyyymmdd only; other 8-digit runs are left to the ID detector
_DATE_COMPACT_RE = re.compile(r"(?<![\w.,])\d{8}(?!\d)(?![.,]\d)")
# "FU 7 10 2003": d m yyyy with single spaces (4-digit year only, to stay
# clear of space-separated series of lab values)
_DATE_SPACED_RE = re.compile(r"(?<![\w.,/:-])(?P<a>\d{1,2})[ \t](?P<b>\d{1,2})[ \t](?P<y>\d{4})(?!\d)(?![.,:]\d)")
# 10/13, 8/23: month/day without a year, as nursing notes write them.
# Trade-off: "4/5" (a muscle-power score) and "10/13" (a date) look the same.
# The date reading is accepted whenever both parts are valid in either order
# and the context does not mark a value (a unit or "%" after it; "BP",
# "strength", "x", ... before it). A false DATE on a value only changes the
# placeholder of a number that is masked anyway; a missed date leaks.
_DATE_MONTH_DAY_RE = re.compile(_AFTER_WORD_MARK + r"(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\w/])(?![.,:]\d)")
# 28 XI 2023, 28.XI.2023, 3-IV-21: the month in Roman numerals, as Polish, Czech, Italian or Romanian
# reports write it. Spaces between the parts need a four-digit year ("5 X 10 mg" is a dose)
_ROMAN_MONTHS = {r: i for i, r in enumerate("I II III IV V VI VII VIII IX X XI XII".split(), 1)}
_DATE_ROMAN_MONTH_RE = re.compile(
    r"(?<![\w.,/:-])(?P<d>\d{1,2})(?P<sep>[ .\-/])(?P<m>XII|XI|X|IX|VIII|VII|VI|V|IV|III|II|I)(?P=sep)"
    r"(?P<y>(?:19|20)\d{2}|\d{2})(?!\d|[.,]\d)"
)
# 06.10., 15.03.: day.month. without a year, as German, Dutch or Nordic narratives write it. Two
# digits each, one of them with a leading zero, and the closing full stop: "K 3.5." and "Hb 12.10."
# are values, and a decimal with a leading zero in its fraction rarely ends a sentence
_DATE_DAY_MONTH_DOT_RE = re.compile(r"(?<![\w.,/:])(?P<d>\d{2})\.(?P<m>\d{2})\.(?!\d)")
#: the modes of a ventilator or of non-invasive ventilation ("BiPAP", "PSV", "SIMV"), named beside a
#: pressure pair that is then a setting, not a date ("bipap 10/5", "5/5 PSV/CPAP", "trialed on 5/5")
VENTILATOR_MODES = r"bi-?pap|c-?pap|psv|ipap|epap|pressure\s+support|simv|imv"
_VALUE_BEFORE_RE = re.compile(
    r"(?:\b(?:n?i?bp|b/p|abp|blood\s+pressure|pressures?|strength|power|motor|muscles?|scored?|"
    r"grades?|ratio|gcs|apgars?|pain|sats?|spo2|o2|hr|rr|pulse|temp|dilution|titers?|titres?|"
    r"vision|acuity|va|reflexes|dtrs?|rated?|ef|fio2|peep|ie|i:e|x|"
    # ventilator and non-invasive ventilation settings: "bipap 10/5", "PSV 13/10", "settings 15/5"
    rf"{VENTILATOR_MODES}|ps|a/c|ac|prvc|vent|ventilator|ventilation|settings?|"
    r"flow-?by|hob|head\s+of\s+(?:the\s+)?bed|rating|rates|"
    # "wean down to 10/5": what is weaned is a setting or a dose, never a date
    r"wean(?:ed|ing)?(?:\s+down)?\s+to|"
    # how far up the lungs crackles reach ("rales 1/3 up", "CXS 2/3"), pupils ("PERRLA 3/3"), a half-strength
    # fluid ("D5 1/2"), a chest pain's score ("CP 5/10", "c/o 4/10")
    r"rales|crackles|cxs|perrla?|d5w?|cp|c/o)|(?<![^\W\d_])[x×]|[*=]|"
    # the settings before a pressure pair: an oxygen fraction ("SIMV/PS 500 X 14, 50% 5/5") or a volume
    # times a rate ("IMV 800x60x10 5/5")
    # ("SETTINGS-SIMV/PS, 500X10, 40%, & 5/8")
    r"\d\s?%|\d\s?[x×]\s?\d+)\s*[:=,]?\s*(?:(?:&|and)\s*)?(?:of\s+)?$",
    re.IGNORECASE,
)
_VALUE_AFTER_RE = re.compile(
    rf"{_UNIT_AHEAD}|\s*(?:strength|power|pain|score|scale|ratio|dilution|titer|titre|bilat\w*|"
    # "1/2 NS": half-strength normal saline
    r"murmur|systolic|diastolic|in\s+strength|nss?|normal\s+saline|peep|bottles?|"
    # "ON 10/5 BIPAP", "5/5 PSV/CPAP": a ventilator setting names its mode after it
    rf"{VENTILATOR_MODES}|"
    # "10/10 angina": a severity names what it rates
    r"angina|headache|discomfort|"
    # a fraction of something: "1/3 up", "1/2 way up", "3/4 str", "1/2 rate", "1/2 tab"; a murmur's grade
    # ("3/6 SEM"); the ABG a setting gave ("5/5 ABG"); cultures ("2/4 bottles", "2/4 bl cx")
    r"up|way|str|rate|tabs?|tablets?|sem|hsm|cp|abgs?|bl\s+cx|blood\s+cultures?)\b",
    re.IGNORECASE,
)
# 1977, 2014, 1990s, 1980S: a bare 19xx/20xx number is read as a year
_DATE_YEAR_RE = re.compile(rf"(?<![\w.,:/#$£€+])(?P<y>[12][09]\d{{2}})(?:['’]?[sS])?(?![\w])(?![.,:]\d){_NOT_UNIT}")
# "at 2000", "@ approx 1900" is a clock time
_TIME_BEFORE_RE = re.compile(
    r"(?:\bat|@)\s*(?:(?:approx|aprox|appr)\.?|approximately|about|around|~)?\s*$", re.IGNORECASE
)
# "~ 2000", "approx 1930", "around 2030", "till approx 2030", "by 2000": a clock time, rough or a limit, when on
# the quarter hour (`_YEAR_CONTEXT_BEFORE_RE` keeps the years among them)
_ABOUT_TIME_BEFORE_RE = re.compile(
    r"(?:~|\b(?:approx|aprox|appr)\.?|\bapproximately|\baround|\babout|\btill|\buntil|\bby)\s*$", re.IGNORECASE
)
#: a four-digit 24-hour time ("0700", "1930")
HHMM = r"(?:[01]\d|2[0-3])[0-5]\d"
#: ... on the hour or a quarter ("0700", "1930"), as shifts and schedules are written; "0142-0037" is a
#: subject number, not a shift
ROUND_HHMM = r"(?:[01]\d|2[0-3])(?:00|15|30|45)"
#: what joins the two ends of a time range or shift ("1900-0700", "0700->1930", "1900>>0700", "0700 to 1900")
TIME_RANGE_JOINT = r"[ \t]?(?:-|–|-+>|>>?|to|till|until)[ \t]?"
_ROUND_HHMM_RE = re.compile(ROUND_HHMM)
# the other end of a shift whose one end could be read as a year: a time no year is ("0700", "2300", "2400")
_SHIFT_END_AFTER_RE = re.compile(rf"{TIME_RANGE_JOINT}(?P<t>{ROUND_HHMM}|2400)(?![\w.,:/]?\d)", re.IGNORECASE)
_SHIFT_END_BEFORE_RE = re.compile(rf"(?<![\w.,:/])(?P<t>{ROUND_HHMM}){TIME_RANGE_JOINT}$", re.IGNORECASE)
# mid-2014, Q3 2019, spring 2019, end of 2014: a year with a period word before it
_PERIOD_BEFORE_RE = re.compile(
    r"(?<![^\W\d_])(?:(?:early|mid|late|end\s+of|beginning\s+of|start\s+of)[\s-]?|q[1-4][\s-]?|h[12][\s-]?"
    r"|(?:spring|summer|autumn|fall|winter)(?:\s+of)?\s+)$",
    re.IGNORECASE,
)
# '95, '50s, "CA'91": a two-digit year after an apostrophe (a letter may run into it, a digit may not)
_DATE_APOS_YEAR_RE = re.compile(rf"(?<![\d'’])['’]\d{{2}}s?(?![\w])(?![.,:]\d){_NOT_UNIT}")
# "CVA 72'.", "STOPPED SMOKING 64'": the apostrophe written after the year; not after a range or a
# value's name ("HOB 30'" is an angle, "10-15'" a range)
_DATE_YEAR_APOS_RE = re.compile(r"(?<![\w'’.,/:-])\d{2}['’](?![\w'’])")
# "CABG 79", "MI 95", "CVA in 93 and 01", "07 PTCA to LAD", "'12 stent": a past history dates an
# event with a bare two-digit year, next to the event's name and without a unit. The events are the
# few procedures and diagnoses histories list this way (a count goes with "x": "CABG x3").
_HISTORY_EVENT = r"(?:cabg|ptca|pci|stents?|n?stemi|nqwmi|[ai]?mi|cva|tia|avr|mvr|dvt)"
# a rough year after a history event or a year's preposition: "CABG ~2015", "in approx 2000", "since about 2000"
_YEAR_CONTEXT_BEFORE_RE = re.compile(
    rf"(?i)(?:\b{_HISTORY_EVENT}|\b(?:in|since|from|year|circa|ca\.?))\s*(?:~|approx\.?|aprox\.?|appr\.?|approximately|around|about)\s*$"
)
_YY = r"(?<![\w.,/:'’-])(?P<y>\d{2})(?![\w'’/%-]|[.,:]\d)"
_NOT_DURATION = r"(?![ \t]*(?i:years?|yrs?|y|months?|mos?|weeks?|wks?|days?|d|hours?|hrs?|h)\b)"
_EVENT_THEN_YEAR_RE = re.compile(rf"(?i)\b{_HISTORY_EVENT}[ \t]+(?:in[ \t]+)?{_YY}{_NOT_UNIT}{_NOT_DURATION}")
_YEAR_THEN_EVENT_RE = re.compile(rf"(?i)(?:^|(?<=[\n;,(.]|[\n;,(.][ \t]|:[ \t]?)){_YY}[ \t]+{_HISTORY_EVENT}\b")
_AND_YEAR_AFTER_RE = re.compile(rf"[ \t]*(?:and|&|,)[ \t]*{_YY}{_NOT_UNIT}{_NOT_DURATION}")

# 29th, 11th, 3rd standing alone ("seen on the 29th"), unless a counted noun
# follows ("3rd dose", "2nd-line").
# "the 14th/15th": a second ordinal after a slash continues the first
_DATE_ORDINAL_RE = re.compile(r"(?:(?<![\w.,/])|(?<=\d(?i:st|nd|rd|th)/))(?P<day>\d{1,2})(?i:st|nd|rd|th)(?![\w])")
# "Friday the 13th": the weekday, the article and the ordinal are one date
_WEEKDAY_THE_ORDINAL_RE = re.compile(
    r"(?i)(?<![^\W\d_])(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\.?,?[ \t]+the[ \t]+"
    r"(?P<day>\d{1,2})(?:st|nd|rd|th)(?![\w])"
)
# A weekday's abbreviation pointing at a day of the case: after a preposition of time ("on sat",
# "since Tues", "last Fri") or written before a numeric date ("Sat 16/03", "Thu 3/8"). Alone, "Sat",
# "sun" and "wed" are also saturation, the sun and married: those stay to the network. "Sun" after a
# preposition other than on/last/next/this is the sun ("from sun exposure").
_WEEKDAY_ABBR = r"(?:mon|tues?|weds?|thu(?:rs?)?|fri|sat)"
_WEEKDAY_AFTER_CUE_RE = re.compile(
    rf"(?i)\b(?:on|since|from|until|till|by|last|next|this|every|each|before|after)[ \t]+(?P<wd>{_WEEKDAY_ABBR}|(?<=\b(?:on|last|next|this)[ \t]+)sun)\b\.?"
)
_WEEKDAY_BEFORE_DATE_RE = re.compile(
    r"(?<![\w.])(?P<wd>(?:Mon|Tue|Tues|Wed|Weds|Thu|Thur|Thurs|Fri|Sat|Sun|MON|TUE|TUES|WED|THU|THUR|THURS|FRI|SAT|SUN)\.?)"
    r",?[ \t]+(?P<date>\d{1,2}[/.-]\d{1,2}(?:[/.-]\d{2,4})?)(?![\w%/-]|[.,]\d)"
)
_ORDINAL_NOUN_AFTER_RE = re.compile(
    r"[\s-]*(?:doses?|dosing|cycles?|lines?|days?|weeks?|months?|years?|times?|trimesters?|courses?|"
    r"infusions?|injections?|shots?|vaccinations?|vaccines?|treatments?|generations?|degrees?|"
    r"grades?|visits?|percentiles?|centiles?|ribs?|toes?|fingers?|digits?|metatarsals?|"
    r"metacarpals?|intercostal|cranial|nerves?|ventricles?|floors?|place|attempts?|episodes?|"
    r"occurrences?|admissions?|hospitali[sz]ations?|birthdays?|decades?|century|order|party|"
    r"lumbar|sacral|cervical|thoracic|vertebrae?|hours?|sessions?|rounds?|pregnancy|child|baby|"
    r"sons?|daughters?|stage|phase|level|quartile|tertile|quintile|streets?|st|avenues?|ave|roads?|rd|"
    r"fl|wards?|class|edition)\b",
    re.IGNORECASE,
)

#: Detectors whose matches are fully numeric dates; a phone candidate that
#: overlaps one of them is a date, not a phone ("21.03.2020", "7 10 2003").
_NUMERIC_DATE_DETECTORS = frozenset({"date_numeric", "date_iso", "date_compact", "date_spaced", "date_roman"})


def _day_month_ok(a: int, b: int) -> bool:
    """True when (a, b) is a valid day/month pair in either order."""
    return (1 <= a <= 31 and 1 <= b <= 12) or (1 <= a <= 12 and 1 <= b <= 31)


def _year_ok(y: str) -> bool:
    """Four-digit years 19xx/20xx; other 4-digit numbers are values or IDs."""
    return y[:2] in ("19", "20")


def _is_compact_date(s: str) -> bool:
    """An 8-digit yyyymmdd that is a real calendar date."""
    if len(s) != 8 or not s.isdigit() or not _year_ok(s):
        return False
    y, m, d = int(s[:4]), int(s[4:6]), int(s[6:])
    return 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]


def _text_dates(text: str) -> Iterator[PatternMatch]:
    """Dates written with a month name, grown outwards from each month word.

    Yields every plausible reading; the resolver keeps the longest. A
    lower-case "may"/"mar"/"march" counts only with a number after it, and a
    full month name standing alone ("since January") is a DATE by itself.
    """
    for mw in _MONTH_WORD_RE.finditer(text):
        s, e = mw.span()
        mon = mw.group("mon")
        strict = mon.islower() and mon in _AMBIGUOUS_MONTHS
        day_before = _preceded_by(text, s, _DAY_BEFORE_RE, 16)
        if day_before and not 1 <= int(day_before.group("day")) <= 31:
            day_before = None
        day_after = _DAY_AFTER_RE.match(text, e)
        if day_after and not 1 <= int(day_after.group("day")) <= 31:
            day_after = None
        if day_after and (day_after.group("year") or not _followed_by(text, day_after.end("day"), _UNIT_AHEAD_RE)):
            yield PatternMatch(s, day_after.end(), "DATE", "date_text")
            # "Feb 3-4", "Feb 5-8": a range of days continues the date
            upto = _DAY_RANGE_AFTER_RE.match(text, day_after.end("day")) if not day_after.group("year") else None
            if upto and int(upto.group("day")) <= 31 and not _followed_by(text, upto.end(), _UNIT_AHEAD_RE):
                yield PatternMatch(s, upto.end(), "DATE", "date_text")
        year_after = _YEAR_AFTER_RE.match(text, e)
        if year_after:
            yield PatternMatch(s, year_after.end(), "DATE", "date_text")
        if day_before:
            any_year = _ANY_YEAR_AFTER_RE.match(text, e)
            if any_year:
                yield PatternMatch(day_before.start(), any_year.end(), "DATE", "date_text")
            elif not strict:
                yield PatternMatch(day_before.start(), e, "DATE", "date_text")
        year_before = _preceded_by(text, s, _YEAR_BEFORE_RE, 8)
        if year_before and (day_after or not strict):
            yield PatternMatch(year_before.start(), day_after.end("day") if day_after else e, "DATE", "date_text")
        if mon.lower() in _FULL_MONTH_NAMES:
            yield PatternMatch(s, s + len(mon), "DATE", "date_month_name")


def _international_dates(text: str) -> Iterator[PatternMatch]:
    """Dates with a month name in another language: beside a day or a year only (see above)."""
    for m in _DAY_THEN_WORD_RE.finditer(text):
        word = m.group("mon").lower()
        if word not in _INTERNATIONAL_MONTH_WORDS or not 1 <= int(m.group("day")) <= 31:
            continue
        end = m.end("mon") + (1 if word in _INTERNATIONAL_MONTH_ABBREVIATIONS and m.group("dot") else 0)
        year = _INTERNATIONAL_YEAR_AFTER_RE.match(text, end)
        yield PatternMatch(m.start(), year.end() if year else end, "DATE", "date_text")
    for y in _YEAR4_ALONE_RE.finditer(text):
        w = _preceded_by(text, y.start(), _WORD_BEFORE_YEAR_RE, 24)
        if w is not None and w.group("mon").lower() in _INTERNATIONAL_MONTH_WORDS:
            yield PatternMatch(w.start("mon"), y.end(), "DATE", "date_text")


def _in_value_context(text: str, start: int, end: int) -> bool:
    """A value's name before the match ("BP", "PS", "wean to") or its unit or kind after it ("%", "BIPAP")."""
    return bool(_preceded_by(text, start, _VALUE_BEFORE_RE)) or _followed_by(text, end, _VALUE_AFTER_RE)


def _numeric_dates(text: str) -> Iterator[PatternMatch]:
    """Fully numeric dates with a year; validated so that ratios and ranges drop out."""
    for m in _DATE_NUMERIC_RE.finditer(text):
        a, b, y = int(m.group("a")), int(m.group("b")), m.group("y")
        if not _day_month_ok(a, b) or not (len(y) == 2 or 1800 <= int(y) <= 2099):
            continue
        # a three-part series with a two-digit last part in a value's context is a setting,
        # not a date: "CPAP/PS 16/5/40%", "settings 12/5/40%" (a four-digit year stays a date)
        if len(y) == 2 and _in_value_context(text, m.start(), m.end()):
            continue
        yield PatternMatch(m.start(), m.end(), "DATE", "date_numeric")
    for m in _DATE_ISO_RE.finditer(text):
        if _year_ok(m.group("y")) and 1 <= int(m.group("m")) <= 12 and 1 <= int(m.group("d")) <= 31:
            yield PatternMatch(m.start(), m.end(), "DATE", "date_iso")
    for m in _DATE_MONTH_YEAR_RE.finditer(text):
        if 1 <= int(m.group("m")) <= 12 and _year_ok(m.group("y")):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_month_year")
    for m in _DATE_ROMAN_MONTH_RE.finditer(text):
        if 1 <= int(m.group("d")) <= 31 and (m.group("sep") != " " or len(m.group("y")) == 4):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_roman")
    for m in _DATE_COMPACT_RE.finditer(text):
        if _is_compact_date(m.group()):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_compact")
    for m in _DATE_SPACED_RE.finditer(text):
        if _year_ok(m.group("y")) and _day_month_ok(int(m.group("a")), int(m.group("b"))):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_spaced")


# "describes pain as 5/10 with movement": a score out of ten in a sentence about pain or a rating
_SCORE_OUT_OF_TEN_BEFORE_RE = re.compile(
    r"(?i)\b(?:pain|ache|aches|discomfort|angina|headache|rat(?:e|es|ed|ing)|scale|severity|intensity)\b[^.;\n]{0,30}$")


# "2/52 history", "3/7 later", "for 2/52": British clinical shorthand for a number of weeks (/52), days
# (/7) or months (/12), no date. After the value: a word that only follows a duration; before a /52
# also "for", "x", "over", "within", "past" or "last" (a date is rarely "for Feb '52"). Not "post-op":
# "seen 12/7 post-op" is as likely a date.
#: the words after such a pair, and before a /52 (shared with `rules.clinical`, which keeps these pairs)
UK_DURATION_AFTER = ("history", "hx", "hist", "later", "ago", "duration")
UK_WEEKS_BEFORE = ("for", "x", "over", "within", "past", "last")
_UK_DURATION_AFTER_RE = re.compile(rf"(?i)[ \t]*(?:{'|'.join(UK_DURATION_AFTER)})\b")
_UK_WEEKS_BEFORE_RE = re.compile(rf"(?i)\b(?:{'|'.join(UK_WEEKS_BEFORE)})[ \t]*$")


def _uk_duration(text: str, m: re.Match[str], denominator: int) -> bool:
    """Is this slashed pair British duration shorthand ("2/52 history", "3/7 later", "for 2/52")?"""
    if _followed_by(text, m.end(), _UK_DURATION_AFTER_RE):
        return True
    return denominator == 52 and bool(_preceded_by(text, m.start(), _UK_WEEKS_BEFORE_RE, 12))


#: A proper fraction of a small denominator ("1/2", "2/3", "3/4", "1/8") is how a nursing note writes a
#: part of something; as a date it is the first days of a month. It is read as a part only where the
#: words around it say so (PhysioNet train and dev: "upper 1/3 of right lung field", "q 1/2-1 hrs",
#: "rales up 1/4", "cxs at bases up 1/3-1/2"):
#: ... a part of something, or of a solution's strength: "1/2 of D50", "3/4 of the time", "1/4 st
#: betadine" (not after a date's two-digit year: "7/16/06 St. Paul's")
_OF_AFTER_RE = re.compile(r"[ \t]*(?i:of|st)\b")
#: ... a mixed number that opens a range: "for 1 1/2-2h" (with a unit after it, "1 1/2 hrs", the unit
#: already says so; alone, "dose 1 1/4" may be a dose's date)
_MIXED_NUMBER_BEFORE_RE = re.compile(r"(?<![\w.,/:-])\d[ \t]$")
_RANGE_AFTER_RE = re.compile(r"[ \t]?-[ \t]?\d")
#: ... a part of a dose or a solution, or every half hour: "give 1/2 NPH", "treated with 1/2 amp",
#: "soaked in 1/4 strength", "q 1/2-1 hrs". Not after "given", "gave" or "took": a report dates a
#: dose that way ("dose 1 given 1/4").
_PART_BEFORE_RE = re.compile(
    r"(?i)(?:\b(?:give|treated[ \t]+with|soaked[ \t]+in|diluted[ \t]+(?:to|in))|(?<![^\W\d_])q)[ \t]*$"
)
#: ... how far up the lungs crackles reach, with words between: "cxs at bases up 1/3-1/2", "rales up 1/4"
_LUNG_SOUND_UP_BEFORE_RE = re.compile(
    r"(?i)\b(?:rales|crackles|crackels|cxs|crx|rhonchi)\b[^.;\n]{0,25}?\bup[ \t]+(?:\d/[2-4][ \t]?-[ \t]?)?$"
)


def _part_of_something(text: str, m: re.Match[str], a: int, b: int) -> bool:
    """Is this slashed pair a proper fraction its context reads as a part (see the notes above)?"""
    if not 1 <= a < b <= 8:
        return False
    mixed = bool(_preceded_by(text, m.start(), _MIXED_NUMBER_BEFORE_RE, 4)) and _followed_by(text, m.end(), _RANGE_AFTER_RE)
    return (_followed_by(text, m.end(), _OF_AFTER_RE) or mixed
            or bool(_preceded_by(text, m.start(), _PART_BEFORE_RE, 20))
            or bool(_preceded_by(text, m.start(), _LUNG_SOUND_UP_BEFORE_RE, 50)))


#: A ventilator's pressure pair (pressure support over PEEP: "5/5", "10/5", "18/5", "13/10") after a
#: verb that puts a patient on a setting ("trialed on", "remained on", "changed over to", "increased
#: to", "extubated from", "tolerated"), in a sentence that names the ventilator or its mode (PhysioNet
#: train and dev: "RESP: trialed on 5/5", "Abg acceptable on 5/5", "Vent changed over to 5/5", "PSV
#: increased to 10/5", "switched to PSV. Tolerated 18/5 with ABG's"). The verbs of a date's event
#: ("extubated on 5/5", "trach placed on 5/5", "on vent since 5/5") are not among them.
_SETTING_VERB_BEFORE_RE = re.compile(
    r"(?i)\b(?:(?:tri(?:al)?ed|trial(?:ing)?|remain(?:ed|s|ing)?|stay(?:ed|s|ing)?|kept|left|weaning|acceptable|"
    r"tolerat(?:ed|es|ing)(?:[ \t]+well)?)[ \t]+on|"
    r"(?:chang(?:e|ed|ing)(?:[ \t]+over)?|increas(?:e|ed|ing)|decreas(?:e|ed|ing)|return(?:ed)?|back|switch(?:ed)?)[ \t]+to|"
    r"extubated[ \t]+from|trial|tolerat(?:ed|es|ing))[ \t]+$"
)
_VENTILATOR_WORD_RE = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{VENTILATOR_MODES}|vent(?:ilator|ilated|ilation)?|ps|ips|peep|"
    r"trach(?:eostomy)?|extubat\w*|wean\w*|abg['’]?s?|fio2|sbt|rsbi|resp)(?![^\W\d_])"
)


def _ventilator_setting(text: str, m: re.Match[str], a: int, b: int) -> bool:
    """Is this slashed pair a pressure-support/PEEP setting (see the notes above)?"""
    if not (b <= 25 and b <= a <= 40) or not _preceded_by(text, m.start(), _SETTING_VERB_BEFORE_RE, 40):
        return False
    start, end = clause_around(text, m.start(), m.end())
    return _VENTILATOR_WORD_RE.search(text, start, end) is not None


def _month_day_dates(text: str) -> Iterator[PatternMatch]:
    """Month/day and month/two-digit year, unless the context marks a value (see the regex notes)."""
    for m in _DATE_MONTH_SHORT_YEAR_RE.finditer(text):
        if 1 <= int(m.group("m")) <= 12 and int(m.group("y")) >= 32 and not _in_value_context(text, m.start(), m.end()):
            if int(m.group("y")) == 52 and _uk_duration(text, m, 52):
                continue
            yield PatternMatch(m.start(), m.end(), "DATE", "date_month_year")
    for m in _DATE_MONTH_DAY_RE.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        if not _day_month_ok(a, b) or (a, b) == (24, 7):  # "24/7" means around the clock
            continue
        if _in_value_context(text, m.start(), m.end()):
            continue
        if _part_of_something(text, m, a, b) or _ventilator_setting(text, m, a, b):
            continue
        if b in (7, 12) and _uk_duration(text, m, b):
            continue
        # ... unless a date's preposition comes straight before it ("pain since 3/10")
        if (b == 10 and a <= 10 and _preceded_by(text, m.start(), _SCORE_OUT_OF_TEN_BEFORE_RE, 60)
                and not _preceded_by(text, m.start(), _DATE_WORD_BEFORE_RE, 12)):
            continue
        yield PatternMatch(m.start(), m.end(), "DATE", "date_month_day")
    for m in _DATE_DAY_MONTH_DOT_RE.finditer(text):
        d, mon = m.group("d"), m.group("m")
        if ("0" in (d[0], mon[0]) and 1 <= int(d) <= 31 and 1 <= int(mon) <= 12
                and not _in_value_context(text, m.start(), m.end())):
            yield PatternMatch(m.start(), m.end() - 1, "DATE", "date_month_day")

# "on 1st step mattress", "received 2nd unit", "3RD CDIFF CULTURE": an ordinal straight before
# a word is a count of that word, unless the word can continue a date (a month, a weekday, a
# connector such as "of", "at", "and", a title) or the ordinal follows a date word ("the 3rd",
# "on 3rd", "since 12th"). Title-case words after it are left alone (a place or a name may
# follow a date). On PhysioNet train + dev this frees 44 counted ordinals; the one ordinal
# there that is PHI stays a date. The noun list above stays for hyphens and Title case.
_DATE_CONTINUES = (
    r"(?:of|at|in|on|and|to|through|thru|till|until|or|when|with|by|for|from|after|before|since|during|"
    r"around|about|approx|am|pm|a\.m|p\.m|dr|mr|mrs|ms|miss|prof|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*)"
)
_COUNTED_WORD_AFTER_RE = re.compile(
    # a lower-case word, hyphenated too ("1st c-diff"), or one opening with two capitals ("1st UPRBCs")
    rf"[ \t]+(?!(?i:{_DATE_CONTINUES})\b)(?:[a-z][a-z-]*[a-z]|[A-Z]{{2}}[A-Za-z]*)(?![^\W\d_])"
)
#: "2nd to stooling", "TACHYPNEIC 2ND TO AGITATION": "secondary to", a cause, no day ("the 2nd to the 5th")
_SECONDARY_TO_RE = re.compile(
    rf"[ \t]+(?i:to)[ \t]+(?!(?i:the|a|an|{_DATE_CONTINUES})\b)(?:[a-z]{{3,}}|[A-Z]{{3,}})(?![^\W\d_])"
)
_DATE_WORD_BEFORE_RE = re.compile(
    r"(?i)\b(?:the|on|by|since|until|till|from|of|due|dated|date|thru|through|to)\s*$"
)


def _counted_ordinal(text: str, start: int, end: int) -> bool:
    """An ordinal that counts the word after it ("2nd unit"), or "2nd to" a cause, not a day of a month."""
    if _preceded_by(text, start, _DATE_WORD_BEFORE_RE, 12):
        return False
    return bool(_COUNTED_WORD_AFTER_RE.match(text, end)) or (
        text[start:end].lower() == "2nd" and bool(_SECONDARY_TO_RE.match(text, end)))


def _is_shift_end(text: str, m: re.Match[str]) -> bool:
    """A year-like end of a time range whose other end no year is: "1900-0700", "0700->1930" are shifts.

    Both ends must be 24-hour times on the hour or a quarter; "1992-1995" (both years) stays a range of years.
    """
    if not _ROUND_HHMM_RE.fullmatch(m.group("y")) or m.end() - m.start() != 4:
        return False
    other = _SHIFT_END_AFTER_RE.match(text, m.end()) or _preceded_by(text, m.start(), _SHIFT_END_BEFORE_RE, 12)
    return other is not None and not _year_ok(other.group("t"))


def _partial_dates(text: str) -> Iterator[PatternMatch]:
    """Years (alone, after a period word or beside a history event), apostrophe years and ordinal days."""
    for m in _DATE_YEAR_RE.finditer(text):
        if not _year_ok(m.group("y")) or _preceded_by(text, m.start(), _TIME_BEFORE_RE, 20) or _is_shift_end(text, m):
            continue
        if (m.end() - m.start() == 4 and _ROUND_HHMM_RE.fullmatch(m.group("y"))
                and _preceded_by(text, m.start(), _ABOUT_TIME_BEFORE_RE, 20)
                and not _preceded_by(text, m.start(), _YEAR_CONTEXT_BEFORE_RE, 40)):
            continue  # "neo added ~ 2000", "PRESENT TILL APPROX 2030": a clock time on the quarter hour
        yield PatternMatch(m.start(), m.end(), "DATE", "date_year")
        period = _preceded_by(text, m.start(), _PERIOD_BEFORE_RE, 20)
        if period:
            yield PatternMatch(period.start(), m.end(), "DATE", "date_period")
    for m in _DATE_APOS_YEAR_RE.finditer(text):
        yield PatternMatch(m.start(), m.end(), "DATE", "date_year")
    for m in _DATE_YEAR_APOS_RE.finditer(text):
        if not _preceded_by(text, m.start(), _VALUE_BEFORE_RE) and not _preceded_by(text, m.start(), _RANGE_BEFORE_RE, 4):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_year")
    for regex in (_EVENT_THEN_YEAR_RE, _YEAR_THEN_EVENT_RE):
        for m in regex.finditer(text):
            yield PatternMatch(m.start("y"), m.end("y"), "DATE", "date_history")
            more = _AND_YEAR_AFTER_RE.match(text, m.end("y"))
            if more:
                yield PatternMatch(more.start("y"), more.end("y"), "DATE", "date_history")
    for m in _WEEKDAY_AFTER_CUE_RE.finditer(text):
        yield PatternMatch(m.start("wd"), m.end("wd"), "DATE", "date_weekday")
    for m in _WEEKDAY_BEFORE_DATE_RE.finditer(text):  # the weekday and its date, one date
        a, b = (int(x) for x in re.split(r"[/.-]", m.group("date"))[:2])
        if (a <= 31 and 1 <= b <= 12) or (1 <= a <= 12 and b <= 31):  # "Sat 94/96" is a saturation
            yield PatternMatch(m.start("wd"), m.end("date"), "DATE", "date_weekday")
    for m in _WEEKDAY_THE_ORDINAL_RE.finditer(text):
        if 1 <= int(m.group("day")) <= 31:
            yield PatternMatch(m.start(), m.end(), "DATE", "date_text")
    for m in _DATE_ORDINAL_RE.finditer(text):
        if (1 <= int(m.group("day")) <= 31 and not _followed_by(text, m.end(), _ORDINAL_NOUN_AFTER_RE)
                and not _counted_ordinal(text, m.start(), m.end())):
            yield PatternMatch(m.start(), m.end(), "DATE", "date_ordinal")


def find_dates(text: str) -> list[PatternMatch]:
    """All DATE candidates (possibly overlapping); `PatternDetector.find` resolves overlaps."""
    out: list[PatternMatch] = []
    out.extend(_text_dates(text))
    out.extend(_international_dates(text))
    out.extend(_numeric_dates(text))
    out.extend(_month_day_dates(text))
    out.extend(_partial_dates(text))
    return out
