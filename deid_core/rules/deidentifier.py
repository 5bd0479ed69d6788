"""The conservative, inverse rule-based de-identifier.

Every token starts masked. A token is let back in only when a safe list
(stopwords, common English words, medical terms, drug names, licensed
terminologies, the site allow list) vouches for it, no unsafe list claims it,
it has no digit, it is not a lone initial, and no pattern or context detector
covers it. The rules aim at recall; precision is the deep model's job.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from deid_core.categories import SAFE_LABEL, UNKNOWN_LABEL
from deid_core.config import DeidConfig, RulesConfig
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.dictionaries.flags import Bits, Lex
from deid_core.results import MaskedToken
from deid_core.rules.case_profile import case_is_evidence, listed_reason, lower_case_reason, upper_case_reason
from deid_core.rules.clinical import PRODUCT_DOSE_UNITS, ClinicalEvidence, ClinicalSpan
from deid_core.rules.patterns.ages import AGE_AFTER_NAME, AGE_DECADE_MEASURE
from deid_core.rules.context import DETERMINERS, ContextDetector, ContextLexicon
from deid_core.rules.features import preceded_by_dot, token_features
from deid_core.rules.patterns import SPOKEN_DETECTORS, PatternDetector
from deid_core.rules.spelling import near_safe_word
from deid_core.rules.word_use import (
    is_contraction_stem,
    is_credential,
    is_descriptor,
    is_infarction,
    is_modal_may,
    listed_relative,
    relation_alone,
)
from deid_core.text.tokenize import Token, tokenize
from deid_core.thresholds import DOTTED_PAIR_SUFFIX, NEAR_WORD_SUFFIX, PLACE_ONLY_SUFFIX

_NAME = Bits.NAME
_CALENDAR = Lex.WEEKDAY | Lex.MONTH | Lex.HOLIDAY
_PLACE = Bits.PLACE
_DATE_WORD = Bits.DATE_WORD
_SAFE = Bits.SAFE
_STOPWORD = int(Lex.STOPWORD)
_DRUG_NAME = int(Lex.DRUG_NAME | Lex.WHODRUG)
_UNSAFE = Bits.UNSAFE
_MEDICAL_WORD = int(Lex.MEDICAL | Lex.MEDDRA | Lex.DRUG | Lex.DRUG_NAME | Lex.WHODRUG)
_PLACE_PREPOSITIONS = frozenset({"in", "from", "to", "at", "near", "of", "into"})


@dataclass
class RuleAnalysis:
    """The rules' verdict on one text, token by token.

    `reasons` say why each token was masked ("pattern:DATE", "context:address",
    "unsafe_list", "digit", "single_letter", "unknown"; in a mixed-case document a lower-case word
    masked for itself alone adds ":lower_case", as in "unknown:lower_case") or why it is safe
    ("drug": a complete drug name; "medical": on a medical or MedDRA list; "drug:lower_case" and
    "medical:lower_case" for a long one in lower case in a mixed-case document; "article": "a" or "an"
    before a number or a safe word; "relation": a word for a relative that no name stands beside;
    "clinical:quantity" and the like; "safe" otherwise); they feed the score, the threshold of each
    reason family and the benchmark that calibrates them, never the output text.
    """

    text: str
    tokens: list[Token]
    flags: list[int]
    unsafe: list[bool]
    labels: list[str]
    reasons: list[str]
    scores: list[float]
    #: tokens of one detector match share a group id (-1: none); a date or
    #: phone number is released whole or not at all (see the combiner)
    groups: list[int] = field(default_factory=list)
    _features: list[tuple[bool, ...]] | None = field(default=None, repr=False)

    def masked(self) -> list[MaskedToken]:
        return [
            MaskedToken(t.start, t.end, self.labels[i], self.scores[i], self._group(i))
            for i, t in enumerate(self.tokens)
            if self.unsafe[i]
        ]

    def _group(self, i: int) -> int:
        return self.groups[i] if self.groups else -1

    def features(self) -> list[tuple[bool, ...]]:
        if self._features is None:
            self._features = token_features(self.text, self.tokens, self.flags)
        return self._features


def _label_from_flags(f: int, phrase_f: int, prev_lower: str | None) -> str:
    """Category of a token masked by the dictionaries.

    A matched multi-word place or holiday decides first ("New York" is a
    place even though "York" is also a surname); weekday and month words are
    dates before they are names ("May", "Monday"); a word that is both a
    name and a place is a place after a locative preposition.
    """
    if phrase_f & _PLACE:
        return "LOCATION"
    if phrase_f & _DATE_WORD:
        return "DATE"
    if f & _DATE_WORD:
        return "DATE"
    if f & _NAME and f & _PLACE:
        return "LOCATION" if prev_lower in _PLACE_PREPOSITIONS else "NAME"
    if f & _NAME:
        return "NAME"
    if f & _PLACE:
        return "LOCATION"
    if f & Bits.TLD:
        return "URL"
    return UNKNOWN_LABEL


_INITIAL_GAP = re.compile(r"\.?[ \t]{0,2}")
_NAME_REASONS = frozenset({"unsafe_list", "unknown", "context", "pattern"})


def _group_initials(text: str, tokens: Sequence[Token], unsafe: list[bool], reasons: list[str],
                    groups: list[int], next_group: int) -> int:
    """Group a masked capital letter with the masked capitalised word right after it; returns the next group id."""
    n = len(tokens)
    for i in range(n - 1):
        tok = tokens[i]
        if not (unsafe[i] and reasons[i] == "single_letter" and tok.text.isupper() and groups[i] < 0):
            continue
        j = i + 1
        if tokens[j].text == "." and tokens[j].start == tok.end and j + 1 < n:
            j += 1
        nxt = tokens[j]
        if not (unsafe[j] and len(nxt.text) > 1 and nxt.text[0].isupper()
                and reasons[j].split(":", 1)[0] in _NAME_REASONS):
            continue
        if not _INITIAL_GAP.fullmatch(text, tok.end, nxt.start):
            continue
        if groups[j] < 0:
            next_group += 1
            groups[j] = next_group
        groups[i] = groups[j]
        if j == i + 2 and unsafe[i + 1]:
            groups[i + 1] = groups[j]
    return next_group


def _is_word_ending(text: str, tok: Token) -> bool:
    """The "s" of "pt's", "Smith's" or "Report(s)", the "t" of "can't" and "con't", the "d" of "dc'd": a
    possessive, plural or contracted ending, no initial (the word before it is judged alone)."""
    if tok.start < 2 or not text[tok.start - 2].isalnum():
        return False
    before = text[tok.start - 1]
    if before in "'’":
        return True
    return tok.text in ("s", "S") and before == "(" and text[tok.end:tok.end + 1] == ")"


#: analyte names that are also a word for the patient ("PT" is prothrombin time, "Pt in the 90s" a person)
_PERSON_ANALYTES = frozenset({"pt", "pts"})


def _measured_decade(text: str, start: int, spans: Sequence[ClinicalSpan]) -> bool:
    """Is the decade at `start` ("in the 100s") the value of a measurement named before it ("HR in the
    100s", "SBP in the 150s")? Not when the name is also a word for the patient ("Pt in the 90s")."""
    for span in spans:
        if span.kind == "analyte" and span.start < start < span.end:
            head = text[span.start:start].split(None, 1)
            if head and head[0].lower().rstrip(".:") not in _PERSON_ANALYTES:
                return True
    return False


#: the name of a measurement straight before its value: a word, an optional plural "'s" and ":", "=", "@"
_NAME_BEFORE_VALUE = re.compile(r"(?P<name>[^\W\d_][\w/]*?)(?:['’]?s)?\s*[:=@~]?\s*")
#: phone detectors that read a number from its shape alone (no "tel", no "+")
_SHAPE_PHONES = frozenset({"phone_lib", "phone_local"})


def _measured_range(text: str, start: int, end: int, spans: Sequence[ClinicalSpan],
                    not_measures: frozenset[str]) -> bool:
    """Is a phone-shaped number without area code ("SVR 954-1183", "HR 100-1112", "TV 930-1000") the
    value of a measurement named straight before it? A subscriber number follows a name, a "tel" or a
    place, not a haemodynamic value's name. Not after `not_measures` (analytes that are also state codes,
    "CA"; "Pt"), and never for a number of more than eight digits or one led by a trunk "0", a "+" or a bracket.
    """
    if sum(ch.isdigit() for ch in text[start:end]) > 8 or text[start] in "0+(":
        return False
    for span in spans:
        if span.kind == "analyte" and span.start < start and end <= span.end:
            head = _NAME_BEFORE_VALUE.fullmatch(text, span.start, start)
            if head is not None and head.group("name").lower() not in not_measures:
                return True
    return False


def _is_side(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int], unsafe: Sequence[bool]) -> bool:
    """"R" or "L" before a medical word is a side ("R groin", "L thigh", "to r shoulder", "R IJ SWAN"),
    no initial. On PhysioNet train + dev, VAERS dev and synthetic ICSR narratives no such letter is PHI.
    Only the two side letters: the medical lists also hold everyday words ("called", "fall"), so
    another letter before one of them may still be an initial ("J called").
    """
    if tokens[i].text not in ("R", "L", "r", "l") or i + 1 >= len(tokens):
        return False
    nxt = tokens[i + 1]
    f = flags[i + 1]
    return (text[tokens[i].end:nxt.start] == " " and len(nxt.text) > 1 and nxt.text.isalpha()
            and bool(f & _MEDICAL_WORD) and not f & (_UNSAFE | _STOPWORD) and not unsafe[i + 1])


