"""Bit flags recording which lists a word belongs to.

One integer per word keeps the compiled artifact small (a single dict of
word -> flags) and makes every rule a cheap bitwise test.
"""

from __future__ import annotations

from enum import IntFlag


class Lex(IntFlag):
    # Safe lists: membership lets a word back in ...
    STOPWORD = 1 << 0
    COMMON_WORD = 1 << 1
    MEDICAL = 1 << 2
    DRUG = 1 << 3          # a word of some drug name (bag of words)
    DRUG_NAME = 1 << 4     # the word is itself a complete drug name
    MEDDRA = 1 << 5
    WHODRUG = 1 << 6
    USER_ALLOW = 1 << 7
    # ... unless an unsafe list also has it.
    FIRST_NAME = 1 << 8
    SURNAME = 1 << 9
    CITY = 1 << 10
    STATE = 1 << 11
    COUNTRY = 1 << 12
    WEEKDAY = 1 << 13
    MONTH = 1 << 14
    HOLIDAY = 1 << 15
    STREET = 1 << 16
    TLD = 1 << 17          # unsafe only when preceded by a dot
    WRITTEN_NUMBER = 1 << 18
    USER_DENY = 1 << 19
    INSTITUTION = 1 << 20  # hospital / health-system names made of everyday words
    # Context-only: US postal codes (IN, OR, MD...) are masked by the rules
    # only where a place context shows they are states ("Baltimore, MD").
    STATE_CODE = 1 << 21


SAFE = (
    Lex.STOPWORD | Lex.COMMON_WORD | Lex.MEDICAL | Lex.DRUG | Lex.DRUG_NAME
    | Lex.MEDDRA | Lex.WHODRUG | Lex.USER_ALLOW
)
#: Unsafe wherever the word occurs (TLD is contextual and handled by the rules).
UNSAFE = (
    Lex.FIRST_NAME | Lex.SURNAME | Lex.CITY | Lex.STATE | Lex.COUNTRY | Lex.WEEKDAY
    | Lex.MONTH | Lex.HOLIDAY | Lex.STREET | Lex.WRITTEN_NUMBER | Lex.USER_DENY | Lex.INSTITUTION
)
NAME = Lex.FIRST_NAME | Lex.SURNAME
LOCATION = Lex.CITY | Lex.STATE | Lex.COUNTRY | Lex.STREET | Lex.INSTITUTION
#: Tokens flagged with these never come back, whatever the deep model says.
NEVER_RELEASE = Lex.WEEKDAY | Lex.MONTH | Lex.STREET | Lex.HOLIDAY | Lex.WRITTEN_NUMBER


class Bits:
    """The same flags as plain ints.

    IntFlag arithmetic goes through enum machinery on every `&`; the rules
    test flags hundreds of thousands of times per second, so hot paths use
    these ints instead.
    """

    STOPWORD = int(Lex.STOPWORD)
    COMMON_WORD = int(Lex.COMMON_WORD)
    MEDICAL = int(Lex.MEDICAL | Lex.DRUG | Lex.DRUG_NAME | Lex.MEDDRA | Lex.WHODRUG)
    DRUG_NAME = int(Lex.DRUG_NAME)
    FIRST_NAME = int(Lex.FIRST_NAME)
    SURNAME = int(Lex.SURNAME)
    NAME = int(NAME)
    CITY = int(Lex.CITY)
    PLACE = int(Lex.CITY | Lex.STATE | Lex.COUNTRY | Lex.STREET | Lex.INSTITUTION)
    PLACE_NAME = int(Lex.CITY | Lex.STATE | Lex.COUNTRY)
    DATE_WORD = int(Lex.WEEKDAY | Lex.MONTH | Lex.HOLIDAY)
    WEEKDAY = int(Lex.WEEKDAY)
    MONTH = int(Lex.MONTH)
    HOLIDAY = int(Lex.HOLIDAY)
    STREET = int(Lex.STREET)
    TLD = int(Lex.TLD)
    WRITTEN_NUMBER = int(Lex.WRITTEN_NUMBER)
    STATE_CODE = int(Lex.STATE_CODE)
    SAFE = int(SAFE)
    UNSAFE = int(UNSAFE)
