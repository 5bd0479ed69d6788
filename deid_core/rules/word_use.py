"""Words that name lists share with ordinary words, read by their use in the sentence.

Why this module exists: "Son", "May", "White", "Don", "Mi" and "RN" are on name, place or date lists
and also everyday words of a clinical narrative ("son and grandson in to visit", "PT MAY BE
TRANSFERED", "THICK WHITE SECRETIONS", "I DON'T WANT", "S/P MI 1992", "Joyce Jacobson, RN"). The
lists cannot tell the two apart; the words around them can. Each reading here is narrow and names
the company that keeps the word a name ("LINDSEY WHITE", "KIM MI", "Son Nguyen", "Thomas and Sons").
The deidentifier (`deid_core.rules.deidentifier`) asks these before it falls back on the lists.

Found on the false alarms of PhysioNet train and dev, the annotated VAERS dev part and the ICSR probes
(issue 14); none of the readings releases a gold PHI token of those sets or of the synthetic ICSR seeds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deid_core.dictionaries.flags import Bits
from deid_core.rules.context import CREDENTIALS
from deid_core.text.tokenize import Token

#: colours that are also surnames; a sputum's, a stool's or a skin's colour is clinical
_COLOURS = frozenset({"white", "black", "brown", "green", "gray", "grey", "rose", "pink", "amber", "violet"})
#: race and sex words a name list also has ("White", "Black", "Male")
_RACE_WORDS = frozenset({"white", "black"})
_SEX_WORDS = frozenset({"male", "female", "man", "woman", "gentleman", "lady", "men", "women", "males", "females"})
#: what describes a colour before it: "thick white", "dark brown", "scant clear white"
_COLOUR_QUALIFIERS = frozenset({
    "thick", "thin", "clear", "dark", "light", "pale", "scant", "creamy", "frothy", "tan", "yellowish", "bright",
    "dull", "brownish", "greenish", "whitish", "blackish", "coffee",
})
#: what a colour describes after it: "WHITE SECRETIONS", "black liquid stool", "brown drainage"
_COLOURED = frozenset({
    "secretions", "secretion", "sputum", "stool", "stools", "urine", "drainage", "phlegm", "mucus", "discharge",
    "emesis", "fluid", "plug", "plugs", "patches", "patch", "spots", "lesions", "tongue", "coating", "residuals",
    "aspirate", "output", "bm", "bms", "tinged", "streaked", "liquid", "formed", "loose", "watery", "sediment",
    "exudate", "eschar", "slough", "tissue", "nails", "nail", "toes", "toe", "color", "colour", "colored",
})
#: what stands before a sex word in an age phrase: "74 YR OLD MALE", "89 YO BLACK FEMALE", "a white male"
_BEFORE_SEX = frozenset({"old", "yo", "y/o", "yr", "yrs", "year", "years", "aged", "white", "black", "asian",
                         "hispanic", "caucasian", "elderly", "young", "obese", "pleasant"})


def is_descriptor(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """A colour, race or sex word that a surname list also has, used as a description: a colour beside
    what it colours or after a qualifier ("THICK WHITE SECRETIONS", "black liquid stool", "white/yellow"),
    a race before a sex word ("BLACK FEMALE"), a sex word after an age or a race ("74 YR OLD MALE").
    After a given name the word is a surname ("LINDSEY WHITE", "Ann Black")."""
    low = tokens[i].lower
    prev = tokens[i - 1] if i else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if prev is not None and flags[i - 1] & Bits.FIRST_NAME and not flags[i - 1] & Bits.SAFE:
        return False
    if low in _COLOURS:
        if nxt is not None and joined_by_space(text, tokens[i], nxt) and nxt.lower in _COLOURED:
            return True
        if nxt is not None and nxt.lower in _COLOURS and text[tokens[i].end:nxt.start] in ("/", "-"):
            return True  # "white/yellow", "brown-black"
        if prev is not None and joined_by_space(text, prev, tokens[i]) and prev.lower in _COLOUR_QUALIFIERS:
            return True
    if low in _RACE_WORDS and nxt is not None and nxt.lower in _SEX_WORDS and joined_by_space(text, tokens[i], nxt):
        return True
    return (low in _SEX_WORDS and prev is not None and joined_by_space(text, prev, tokens[i])
            and (prev.lower in _BEFORE_SEX or prev.text.isdigit()))


#: what stands before "MI" (myocardial infarction) in a history: "S/P MI", "PMH MI", "RECENT MI", "R/O MI"
_BEFORE_INFARCTION = frozenset({
    "s/p", "h/o", "pmh", "pmhx", "hx", "recent", "acute", "old", "prior", "previous", "r/o", "ro", "rule", "for",
    "anterior", "inferior", "lateral", "posterior", "septal", "silent", "massive", "and", "w", "c", "with", "nstemi",
    "stemi", "of", "post", "after", "had", "possible", "new",
})
#: after "MI": a year or a date of the event ("MI 1992", "MI '92", "MI 3/6", "MI 10/16")
_DATE_AFTER_INFARCTION = re.compile(r"[ \t]+(?:['’]?\d)")


def is_infarction(text: str, tokens: Sequence[Token], i: int) -> bool:
    """Is "MI"/"AMI" in capitals the infarction rather than a name ("Mi", "Ami") or Michigan? After a
    history word or in a list of conditions ("COPD, MI, CABG"), or before the date of the event. A name
    stands after a given name or a title ("KIM MI"), which none of these is."""
    prev = tokens[i - 1] if i else None
    if prev is not None:
        gap = text[prev.end:tokens[i].start]
        if prev.lower in _BEFORE_INFARCTION and not gap.strip(" \t/"):
            return True
        if gap.strip(" \t") in (",", ":", "?", "(", ";"):
            return True
    return _DATE_AFTER_INFARCTION.match(text, tokens[i].end) is not None


def joined_by_space(text: str, a: Token, b: Token) -> bool:
    """Only spaces or tabs between two tokens (no punctuation, no line break)."""
    gap = text[a.end:b.start]
    return bool(gap) and not gap.strip(" \t")


#: words after which a credential names the profession: "by RN", "this RN", "per RN", "md and rn"
_BEFORE_PROFESSION = frozenset({
    "by", "per", "this", "the", "to", "an", "a", "and", "or", "with", "from", "primary", "charge", "bedside",
    "covering", "float", "day", "night", "another", "each", "your", "her", "his", "their", "our", "my",
})
#: what follows the modal "may" (a verb or an adverb before one), never the month "May" ("May 5", "May of")
_AFTER_MODAL_MAY = frozenset({
    "be", "not", "also", "still", "need", "needs", "have", "go", "come", "require", "benefit", "get", "take", "try",
    "want", "return", "continue", "start", "resume", "use", "cause", "help", "increase", "decrease", "feel", "call",
    "transfer", "wean", "consider", "develop", "experience", "represent", "reflect", "indicate", "possibly",
    "eventually", "well", "become", "improve", "worsen", "occur", "lead", "result", "contribute", "respond", "d/c",
    "discontinue", "stop", "remain", "stay", "leave", "see", "visit", "receive", "undergo",
})
#: "n't" after an auxiliary's stem: "DON'T", "won't", "can’t"
_NEGATED_AUXILIARY = re.compile(r"['’][tT](?![^\W\d_])")
#: between a name and its credential: a comma or spaces
_CREDENTIAL_GAP = re.compile(r",?[ \t]*")


def is_credential(text: str, tokens: Sequence[Token], i: int, unsafe: Sequence[bool]) -> bool:
    """Is token `i` a credential ("RN", "MSW") straight after a masked name on the same line ("Jean
    Hudson, RN"), or the profession after a word that introduces a person ("updated by RN", "this RN",
    "per RN", "spoke to md and rn")?"""
    if tokens[i].lower not in CREDENTIALS or i == 0:
        return False
    prev = tokens[i - 1]
    if _CREDENTIAL_GAP.fullmatch(text, prev.end, tokens[i].start) is None:
        return False
    return (unsafe[i - 1] and prev.text.isalpha()) or (prev.lower in _BEFORE_PROFESSION and " " in text[prev.end:tokens[i].start])


#: what joins two relatives in a list: "SON & DAUGHTER", "wife and niece", "WIFE/DAUGHTER", "son, daughter"
_RELATIVES_JOINT = re.compile(r"[ \t]*(?:&|and|/|,|\+)?[ \t]*(?:(?:her|his|their|pt's|pts)[ \t]+)?", re.IGNORECASE)
_PREPOSITIONS_BEFORE_RELATION = frozenset({"per", "with", "w", "by", "to", "from", "for"})
#: "son in law", "SON-IN-LAW", "daughter in-law"
_IN_LAW_AFTER = re.compile(r"[ \t]*-?[ \t]*in[ \t]*-?[ \t]*law\b", re.IGNORECASE)


def relation_alone(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int], kin: frozenset[str]) -> bool:
    """A word for a relative ("grandson", "AUNTS") that no name stands beside.

    Kinship words are also surnames ("RPTR COUSIN JACQUES", "Cousin Philippe") and end company names
    ("Thomas and Sons"): before a name-list word or a word no safe list knows, or after "and"/"&"
    in title case, the word keeps the common safe family and the network's judgement.
    """
    low = tokens[i].lower
    if low not in kin and not (low.endswith("s") and low[:-1] in kin):
        return False
    if i + 1 < len(tokens) and tokens[i + 1].text.isalpha() and (
            flags[i + 1] & Bits.NAME or not flags[i + 1] & Bits.SAFE) and joined_by_space(text, tokens[i], tokens[i + 1]):
        return False
    return not (i > 0 and tokens[i - 1].lower in ("and", "&") and tokens[i].text[:1].isupper())

def listed_relative(text: str, tokens: Sequence[Token], i: int, kin: frozenset[str]) -> bool:
    """A kinship word beside another in a list of relatives, or before "in law", when not written as a
    name: "SON & DAUGHTER", "WIFE AND NEICE", "WIFE/DAUGHTER/SON", "SON-IN-LAW", "son in law".

    A surname that is also a kinship word ("Son") stands beside a given name, not another relative.
    """
    if _IN_LAW_AFTER.match(text, tokens[i].end) is not None:
        return True  # "Son in law called", "SON-IN-LAW": a relation in any case
    if tokens[i].text.istitle():
        return False
    for j in (i - 3, i - 2, i - 1, i + 1, i + 2, i + 3):  # the joint's words and signs are tokens too
        if 0 <= j < len(tokens) and tokens[j].lower in kin:
            a, b = (tokens[j], tokens[i]) if j < i else (tokens[i], tokens[j])
            if _RELATIVES_JOINT.fullmatch(text, a.end, b.start):
                return True
    # "(PER SON)", "SPOKE WITH SON", "LIVE W SON": a preposition before a relation in capitals or
    # lower case ("per Son" in title case may be a surname)
    return i > 0 and tokens[i - 1].lower in _PREPOSITIONS_BEFORE_RELATION and _RELATIVES_JOINT.fullmatch(
        text, tokens[i - 1].end, tokens[i].start) is not None


def is_modal_may(tokens: Sequence[Token], i: int) -> bool:
    """"may" before a verb or an adverb ("PT MAY BE TRANSFERED", "May require intubation"): the modal, no month."""
    return tokens[i].lower == "may" and i + 1 < len(tokens) and tokens[i + 1].lower in _AFTER_MODAL_MAY


def is_contraction_stem(text: str, tok: Token) -> bool:
    """The stem of a negated auxiliary ("DON" of "DON'T", "won" of "won't"), whatever name list has "Don"."""
    return tok.text[-1:] in ("n", "N") and _NEGATED_AUXILIARY.match(text, tok.end) is not None