#: two single letters joined by "&" ("I&O", "D&C"), nothing alphabetic around them
_LETTER_PAIR = re.compile(r"(?<![^\W\d_])[^\W\d_]&[^\W\d_](?![^\W\d_])")


#: a SOAP/SOAPIE note's section letter with a hyphen, then a space or a quote ("S- intubated", 'S-"help"')
_SOAP_HEADER = re.compile(r"[SOAPIEsoapie]-(?=[ \t\"'\n]|$)")
#: sides compared ("R>L", "L = R", "R TO L", "r->l"): both letters are sides
_SIDES = re.compile(r"(?<![^\W\d_])[RLrl] ?(?:>|<|=|->|to|TO) ?[RLrl](?![^\W\d_])")
#: "A & O" (alert and oriented) and "I & O" (intake and output) written with spaces
_SPACED_PAIR = re.compile(r"(?<![^\W\d_])[AaIi] & [Oo](?![^\W\d_])")

#: "K" for potassium: beside another electrolyte ("K & Ca", "Mg, Ca and K") or before its replacement or
#: level ("K repletion", "monitor K level"). Not the analyte list of `rules.clinical`: it also has "PT"
#: and "HR", and "per PT K. Smith" must keep its initial masked.
_ELECTROLYTES = r"(?:mg|ca|phos|po4|na|magnesium|calcium|lytes|electrolytes)"
_POTASSIUM_BEFORE = re.compile(
    r"[Kk](?:[ ,&/]*(?:and +)?" + _ELECTROLYTES + r"(?![^\W\d_])| +(?:repl|level|rider|supplement|protocol|scale))",
    re.IGNORECASE)
