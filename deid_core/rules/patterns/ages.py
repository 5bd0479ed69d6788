"""AGE detection: "45 y.o.", "aged 32", "in her 80s", "67M", "98 s/p", "she is 24", "Ann Lee, 27,", infant ages.

Why this module exists: an age is a quasi-identifier (ages over 89 are PHI
under HIPAA Safe Harbor, and every age narrows down a patient), and it hides
among numbers that look the same but are durations or values ("for 5 yrs",
"2 years ago", "temp 38 F", "16 F catheter"). Age patterns are composed from
small parts ("y.o.", "years old", "aged N", number words), as rule-based
de-identification of VigiBase narratives did. Only the number (or the
number words) is the AGE span.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex as re

from deid_core.rules.patterns.common import _UNIT_AHEAD_RE, PatternMatch, _followed_by, _preceded_by

_UNIT_NUMBER_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine)"
# one..ninety-nine in words, factored by first letter so a failing word is left fast
_NUM_WORD = (
    r"(?:(?:t(?:wenty|hirty)|f(?:ou?rty|ifty)|s(?:ixty|eventy)|eighty|ninety)"
    rf"(?:[\s-]?{_UNIT_NUMBER_WORD}(?![^\W\d_]))?"
    r"|t(?:en|wo|hree|welve|hirteen)|f(?:our|ive|ourteen|ifteen)|s(?:ix|even|ixteen|eventeen)"
    r"|e(?:ight|leven|ighteen)|n(?:ine|ineteen)|one)(?![^\W\d_])"
)
_AGE_DIGITS = r"\d{1,3}(?:[.,]\d{1,2})?(?:\s?(?:-|–|to)\s?\d{1,3}(?!\d))?"
_WORD_VALUES = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS_VALUES = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

# Year suffixes all start with "y" (the literal lets the engine skip ahead):
# 9 y.o., 9yo, 45 y/o, 9-year-old, 45-yr-old, 4 years of age, 45 yrs, 45y.
# Only the number is the AGE span.
_AGE_Y_SUFFIX = (
    r"\s?[-–]?\s?(?i:y)"
    r"(?i:\.?\s?o\.?(?![a-eg-ln-z])"  # "yo", "y.o."; an F/M may follow directly (67yoF)
    r"|\s?/\s?o(?![^\W\d_])"
    r"|(?:ears?|rs?)?\.?[\s-]*old(?![^\W\d_])"
    r"|(?:ears?|rs?)\.?\s+of\s+age(?![^\W\d_])"
    r"|(?P<bare>(?:ears?|rs?)?)\.?(?![^\W\d_]))"
)
_AGE_YEAR_RES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?<![\w.,])(?P<num>{_AGE_DIGITS}){_AGE_Y_SUFFIX}"),
    re.compile(rf"(?i:\b(?P<num>{_NUM_WORD})){_AGE_Y_SUFFIX}"),
)
# Infant ages: 3 months old, 6-week-old, 10 days of age, eleven months old
# (one regex per unit letter and number style: a literal lets the engine skip ahead)
_AGE_INFANT_UNITS = (r"(?i:m)(?i:onths?|os?|ths?)", r"(?i:w)(?i:eeks?|ks?)", r"(?i:d)(?i:ays?)")
_AGE_INFANT_RES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(rf"{num}\s?[-–]?\s?{unit}\.?(?i:[\s-]*old|\s+of\s+age)(?![^\W\d_])")
    for unit in _AGE_INFANT_UNITS
    for num in (rf"(?<![\w.,])(?P<num>{_AGE_DIGITS})", rf"(?i:\b(?P<num>{_NUM_WORD}))")
)
# "45 yrs" is an age; "for 5 yrs" and "2 years ago" are durations.
_DURATION_BEFORE_RE = re.compile(
    r"(?:\b(?:for|over|past|last|previous|prior|next|within|after|since|during|lasting|every|per|in|x)|[x×~])\s*$",
    re.IGNORECASE,
)
_DURATION_AFTER_RE = re.compile(
    r"\s*(?:ago|later|earlier|after|before|prior|previously|since|duration|history|period|follow\w*|of(?!\s+age))\b",
    re.IGNORECASE,
)
# aged 32, age 32, age: 32, age of 41; and "a.o. 85"
_AGE_KEYWORD_RES: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"(?<![^\W\d_])(?i:age)(?i:d|\s*(?:of|is|was|:|=|-))?\s*(?i:of\s+)?"
        rf"(?i:about\s+|approximately\s+|approx\.?\s*|~\s*)?(?P<num>\d{{1,3}}|(?i:{_NUM_WORD}))(?!\d)"
    ),
    re.compile(r"(?<![^\W\d_])(?i:a\.o\.)\s*(?P<num>\d{1,3})(?!\d)"),
)
# in his 80s, in her late 80s, in their eighties, in her 100s (a centenarian: over 89, PHI)
_AGE_DECADE_RE = re.compile(
    r"(?<![^\W\d_])(?:in|at)\s+(?P<det>his|her|their|the|its)\s+(?:(?:early|mid|late)[\s-]*)?"
    r"(?P<num>1?\d0['’]?s|teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)(?![^\W\d_])",
    re.IGNORECASE,
)
#: the detector name of a decade after "in the"/"in its": an age unless a measurement is named before it
AGE_DECADE_MEASURE = "age_decade_measure"
#: ... and no age at all when what follows it says which pressure it is ("bp at 11pm in the 90's
#: systolic", "in the 90's sys range"), or when a vital sign or blood gas is named earlier in its clause
#: with words between ("HR has been in the 90's-110", "HR initially in the 80's", "pco2 range in the
#: 70's", "AFIB in the 80's": PhysioNet train and dev), where the clinical rules' link
#: ("SATs in the mid 90s") does not reach
_DECADE_MEASURE_AFTER_RE = re.compile(r"(?i)[ \t]*(?:systolic|sys|sbp|diastolic|dias|dbp|map|mmhg|bpm)\b")
_DECADE_MEASURE_BEFORE_RE = re.compile(
    r"(?i)(?<![^\W\d_])(?:hr|heart[ \t]+rate|b/?p|n?sbp|dbp|map|rr|resp(?:iratory)?[ \t]+rate|rate|sats?|spo2|"
    r"o2[ \t]+sats?|pa?[o0]2|pa?c[o0]2|afib|a-?fib|temp|glucose|fsbs?|cvp|pad|pap|svr|tachy\w*|brady\w*)"
    r"(?![^\W\d_])[^.;\n]{0,40}$"
)
#: the detector name of a number between commas after a capitalised word ("Jordan Whitlock, 27,"): the
#: only age read from its place alone, with no age word; as often a house number ("Piazza Irma, 58,")
AGE_AFTER_NAME = "age_after_name"
_DECADE_GATES = ("0s", "0's", "0’s", "ties", "teens")
# 67M, 67 F: the sex letter is a capital (case-sensitive); one regex per
# letter, because a literal lets the engine skip ahead
_AGE_SEX_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\w.,/-])(?P<num>\d{1,3})\s?M(?![\w/])"),
    re.compile(r"(?<![\w.,/-])(?P<num>\d{1,3})\s?F(?![\w/])"),
)
# "98 s/p left hip fx", "72 h/o CHF": a nursing note opens with the age, then "status post" or
# "history of"; not "day 3 s/p", "POD 2 s/p", "bed 12 s/p"
_AGE_HISTORY_RE = re.compile(r"(?<![\w.,/-])(?P<num>\d{2,3})\s+(?i:s/p|h/o)(?![^\W\d_])")
# "she is 24 and was on...", "I'm 29", "hes 16" (lay reports): an age after a person as subject;
# a unit after the number makes it a duration or a value ("he was 3 days post-op", "she is 20 mg")
_AGE_SUBJECT_RE = re.compile(
    r"(?<![^\W\d_])(?i:(?:she|he|i|pt|patient)(?:\s+(?:is|was|am)|['’](?:s|m))|im|hes|shes)"
    r"\s+(?i:now\s+|only\s+|just\s+)?(?P<num>\d{1,3})(?![\d/]|[.,]\d)"
)
# "Jordan Whitlock, 27, schizoaffective", "Earl Lee Whitaker, 84, has": a number between commas right
# after a capitalised word is the age of the person just named; a month or weekday before it is a date's
_AGE_AFTER_NAME_RE = re.compile(
    r"(?<=\b(?P<word>[A-Z][a-z'’-]+),[ \t])(?P<num>\d{1,3})(?=,[ \t]|[ \t]+(?i:yo|y/o|years?\b))"
)
_CALENDAR_WORDS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr "
    "jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday".split()
)
_COUNT_BEFORE_RE = re.compile(
    r"\b(?:day|pod|hd|week|wk|month|year|cycle|dose|bed|room|no|number|x)\s*[#.:]?\s*$|[#x×]\s*$", re.IGNORECASE
)
_TEMPERATURE_BEFORE_RE = re.compile(r"(?:\btemp\w*|\bt|°)\s*[:=]?\s*$", re.IGNORECASE)
_CATHETER_AFTER_RE = re.compile(r"\s*(?:foley|catheter|cath|fr|french)\b", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)?")
_WORD_SPLIT_RE = re.compile(r"[\s-]+")


def _word_number(words: list[str], k: int) -> int | None:
    """The number written from `words[k]` on ("ninety" "two" -> 92, "seven" -> 7); None if none starts there."""
    w = words[k]
    if w in _TENS_VALUES:
        unit = _WORD_VALUES.get(words[k + 1], 0) if k + 1 < len(words) else 0
        return _TENS_VALUES[w] + (unit if unit < 10 else 0)
    return _WORD_VALUES.get(w)


def _age_value(num: str) -> float | None:
    """Value of the first number of an age span (digits or words); None if unknown."""
    head = _LEADING_NUMBER_RE.match(num)
    if head:
        return float(head.group().replace(",", "."))
    value = _word_number(_WORD_SPLIT_RE.split(num.lower()), 0)
    return None if value is None else float(value)


_ALL_NUMBERS_RE = re.compile(r"\d+")
_WORDS_RE = re.compile(r"[^\W\d_]+")


def age_upper_bound(span: str) -> float | None:
    """The largest age an AGE span can mean ("85-95" -> 95, "ninety-two" -> 92); None when unknown.

    The combiner shows an age under the HIPAA limit and never one at or over it: a range is judged
    by its upper end, and a span with no number it can read ("nineties", "a hundred") is unknown,
    so it stays masked (fail closed).
    """
    digits = [int(n) for n in _ALL_NUMBERS_RE.findall(span)]
    if digits:
        return float(max(digits))
    words = [w.lower() for w in _WORDS_RE.findall(span)]
    if not words or any(w in ("hundred", "hundreds") for w in words):
        return None
    values = [v for k in range(len(words)) if (v := _word_number(words, k)) is not None]
    return float(max(values)) if values else None


def _plausible_age(num: str) -> bool:
    value = _age_value(num)
    return value is not None and value <= 125


def _year_ages(text: str) -> Iterator[PatternMatch]:
    """Numbers followed by a year unit; bare "yrs"/"years" must not read as a duration."""
    for rx in _AGE_YEAR_RES:
        for m in rx.finditer(text):
            if not _plausible_age(m.group("num")):
                continue
            if m.group("bare") is not None:
                gap = text[m.end("num") : m.start("bare")]
                if not m.group("bare") and any(ch.isspace() for ch in gap) and (_age_value(m.group("num")) or 0) < 90:
                    # "45y" is an age, "5 y" is too ambiguous; "(93 y)" is no duration anybody lived
                    # through, and an age over 89 left to the clinical rules would be shown as "93 y"
                    continue
                if _preceded_by(text, m.start(), _DURATION_BEFORE_RE, 20) or _followed_by(
                    text, m.end(), _DURATION_AFTER_RE
                ):
                    continue
            yield PatternMatch(m.start("num"), m.end("num"), "AGE", "age_phrase")


def find_ages(text: str) -> list[PatternMatch]:
    """AGE candidates; the span is only the number (or number words) of the age."""
    out = list(_year_ages(text))
    low = text.lower()
    if "old" in low or "of age" in low:
        for m in (m for rx in _AGE_INFANT_RES for m in rx.finditer(text)):
            if _plausible_age(m.group("num")):
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_phrase"))
    for rx in _AGE_KEYWORD_RES:
        for m in rx.finditer(text):
            if _plausible_age(m.group("num")):
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_keyword"))
    if any(g in low for g in _DECADE_GATES):
        for m in _AGE_DECADE_RE.finditer(text):
            if m.group("det").lower() in ("his", "her", "their"):
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_decade"))
            elif (_followed_by(text, m.end(), _DECADE_MEASURE_AFTER_RE)
                  or _preceded_by(text, m.start(), _DECADE_MEASURE_BEFORE_RE, 60)):
                continue
            elif (_age_value(m.group("num")) or 0) <= 125:  # "twenties", "nineties": no value, kept
                # "in the 80s" is as often a vital sign's range ("SBP in the 150s", "HR in the
                # 100s") as an age: AGE_DECADE_MEASURE lets a measurement named before it win
                # (RuleDeidentifier); "in the 150s" is nobody's age at all
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", AGE_DECADE_MEASURE))
    if "/" in text:
        for m in _AGE_HISTORY_RE.finditer(text):
            if 18 <= int(m.group("num")) <= 125 and not _preceded_by(text, m.start(), _COUNT_BEFORE_RE, 12):
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_history"))
    for m in _AGE_SUBJECT_RE.finditer(text):
        if 1 <= int(m.group("num")) <= 120 and not _followed_by(text, m.end(), _UNIT_AHEAD_RE):
            out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_subject"))
    if ", " in text:
        for m in _AGE_AFTER_NAME_RE.finditer(text):
            if 1 <= int(m.group("num")) <= 120 and m.group("word").lower() not in _CALENDAR_WORDS:
                out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", AGE_AFTER_NAME))
    for rx in _AGE_SEX_RES:
        for m in rx.finditer(text):
            if not 1 <= int(m.group("num")) <= 120:
                continue
            if _preceded_by(text, m.start(), _TEMPERATURE_BEFORE_RE, 12) or _followed_by(
                text, m.end(), _CATHETER_AFTER_RE
            ):
                continue
            out.append(PatternMatch(m.start("num"), m.end("num"), "AGE", "age_sex"))
    return out