_POTASSIUM_AFTER = re.compile(r"(?<![^\W\d_])" + _ELECTROLYTES + r"[ ,&/]*(?:and +)?[Kk](?![^\W\d_])", re.IGNORECASE)


def _within(pattern: re.Pattern[str], text: str, tok: Token, reach: int = 5) -> bool:
    """Does a match of `pattern` near the token cover it whole?"""
    for m in pattern.finditer(text, max(0, tok.start - reach), tok.end + reach):
        if m.start() <= tok.start and tok.end <= m.end():
            return True
    return False


def _common_word_follows(tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """Is the token after `i`, one character on ("w/crackles", "A-line", "W IABP"), a common or medical word
    of two letters or more that no name or place list has?"""
    if i + 1 >= len(tokens) or tokens[i + 1].start != tokens[i].end + 1:
        return False
    word, f = tokens[i + 1], flags[i + 1]
    return len(word.text) > 1 and word.text.isalpha() and bool(f & _SAFE) and not f & _UNSAFE


def _at_line_start(text: str, start: int) -> bool:
    line = text.rfind("\n", 0, start) + 1
    return not text[line:start].strip()


#: distinct unknown words whose near-word verdict a RuleDeidentifier keeps
_NEAR_WORD_CACHE = 50_000
#: two letters of the same case joined by full stops, standing alone ("H.O.", "a.m.", "O.R.", "Y.O."); a
#: third letter ("H.J.F.", "C.S.L.") makes it a person's initials
_DOTTED_PAIR = re.compile(r"(?<![\w.])(?P<a>[^\W\d_])\.(?P<b>[^\W\d_])\.?(?![\w]|\.[^\W\d_])")
#: what the joined pair must spell for an abbreviation: a word a safe list has ("am", "or", "md", "bm", "gi")
_DOTTED_WORD = int(Lex.STOPWORD | Lex.COMMON_WORD | Lex.MEDICAL | Lex.DRUG_NAME | Lex.MEDDRA)


def _in_dotted_abbreviation(text: str, tok: Token, lookup: Callable[[str], int]) -> bool:
    """A letter of a dotted two-letter abbreviation whose letters spell a safe-list word ("a.m.", "O.R.", "M.D.").

    Such a pair is as often a person's initials ("D.O.", "J.R."): the letter stays masked by the rules, with
    a threshold family of its own (reason "single_letter:dotted_pair"), so that the network decides at a
    lower bar than for a lone letter. A pair whose letters differ in case ("M.d.") is left alone.
    """
    for start in (tok.start, tok.start - 2):
        if start < 0:
            continue
        m = _DOTTED_PAIR.match(text, start)
        if m is None or tok.start not in (m.start("a"), m.start("b")):
            continue
        a, b = m.group("a"), m.group("b")
        if a.isupper() != b.isupper():
            return False
        return bool(lookup((a + b).lower()) & _DOTTED_WORD)
    return False


def _is_notation_letter(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """A letter of clinical notation, never an initial: a section header or label ("S:", "O:", "A:", "P:",
    and "S- " at a line's start), a charge ("K+"), a pair joined by "&" ("I&O", "D&C", "A & O"), sides
    compared ("R>L", "L TO R"), potassium beside another electrolyte or before its repletion ("K & Ca",
    "K level"), "w" for "with" before a common or medical word ("W IABP", "w/crackles") or a hyphenated
    term ("A-line", "T-cell").

    On PhysioNet train + dev and the annotated VAERS dev part about 1,700 single letters stood so before
    the forms after "K+" were added, and about 500 more since; none is PHI. Initials stand before a full
    stop or a space ("S. Dominico", "J Smith"), and synthetic ICSR narratives write them hyphenated
    ("PT J-G"), which this rule leaves alone. The token is then judged as a safe word (the network may
    still mask it), not by the near-certain bar of a lone letter.
    An "&" between longer parts ("AT&T", "B&SR") names an organisation and stays unsafe; hyphenated
    initials ("PT J-G", "B-R") and a letter before a name ("J-Smith") are no term: the word after the
    hyphen must be a common or medical word of two letters or more.
    """
    tok = tokens[i]
    nxt = text[tok.end:tok.end + 1]
    prev = text[tok.start - 1:tok.start] if tok.start else ""
    if nxt in (":", "+") or prev == "+":
        return True
    if _SOAP_HEADER.match(text, tok.start) and _at_line_start(text, tok.start):
        return True
    letter = tok.text
    if (letter in "RLrl" and _within(_SIDES, text, tok)) or (letter in "AaIiOo" and _within(_SPACED_PAIR, text, tok)):
        return True
    if tok.lower == "k" and (_POTASSIUM_BEFORE.match(text, tok.start) or _within(_POTASSIUM_AFTER, text, tok, 16)):
        return True
    if tok.lower == "w" and nxt in (" ", "/"):
        # "w" for "with" before the word it governs ("W IABP", "w/crackles"; the shorthand list only knows
        # "w/" standing alone); an initial stands before a name, which a name or place list has ("W
        # Baker"), or before a full stop ("W. Smith")
        return _common_word_follows(tokens, i, flags)
    if nxt == "-":
        # the tokenizer drops the hyphen
        return _common_word_follows(tokens, i, flags)
    if nxt == "&":
        return _LETTER_PAIR.match(text, tok.start) is not None
    if prev == "&":
        return tok.start >= 2 and _LETTER_PAIR.match(text, tok.start - 2) is not None
    if letter in "AaPpMm" and "." in (nxt, prev):
        # "in a.m.", "UNTIL A.M.", "by the p.m.": the time of day after a word that asks for one; initials
        # ("A.M., 45 y") stand after no such word
        start = tok.start if letter in "AaPp" else tok.start - 2
        m = _TIME_OF_DAY.match(text, max(start, 0))
        return m is not None and start > 0 and _TIME_OF_DAY_BEFORE.search(text, max(0, start - 12), start) is not None
    return False


#: "a.m.", "P.M." (the full stop after the "m" may end the sentence)
_TIME_OF_DAY = re.compile(r"[AaPp]\.[Mm]\.")
#: the word before a time of day: "in a.m.", "until A.M.", "this p.m.", "tomorrow a.m."
_TIME_OF_DAY_BEFORE = re.compile(
    r"\b(?:in|until|till|by|the|this|each|every|per|next|early|late|tomorrow|tomorrows|tomorrow's|before|after)[ \t]+$",
    re.IGNORECASE,
)


_CONJUNCTIONS = frozenset({"and", "or", "nor", "but", "et", "&"})


def _is_article(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """A capital "A" used as the article ("A 45-year-old", "A patient", "A FEW HOURS LATER"), not an
    initial ("A. Smith", "A Smith", "A NEURO GROUP"): a lower-case word, a number or a stopword follows.
    A conjunction after it ("Saunders A and colleagues", "Myga A et al") follows an initial: no article."""
    if tokens[i].text != "A" or i + 1 >= len(tokens):
        return False
    nxt = tokens[i + 1]
    if nxt.lower in _CONJUNCTIONS:
        return False
    gap = text[tokens[i].end:nxt.start]
    return bool(gap) and gap.isspace() and (
        nxt.text[0].islower() or nxt.text[0].isdigit() or bool(flags[i + 1] & Bits.STOPWORD))


_ARTICLES = frozenset({"a", "an"})


#: between a drug name and its strength, and between the parts of a strength ("co-codamol 30/500",
#: "Allegra 180", "Omnipaque 350", "losartan 2.5")
_STRENGTH_GAP = re.compile(r"[ \t]{1,2}")
_STRENGTH_JOIN = frozenset({"/", ".", ","})
#: a strength has at most this many digits per part: longer numbers after a name may be identifiers
_STRENGTH_DIGITS = 4


#: the singular words of a schedule that are also surnames: with their number ("Day 1", "Week 12")
#: a trial's or a treatment's day, not a person ("Weeks 3" may be one, and stays masked)
_COUNTED_DAY_WORDS = frozenset({"day", "week"})
#: once daily, every morning, every night, written right after a dose ("20 mg OD"): a frequency there,
#: although "OD" is also a pair of initials
_DOSE_FREQUENCY_WORDS = frozenset({"od", "om", "on", "o.d."})


def _is_drug_strength(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """A bare number right after a complete drug name is its strength ("Allegra 180", "co-codamol 30/500").

    Medication lists write the strength without its unit ("lisinopril 20, metformin 1000"); the number
    names a product, never a person. Only short numbers (`_STRENGTH_DIGITS`) on the same line as a
    name the drug lists know as a whole; a date or an ID after a drug name is claimed by its pattern
    detector before this is asked.
    """
    j = i
    while True:
        if not (tokens[j].text.isdigit() and len(tokens[j].text) <= _STRENGTH_DIGITS):
            return False
        if j == 0:
            return False
        gap = text[tokens[j - 1].end:tokens[j].start]
        if gap in _STRENGTH_JOIN:
            j -= 1
            continue
        prev = j - 1
        return (bool(_STRENGTH_GAP.fullmatch(gap)) and bool(flags[prev] & _DRUG_NAME)
                and not flags[prev] & _STOPWORD)




#: between a name and its other name in parentheses: " (" or "("
_OPEN_PAREN = re.compile(r"[ \t]?\(")


def _is_paired_drug_name(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """A name with a complete drug name in parentheses after it ("Remicade (infliximab)", "Beyfortus
    (nirsevimab)"), or in parentheses after one ("dupilumab (Dupixent)"): the other name of that product.

    Reports give a brand its generic name and the other way round; a person's name is not written
    so. Only a word of three letters or more, directly beside the brackets.
    """
    if len(tokens[i].text) < 3 or not tokens[i].text.isalpha():
        return False
    if i + 1 < len(tokens):
        nxt = tokens[i + 1]
        # the generic may open a combination: "Coartem (artemether/lumefantrine 80/480 mg)"
        if (_OPEN_PAREN.fullmatch(text[tokens[i].end:nxt.start]) and _is_drug(flags[i + 1])
                and text[nxt.end:nxt.end + 1] in _PAIR_CLOSE):
            return True
    if i > 0:
        prev = tokens[i - 1]
        if _OPEN_PAREN.fullmatch(text[prev.end:tokens[i].start]) and text[tokens[i].end:tokens[i].end + 1] == ")":
            if _is_drug(flags[i - 1]):
                return True
            # a drug and its salt before the brackets: "lithium carbonate (Priadel)"
            if (i > 1 and _is_drug(flags[i - 2]) and prev.text.isalpha() and prev.text.islower()
                    and text[tokens[i - 2].end:prev.start] == " "):
                return True
    return False


#: what may follow the first name inside the brackets: its end, or the next part of a combination
_PAIR_CLOSE = frozenset({")", "/", "+"})


def _is_drug(f: int) -> bool:
    """A complete drug name that is no stopword."""
    return bool(f & _DRUG_NAME) and not f & _STOPWORD


def _is_product_before_dose(text: str, tokens: Sequence[Token], i: int, clinical: Mapping[int, str]) -> bool:
    """A word no list knows, right before a dose ("Synthroid 50 mcg", "Microgynon 30 mcg"): a product's name.

    Brand names outnumber any drug list; a dose after one names what was taken. Only a word the
    lists do not know at all (a name-list word stays masked: "Dr Smith 40 mg" keeps "Smith"), one
    space before a number that opens a clinical quantity, and a dose unit after the number.
    """
    j = i + 1
    if j + 1 >= len(tokens) or clinical.get(j) != "quantity" or not tokens[j].text[:1].isdigit():
        return False
    if not _STRENGTH_GAP.fullmatch(text[tokens[i].end:tokens[j].start]) or len(tokens[i].text) < 3:
        return False
    k = j + 1
    while k < len(tokens) and clinical.get(k) == "quantity" and tokens[k].text.isdigit():
        k += 1  # "2.5 mg": the decimal's second part
    return k < len(tokens) and clinical.get(k) == "quantity" and tokens[k].lower in PRODUCT_DOSE_UNITS


def _is_article_before_safe_word(text: str, tokens: Sequence[Token], i: int, flags: Sequence[int]) -> bool:
    """"A" or "an" as the article before a number or a word a safe list knows and no name or place list
    has ("A 45-year-old", "reported by a pharmacist", "AN ELDERLY"): never PHI, so it gets the reason
    "article", whose threshold is policy (`deep.combiner.by_reason`). A middle initial between names
    ("benjamin a seiler", "josé a madeira") or before a conjunction ("Saunders A and") is none."""
    if tokens[i].lower not in _ARTICLES or i + 1 >= len(tokens):
        return False
    nxt = tokens[i + 1]
    gap = text[tokens[i].end:nxt.start]
    if not gap or not gap.isspace() or nxt.lower in _CONJUNCTIONS:
        return False
    f = flags[i + 1]
    return nxt.text[0].isdigit() or (bool(f & _SAFE) and not f & _UNSAFE)


class RuleDeidentifier:
    """Applies dictionaries, pattern and context detectors to texts."""

    def __init__(
        self,
        artifact: DictionaryArtifact,
        rules: RulesConfig,
        patterns: PatternDetector | None = None,
        context: ContextDetector | None = None,
        clinical: ClinicalEvidence | None = None,
    ) -> None:
        self.artifact = artifact
        self.rules = rules
        self.patterns = patterns or PatternDetector(
            enabled=rules.pattern_categories, phone_regions=rules.phone_regions
        )
        self.context = context or ContextDetector(
            ContextLexicon.from_config(rules),
            rules.context,
        )
        if clinical is None and rules.clinical is not None and rules.clinical.enabled:
            clinical = ClinicalEvidence.from_files(rules.clinical.analytes, rules.clinical.dose_units,
                                                   rules.clinical.designations, rules.clinical.shorthand)
        self.clinical = clinical
        self._letter_exceptions = frozenset(rules.single_letter_exceptions)
        #: `near_safe_word` per token text: a misspelling recurs across reports, and the check is a few
        #: hundred look-ups; a plain dict (cleared when full) so the object still pickles
        self._near_words: dict[str, bool] = {}
        # score by masking kind, looked up per masked token
        self._scores: dict[str, float] = {k: float(v) for k, v in rules.scores.model_dump().items()}

    @classmethod
    def from_config(cls, cfg: DeidConfig, artifact: DictionaryArtifact | None = None) -> RuleDeidentifier:
        art = artifact or DictionaryArtifact.load(cfg.dictionaries.artifact)
        return cls(art, cfg.rules)

    @property
    def version(self) -> str:
        return f"rules+{self.artifact.version}"

    def effective_flags(self, tokens: Sequence[Token]) -> list[int]:
        """Word flags plus the flags of multi-word phrases each token is part of."""
        return self._flags(tokens)[0]

    def _flags(self, tokens: Sequence[Token]) -> tuple[list[int], list[int]]:
        lowered = [t.lower for t in tokens]
        flags = [self.artifact.flags(w) for w in lowered]
        phrase_flags = [0] * len(tokens)
        for start, end, f in self.artifact.phrases.match(lowered):
            for i in range(start, end):
                phrase_flags[i] |= f
        return [a | b for a, b in zip(flags, phrase_flags)], phrase_flags

    def analyse(self, text: str) -> RuleAnalysis:
        tokens = tokenize(text)
        flags, phrase_flags = self._flags(tokens)
        n = len(tokens)
        labels = [SAFE_LABEL] * n
        reasons = ["safe"] * n
        unsafe = [False] * n
        groups = [-1] * n

        # clinical expressions are found first: a decade after "in the" that follows a measurement's
        # name ("HR in the 100s") is its value, not an age
        clinical_spans = self.clinical.find(text, tokens) if self.clinical is not None and n else []
        # 1) pattern detectors: tokens overlapping a match take its category
        next_group = self._apply_patterns(text, tokens, labels, reasons, unsafe, groups, clinical_spans) if n else 0
        # 2) context detectors; adjacent hits of one detector form one group
        prev: tuple[int, str] | None = None
        for hit in sorted(self.context.find(text, tokens, flags), key=lambda h: h.token_index):
            i = hit.token_index
            if not unsafe[i]:
                unsafe[i] = True
                labels[i] = hit.label
                reasons[i] = f"context:{hit.detector}"
                if prev is None or prev != (i - 1, hit.detector):
                    next_group += 1
                groups[i] = next_group
                prev = (i, hit.detector)
        kin_named = frozenset(i for i, r in enumerate(reasons) if r == "context:kin_name")
        # 3) clinical values ("40 mg", "INR 2.3", "q6h"): safe with their own reason,
        #    never over a pattern or context match (those tokens are already unsafe)
        clinical = self._clinical_tokens(tokens, unsafe, clinical_spans) if clinical_spans else {}
        # 4) dictionaries and token shape; in a mixed-case document a lower-case word masked for
        #    itself alone keeps its reason with ":lower_case", a threshold family of its own
        profile = self.rules.case_profile
        case_evidence = profile is not None and case_is_evidence(tokens, profile)
        for i, tok in enumerate(tokens):
            if unsafe[i]:
                continue
            f = flags[i]
            s = tok.text
            reason = None
            if f & _UNSAFE and self._relation_word(text, tokens, i, kin_named):
                reason = None  # "her son", "PT'S SON": the relation, whatever name list also has "Son"
            elif f & _UNSAFE and is_descriptor(text, tokens, i, flags):
                reason = None  # "THICK WHITE SECRETIONS", "89 YO BLACK FEMALE", "74 YR OLD MALE": a colour, race or sex
            elif s in ("MI", "AMI") and is_infarction(text, tokens, i):
                reason = None  # "S/P MI 1992", "PMH: COPD, MI, CABG", "RECENT MI": the infarction, no name
            elif is_modal_may(tokens, i):
                reason = None  # "PT MAY BE TRANSFERED", "May require intubation": the modal verb, no month
            elif is_contraction_stem(text, tok):
                reason = None  # "I DON'T WANT", "won't": a contraction, whatever name list has "Don"
            elif f & _UNSAFE or (f & Bits.TLD and preceded_by_dot(text, tok)):
                reason = "unsafe_list"
            elif not s.isalpha() and any(ch.isdigit() for ch in s):
                reason = "digit"
            elif (len(s) == 1 and self.rules.single_letters_unsafe and s not in self._letter_exceptions
                  and not _is_article(text, tokens, i, flags) and not _is_word_ending(text, tok)
                  and not _is_notation_letter(text, tokens, i, flags)
                  and not _is_side(text, tokens, i, flags, unsafe)):
                reason = "single_letter"
            elif not f & _SAFE and (tok.lower in self.context.lex.salutations or is_credential(text, tokens, i, unsafe)):
                # a title ("Mrs", "Drs", "Mme") is never part of the name it opens, nor a credential
                # ("Jean Hudson, RN") of the name it closes: an ordinary word, not an unknown one
                reason = None
            elif not f & _SAFE:
                reason = "unknown"
            kind = clinical.get(i)
            if kind == "eponym" and f & Bits.FIRST_NAME and text[tok.end:tok.end + 1] in ("'", "’"):
                kind = None  # "Maria's disease": a given name's possessive is a person's, no eponym
            if (kind is None and reason == "digit" and self.clinical is not None
                    and _is_drug_strength(text, tokens, i, flags)):
                kind = "strength"
            elif (kind is None and (reason == "unknown" or (reason is None and f & _DRUG_NAME and not f & _STOPWORD))
                    and ((clinical and _is_product_before_dose(text, tokens, i, clinical))
                         or _is_paired_drug_name(text, tokens, i, flags))):
                # a brand no list knows, or a listed drug name the network may doubt, named by its dose
                # ("Synthroid 50 mcg", "Lialda 4.8 g") or by its other name ("Remicade (infliximab)")
                kind = "product"
            if kind is not None and self._clinical_wins(reason, tok, kind):
                reasons[i] = f"clinical:{kind}"
                continue
            if reason is not None:
                unsafe[i] = True
                reasons[i] = lower_case_reason(reason, tok) if case_evidence else reason
                if case_evidence:
                    # "ED", "MI", "OSH" in capitals in a mixed-case note: an abbreviation, its own family;
                    # not a weekday's, month's or holiday's name ("MAR", "DEC", "SAT" may be one)
                    reasons[i] = upper_case_reason(reasons[i], tok, bool(f & _SAFE) and not f & _CALENDAR)
                if reasons[i] == "unknown" and self._near_safe_word(s):
                    # a misspelling ("PENUMONIA", "udated"), masked with a threshold family of its own; in lower
                    # case in a mixed-case note it stays "unknown:lower_case", a family that already lets it go
                    reasons[i] = "unknown" + NEAR_WORD_SUFFIX
                elif reason == "single_letter" and _in_dotted_abbreviation(text, tok, self.artifact.flags):
                    # "H.O.", "a.m.", "O.R.": masked, with a threshold family of its own
                    reasons[i] = "single_letter" + DOTTED_PAIR_SUFFIX
                labels[i] = _label_from_flags(f, phrase_flags[i], tokens[i - 1].lower if i else None)
            elif _is_article_before_safe_word(text, tokens, i, flags):
                # the network, trained on notes that seldom open with one, masks the "A" of
                # "A 45-year-old" at a narrative's start; the rules know it is the article
                reasons[i] = "article"
            elif relation_alone(text, tokens, i, flags, self.context.lex.kinship):
                # "son and grandson in to visit", "MOTHER, AUNTS": a relation never names anyone by itself;
                # its own family, whose threshold is policy (the network doubts it beside the names it precedes)
                reasons[i] = "relation"
            elif f & _DRUG_NAME and not f & _STOPWORD:
                # a complete drug name ("warfarin", "Lasix"): the word a reviewer needs most,
                # with its own threshold family, not held to the bar of every common word;
                # a long lower-case one in a mixed-case note is "drug:lower_case"
                reasons[i] = listed_reason("drug", tok, case_evidence)
            elif f & Bits.MEDICAL and not f & _STOPWORD:
                # safe because a medical or MedDRA list (or a drug name's word bag) knows it;
                # a long lower-case one in a mixed-case note is "medical:lower_case"
                reasons[i] = listed_reason("medical", tok, case_evidence)
        # 5) an initial before a masked capitalised word belongs to it ("W. Halverson",
        #    "Martha C. Lindqvist", "U Nebraska"): grouped, both are released together or not at all
        if n:
            next_group = _group_initials(text, tokens, unsafe, reasons, groups, next_group)
        table = self._scores
        scores = [table[r.split(":", 1)[0]] if unsafe[i] else 0.0 for i, r in enumerate(reasons)]
        return RuleAnalysis(text, tokens, flags, unsafe, labels, reasons, scores, groups)

    def _near_safe_word(self, word: str) -> bool:
        hit = self._near_words.get(word)
        if hit is None:
            if len(self._near_words) >= _NEAR_WORD_CACHE:
                self._near_words.clear()
            hit = self._near_words[word] = near_safe_word(word, self.artifact.flags)
        return hit

    def analyse_many(self, texts: Iterable[str]) -> list[RuleAnalysis]:
        return [self.analyse(t) for t in texts]

    @staticmethod
    def _clinical_tokens(tokens: Sequence[Token], unsafe: list[bool], spans: Sequence[ClinicalSpan]) -> dict[int, str]:
        """Token index -> kind, for tokens lying wholly inside a clinical expression that no match touches."""
        out: dict[int, str] = {}
        starts = [t.start for t in tokens]
        for span in spans:
            first = k = bisect.bisect_left(starts, span.start)
            while k < len(tokens) and tokens[k].end <= span.end:
                k += 1
            # a PHI detector claims part of it ("Towson, MD 21204"): the expression is not trusted
            if any(unsafe[first:k]):
                continue
            for j in range(first, k):
                out.setdefault(j, span.kind)
        return out

    def _relation_word(self, text: str, tokens: Sequence[Token], i: int, kin_named: frozenset[int]) -> bool:
        """A kinship word ("son", "friend") after a possessive or an article, or before the relative's name
        when not itself written as a name ("SON WILLIAM", "son tom"), names a relation, not a person.

        "Son" and "Friend" are on name lists, and in a note written in capitals ("HER SON IN TO VISIT")
        case cannot tell; the word before can. On PhysioNet train no kinship word is gold PHI.
        """
        kin = self.context.lex.kinship
        if tokens[i].lower == "law" and i >= 2 and tokens[i - 2].lower in kin and tokens[i - 1].lower == "in":
            return True  # "SON-IN-LAW", "dtr in law": the relation, not the surname "Law"
        if tokens[i].lower == "grand" and i + 1 < len(tokens) and tokens[i + 1].lower in kin:
            return True  # "GRAND DAUGHTER": the relation, not the surname "Grand"
        if tokens[i].lower not in kin:
            return False
        if i + 1 < len(tokens) and i + 1 in kin_named and not tokens[i].text.istitle():
            return True  # "SON WILLIAM", "son tom": the name after it is the relative's ("Son Nguyen" stays)
        if listed_relative(text, tokens, i, kin):
            return True
        if i == 0:
            return False
        prev = tokens[i - 1]
        if text[prev.end:tokens[i].start].strip(" \t"):
            return False  # "her. Son", "his, son": another clause
        return prev.lower in DETERMINERS or (
            prev.lower == "s" and text[prev.start - 1:prev.start] in ("'", "’"))  # "pt's son"

    def _clinical_wins(self, reason: str | None, tok: Token, kind: str) -> bool:
        """Clinical evidence lifts shape-based masking (digit, single letter, unknown word). A word on a
        name or place list only when it is a curated analyte or unit ("Ca 8.9"), a unit as written
        ("5 MIN"), written in lower case ("for 2 weeks", "rose to 2.1"), or the day or week of a
        schedule with its number ("on Day 1", "(Day 16)", "Week 12 visit"): a capitalised "Weeks" or
        "Rose" stays masked. A piece of a lot code ("Lot ED-1234") or of a designation ("COVID-19") is never
        a name: it always wins."""
        if reason is None or reason in ("digit", "single_letter", "unknown") or kind in ("lot", "designation", "eponym"):
            return True
        assert self.clinical is not None
        return reason == "unsafe_list" and (
            tok.text.islower() or self.clinical.curated(tok.lower) or self.clinical.is_unit(tok.text)
            or (kind == "timing" and (tok.lower in _COUNTED_DAY_WORDS or tok.lower in _DOSE_FREQUENCY_WORDS)))

    def _apply_patterns(
        self,
        text: str,
        tokens: Sequence[Token],
        labels: list[str],
        reasons: list[str],
        unsafe: list[bool],
        groups: list[int],
        clinical_spans: Sequence[ClinicalSpan] = (),
    ) -> int:
        """Mark tokens under pattern matches; returns the last group id used."""
        matches = self.patterns.find(text)
        if clinical_spans and any(m.detector == AGE_DECADE_MEASURE for m in matches):
            matches = [m for m in matches if m.detector != AGE_DECADE_MEASURE
                       or not _measured_decade(text, m.start, clinical_spans)]
        if clinical_spans and self.clinical is not None and any(m.detector in _SHAPE_PHONES for m in matches):
            not_measures = self.clinical.state_like | _PERSON_ANALYTES
            matches = [m for m in matches if m.detector not in _SHAPE_PHONES
                       or not _measured_range(text, m.start, m.end, clinical_spans, not_measures)]
        # tokens and matches are both sorted by start: one merge pass
        j = 0
        n = len(tokens)
        for g, m in enumerate(matches):
            while j < n and tokens[j].end <= m.start:
                j += 1
            k = j
            while k < n and tokens[k].start < m.end:
                if not unsafe[k]:
                    unsafe[k] = True
                    # spoken digits and words ("five five five, oh one four four") are no shape the
                    # network has learnt to judge: they take the never-released "pattern" family
                    # so is an age read from its place after a name alone ("Irma, 58,"; no age word): as
                    # often a house number, it is never shown on the network's word, and it is no AGE the
                    # policy would show as under 90 either: the replacement tags it "[PHI]"
                    labels[k] = m.category
                    reasons[k] = f"pattern:{m.category}"
                    if m.detector in SPOKEN_DETECTORS:
                        reasons[k] = "pattern"
                    elif m.detector == AGE_AFTER_NAME:
                        labels[k] = UNKNOWN_LABEL
                        reasons[k] += PLACE_ONLY_SUFFIX
                    groups[k] = g
                k += 1
        return len(matches)
