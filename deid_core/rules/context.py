"""Context detectors: PHI made of words that are safe on their own.

Dictionary look-ups judge each word alone, so "Dr Tyro", "Sacred Heart
Hospital", "Harford Memorial", "Pleasant Grove Family Medicine" or "12 Elm
Street" slip through: "tyro", "sacred", "memorial", "grove" and "elm" are
common English words. These detectors use the neighbouring words (a title,
an institution or organisation word, a house number) to mark such words
unsafe. They only ever add masking, never remove it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pathlib import Path

from deid_core.config import ContextConfig, RulesConfig, read_word_list
from deid_core.dictionaries.flags import Bits
from deid_core.rules.case_profile import case_shares
from deid_core.rules.clinical import SAINTS_HERB
from deid_core.text.tokenize import Token, tokenize

#: Characters that may join the words of one name ("St. Mary's", "Kessler-Adventist").
_NAME_JOINERS = frozenset(" \t.'-’")
_MAX_JOIN_GAP = 3
_LOOKBACK_WORDS = 3
#: words that make the noun after them a common one: "his father", "the nurse", "pt's son", "PT SON", "whose
#: daughter"; a whole-word title or a kinship word after them names a role or a relation, not a person
DETERMINERS = frozenset({"his", "her", "their", "my", "your", "our", "the", "a", "an", "whose", "pt", "pts", "patient",
                         "patients"})
#: a company's legal form, which notes also write for "increase(d)"
_COMPANY_SUFFIXES = frozenset({("inc",)})
#: ... as what follows on the line shows: a word or a number goes on ("INC TO 30", "inc in output"); a
#: company's name ends at its legal form ("Pfizer Inc.", "Acme Inc, Boston", "Acme Inc (USA)")
_INCREASE_AFTER = re.compile(r"[ \t]+[\w]")
#: heads that also name a service or a state rather than a place ("rehab", "health")
_SERVICE_HEADS = frozenset({("rehab",), ("rehabilitation",), ("health",)})
#: ... followed by what makes them a role or a service: "health care proxy", "HEALTH PROXY", "home health aide"
_SERVICE_PHRASE_AFTER = re.compile(
    r"(?i)[ \t]+(?:care[ \t]+)?(?:prox(?:y|ies|ys)|aides?|aids?|decisions?|providers?|workers?|professionals?|"
    r"team|status|issues?|insurance|literacy|maintenance|screen(?:ing)?|placement|stay|consult)\b"
)
#: a carer's credential written after the name ("Jean Hudson, RN", "David Murray RRT", "Ann Lee MSW");
#: the guideline's and PhysioNet's spans leave professions out. Written here from general usage.
CREDENTIALS = frozenset({
    "rn", "lpn", "lvn", "cna", "np", "aprn", "fnp", "crna", "cnm", "pa", "pac", "md", "do", "mbbs", "mbchb",
    "phd", "pharmd", "rph", "rrt", "crt", "rt", "pt", "ot", "slp", "msw", "lcsw", "licsw", "lsw", "rncm",
    "bsn", "msn", "dnp", "mph", "rd", "ccrn", "frcp", "frcs", "mrcp",
})
#: what names a rhythm before "ST" (sinus tachycardia): "NSR to ST", "SR/ST", "SB-ST", "afib to ST"
_RHYTHMS_BEFORE_ST = frozenset({"sr", "nsr", "sb", "sinus", "af", "afib", "aflutter", "svt", "mat", "pat", "jr"})
#: what is said of an ECG's ST segment or of a rhythm straight after "ST": "ST CHGS", "ST HR 110", "ST ELEVATION"
_ECG_AFTER_ST = frozenset({
    "hr", "chgs", "chg", "change", "changes", "elevation", "elevations", "elev", "depression", "depressions",
    "segment", "segments", "wave", "waves", "abn", "abnl", "abnormalities", "wo", "w", "with", "rate",
})
#: name words an organisation detector walks back over ("Queen Alexandra Emergency", "Hudson Valley Sleep")
_ORG_WORDS = 4
#: between the words of an organisation's name: spaces, "&", a hyphen or an apostrophe; no full stop,
#: which would join the last word of a sentence to a capitalised word opening the next
_ORG_GAP = re.compile(r"[ \t]{1,2}|[ \t]?[&'’-][ \t]?|[ \t]+&[ \t]+")
#: a room, bed or bay and its number ("room 14", "Rm 612-B", "bed 12", "ROOM 208B", "bay #3")
_ROOM = re.compile(r"(?i)\b(?:room|rm|bed|bay|cubicle)\.?[ \t]?(?:#|no\.?)?[ \t]?[1-9][0-9]{0,3}"
                   r"(?:-?[A-Za-z](?![^\W\d_]))?(?![\w/%]|[.,]\d)")
#: the number of a road or station: "9W", "101", "3" (no leading zero, one letter at most)
_NUMBERED = re.compile(r"[1-9][0-9]{0,3}[A-Za-z]?")
#: street words that name a street after capitalised words even without a house number ("on Tunnel
#: Rd", "off Harbour Road"); the others of the street list ("St", "Dr", "Court", "Place", "Way",
#: "Close", "Gardens", "Walk") also open names, titles or phrases, and need the number
_STREET_WITHOUT_NUMBER = frozenset(
    "street road rd avenue ave boulevard blvd lane ln highway hwy parkway pkwy crescent terrace "
    "strasse straße gatan vägen weg gasse".split()
)
#: the halves of a British postcode ("NN16 0AF", "SW1A 1AA", "M25 1PY") and a Canadian one ("K1A 0B1")
_UK_OUTWARD = re.compile(r"[A-Z]{1,2}[0-9][A-Z0-9]?")
_UK_INWARD = re.compile(r"[0-9][ABD-HJLNP-UW-Z]{2}")
_CA_HALF_A = re.compile(r"[ABCEGHJ-NPRSTVXY][0-9][A-Z]")
_CA_HALF_B = re.compile(r"[0-9][A-Z][0-9]")
#: between a kinship word and the name: "son Don", "son, Don", "daughter (Maria)", "wife: Mary"
_KIN_GAP = re.compile(r"[ \t]*[,:(-]?[ \t]*")


@dataclass(frozen=True, slots=True)
class ContextHit:
    token_index: int
    label: str
    detector: str


@dataclass(frozen=True)
class ContextLexicon:
    """Word lists the context detectors need, read once from `conf/`."""

    salutations: frozenset[str]
    #: head word sequence -> whether the head itself is part of the name
    institution_heads: dict[tuple[str, ...], bool]
    street_suffixes: frozenset[str]
    saint_prefixes: frozenset[str]
    institution_prefixes: frozenset[str]
    #: kinship words ("son", "wife"): a name-list word after one is a relative's name
    kinship: frozenset[str] = frozenset()
    #: everyday words that end an organisation's name after capitalised name words ("Associates",
    #: "Unit", "Credit Union"), as lower-case token sequences
    organisation_heads: frozenset[tuple[str, ...]] = frozenset()
    #: words that name a kind of facility, not which one ("intensive", "care", "oncology")
    facility_words: frozenset[str] = frozenset()
    #: words that name a place when a number follows them ("route", "station")
    numbered_places: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, rules: RulesConfig) -> ContextLexicon:
        def words(path: Path) -> frozenset[str]:
            return frozenset(w.lower() for w in read_word_list(path))

        head_map: dict[tuple[str, ...], bool] = {}
        for entry in read_word_list(rules.institution_heads):
            starred = entry.endswith("*")
            key = tuple(t.text.lower() for t in tokenize(entry.rstrip("*")))
            if key:
                head_map[key] = starred
        return cls(
            salutations=words(rules.salutations),
            institution_heads=head_map,
            street_suffixes=words(rules.street_suffixes),
            saint_prefixes=words(rules.saint_prefixes),
            institution_prefixes=words(rules.institution_prefixes),
            kinship=words(rules.kinship) if rules.kinship is not None else frozenset(),
            organisation_heads=frozenset(
                key for key in (tuple(t.lower for t in tokenize(entry)) for entry in read_word_list(rules.organisation_heads))
                if key
            ) if rules.organisation_heads is not None else frozenset(),
            facility_words=words(rules.facility_words) if rules.facility_words is not None else frozenset(),
            numbered_places=words(rules.numbered_places) if rules.numbered_places is not None else frozenset(),
        )


def case_is_informative(tokens: Sequence[Token]) -> bool:
    """True when the text uses normal capitalisation, so capitals mark names.

    ALL-CAPS notes and all-lower-case notes carry no case signal; there the
    detectors must not require capitals (and accept more over-masking).
    """
    c = case_shares(tokens)
    if c.words == 0:
        return False
    return c.upper / c.words < 0.6 and c.title / c.words >= 0.03


#: words that report what a named person did or is, right after the name in a note that shows no case
#: ("DR JONES AWARE", "dr smith notified", "MR DEXTER WORSENED"): the name ends before them
_VERB_AFTER_NAME = frozenset({
    "aware", "notified", "informed", "updated", "called", "paged", "spoke", "met", "saw", "seen", "says", "said",
    "states", "stated", "agrees", "agreed", "made", "ordered", "wants", "continues", "remains", "remained",
    "worsened", "improved", "arrived", "visited",
})


def _joined(prev: Token, nxt: Token, text: str) -> bool:
    """Are two adjacent tokens parts of one name (only name-joining characters between)?"""
    gap = text[prev.end:nxt.start]
    return len(gap) <= _MAX_JOIN_GAP and all(ch in _NAME_JOINERS for ch in gap)


def _capitalised(tok: Token) -> bool:
    return tok.text[:1].isupper()


def _title(tok: Token) -> bool:
    """Capitalised but not all capitals: "Unit", not the header word "UNIT"."""
    return tok.text[:1].isupper() and not tok.text.isupper()


class ContextDetector:
    """Runs the enabled context detectors over one tokenised text."""

    def __init__(self, lexicon: ContextLexicon, enabled: ContextConfig) -> None:
        self.lex = lexicon
        self.enabled = enabled
        self._max_head = max((len(h) for h in lexicon.institution_heads), default=0)
        self._head_first = frozenset(h[0] for h in lexicon.institution_heads)
        self._max_org_head = max((len(h) for h in lexicon.organisation_heads), default=0)

    def find(self, text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[ContextHit]:
        informative = case_is_informative(tokens)
        hits: list[ContextHit] = []
        if self.enabled.titled_names:
            hits += self._titled_names(text, tokens, flags, informative)
        if self.enabled.name_sequences and informative:
            hits += self._name_sequences(text, tokens, flags)
        if self.enabled.kin_names and self.lex.kinship:
            hits += self._kin_names(text, tokens, flags)
        if self.enabled.institutions:
            hits += self._institutions(text, tokens, flags, informative)
            hits += self._institutions_of(text, tokens, flags, informative)
            hits += self._saint_names(text, tokens, flags, informative)
        if self.enabled.organisations and informative and self.lex.organisation_heads:
            hits += self._organisations(text, tokens, flags)
        if self.enabled.numbered_places and informative and self.lex.numbered_places:
            hits += self._numbered_places(text, tokens, flags)
        if self.enabled.numbered_places:
            hits += self._rooms(text, tokens)
        if self.enabled.addresses:
            hits += self._addresses(text, tokens, flags, informative)
            hits += self._state_codes(text, tokens, flags, informative)
            hits += self._postcodes(text, tokens)
        return hits

    # ---- "Dr Tyro", "Mrs. J. Halfpenny" ------------------------------------

    def _titled_names(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], informative: bool
    ) -> list[ContextHit]:
        hits: list[ContextHit] = []
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if tok.lower not in self.lex.salutations or i + 1 >= n:
                continue
            if not _joined(tok, tokens[i + 1], text) or "-" in text[tok.end:tokens[i + 1].start]:
                continue  # "MS- alert", "SR-": a section header (mental status, sinus rhythm), no title
            if text[max(0, tok.start - 3):tok.start].rstrip()[-1:].isdigit():
                continue  # "QTc 591 ms. Oxcarbazepine": a unit after its number, no title
            if tok.lower == "sr" and self._sinus_rhythm(text, tokens, flags, i):
                continue
            if len(tok.text) >= 5 and self._word_title_not_used(text, tokens, flags, i, informative):
                continue
            taken = 0
            j = i + 1
            if tokens[j].lower == "s" and text[tok.end:tokens[j].start] in ("'", "’"):
                j += 1  # "DR'S CAMARDA AND CLIFFORD": a plural title, the names after it
                if j >= n or not _joined(tokens[j - 1], tokens[j], text):
                    continue
            while j < n:
                cand = tokens[j]
                if cand.lower == "s" and text[tokens[j - 1].end:cand.start] in ("'", "’"):
                    break  # "dr. white's order", "Mrs. McLaughlin's speech": the possessive ends the name
                if cand.lower in self.lex.salutations or any(ch.isdigit() for ch in cand.text):
                    break  # "SR 50-60s": a name has no digits
                if not (len(cand.text) == 1 and cand.text.isalpha()):  # initials always join
                    # a stopword ends the name, unless capitals show it is one ("Dr Will Cole")
                    if taken == 2 or (flags[j] & Bits.STOPWORD and not (informative and _capitalised(cand))):
                        break
                    if informative and not _capitalised(cand):
                        break  # "the dr said": lower case after a title is no name here
                    if taken == 1 and self._ends_titled_name(text, tokens, flags, j, informative):
                        break
                    taken += 1
                hits.append(ContextHit(j, "NAME", "titled_name"))
                if j + 1 >= n or not _joined(cand, tokens[j + 1], text):
                    break
                j += 1
        return hits

    @staticmethod
    def _word_title_not_used(text: str, tokens: Sequence[Token], flags: Sequence[int], i: int, informative: bool) -> bool:
        """Is a title written as a whole word ("nurse", "father", "sister", "doctor") here an ordinary noun?

        It is after a possessive or an article ("his father's condition", "pt.sister stayed", "the nurse"),
        before a full stop ("via nurse. vols stable") or a possessive ("father's"), and, in a note whose
        case says nothing, before a word that only safe lists know ("NURSE ADMISSION NOTE"). A name
        after it ("Sister Mary Joseph", "Nurse Ratched", "FATHER OBRIEN") keeps it a title.
        """
        tok, nxt = tokens[i], tokens[i + 1]
        gap = text[tok.end:nxt.start]
        if gap.startswith((".", "'", "’")):
            return True
        if i > 0 and (tokens[i - 1].lower in DETERMINERS or (
                tokens[i - 1].lower == "s" and text[tokens[i - 1].start - 1:tokens[i - 1].start] in ("'", "’"))):
            return True
        return not informative and bool(flags[i + 1] & Bits.SAFE) and not flags[i + 1] & Bits.UNSAFE

    @staticmethod
    def _sinus_rhythm(text: str, tokens: Sequence[Token], flags: Sequence[int], i: int) -> bool:
        """Is the "SR" at `i` the cardiac rhythm ("SR W FREQ PACS", "hr 80's sr w/ occ pvc", "in SR.
        BP 130") rather than a title (Señor, Sister: "Sr. Simó", "SR. HIDALGO", "Sr Nomvula Khumalo")?

        A title is written "Sr" or followed by a full stop, and the word after it is an initial or
        no word that only safe lists know. In PhysioNet's notes every one of the 46 "SR"s the title
        rule read was the rhythm.
        """
        tok, nxt = tokens[i], tokens[i + 1]
        if tok.text != "Sr" and not text.startswith(".", tok.end):
            return True
        if i > 0 and tokens[i - 1].lower in _RHYTHMS_BEFORE_ST and text[tokens[i - 1].end:tok.start] in ("/", "-"):
            return True  # "PATIENT IN A SB/SR. P WAVES VISIBLE": one rhythm after another
        # an initial after the full stop is a name's ("Sr. C., of 59 years")
        return len(nxt.text) > 1 and bool(flags[i + 1] & Bits.SAFE) and not flags[i + 1] & Bits.UNSAFE

    @staticmethod
    def _ends_titled_name(text: str, tokens: Sequence[Token], flags: Sequence[int], j: int, informative: bool) -> bool:
        """Does word `j`, the second after a title, end the name rather than continue it?

        Only a word that safe lists know and no name or place list has can end it. After a full
        stop it opens the next sentence ("Dr Smith. Family", "Dr. Foley. Remains"). Without one,
        only in a note whose case says nothing ("DR JONES AWARE", "DR RIDLON SPOKE") and only after
        a word the surname lists know and the given-name lists do not: a given name, or a word no
        list knows, may be followed by a surname that is also a common word ("DR EMEKA OBI"); a word
        that says what the person did ends it after any name ("dr parrilli aware", `_VERB_AFTER_NAME`). In a
        mixed-case note a capitalised word after the name is taken as part of it ("Dr Emeka Obi",
        "Mr Goh Boon Huat").
        """
        if not flags[j] & Bits.SAFE or flags[j] & Bits.UNSAFE:
            return False
        if "." in text[tokens[j - 1].end:tokens[j].start]:
            return True
        if not informative and tokens[j].lower in _VERB_AFTER_NAME:
            return True  # "DR RAKUSIN AWARE", "dr. pica aware", "MR DEXTER WORSENED": what the person did
        return not informative and bool(flags[j - 1] & Bits.SURNAME) and not flags[j - 1] & Bits.FIRST_NAME

    # ---- "Ferdinand Halfpenny" ---------------------------------------------

    def _name_sequences(self, text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[ContextHit]:
        """A capitalised word right after a capitalised first name is a surname."""
        hits: list[ContextHit] = []
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if not (flags[i] & Bits.FIRST_NAME) or not _capitalised(tok) or tok.text.isupper():
                continue
            j = i + 1
            # skip a middle initial ("Herman W. Smith")
            if j < n and len(tokens[j].text) == 1 and _joined(tokens[j - 1], tokens[j], text):
                j += 1
            gap = text[tokens[j - 1].end:tokens[j].start] if j < n else ""
            if "." in gap and j == i + 1:
                continue  # "per Dr. Martyn. Lungs are coarse": the full stop after a name ends its sentence
            if j < n and _joined(tokens[j - 1], tokens[j], text) and " " in gap:
                cand = tokens[j]
                # "St Agnes Hospital": an institution word after a first name is no surname
                is_head = (cand.lower,) in self.lex.institution_heads
                # "Muriele William RN": a credential after the name is no surname
                if (_capitalised(cand) and not (flags[j] & Bits.STOPWORD) and cand.text.isalpha() and not is_head
                        and cand.lower not in CREDENTIALS):
                    hits.append(ContextHit(j, "NAME", "name_sequence"))
        return hits

    # ---- "son Tom Baker", "his wife Mary" ------------------------------------

    def _kin_names(self, text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[ContextHit]:
        """A name-list word right after a kinship word is a relative's name, and so is a word that
        continues it (another name-list word or a word no safe list knows: "son tom baker").

        The name-list word alone would be masked anyway ("unsafe_list"); here it joins the context
        family, whose threshold is set by names the network recognises less readily. On PhysioNet
        train + dev and VAERS dev the first word is gold PHI 54 times out of 62.
        """
        hits: list[ContextHit] = []
        n = len(tokens)
        for i, tok in enumerate(tokens[:-1]):
            if tok.lower not in self.lex.kinship or not _KIN_GAP.fullmatch(text, tok.end, tokens[i + 1].start):
                continue
            j = i + 1
            if (not (flags[j] & Bits.NAME) or not tokens[j].text.isalpha() or flags[j] & Bits.STOPWORD
                    or tokens[j].lower in self.lex.kinship):  # "wife, son and brother": a list of relatives
                continue
            hits.append(ContextHit(j, "NAME", "kin_name"))
            k = j + 1
            if (k < n and tokens[k].text.isalpha() and len(tokens[k].text) > 1 and _joined(tokens[j], tokens[k], text)
                    and (flags[k] & Bits.NAME or not flags[k] & Bits.SAFE)):
                hits.append(ContextHit(k, "NAME", "kin_name"))
        return hits

    # ---- "Sacred Heart Hospital", "Harford Memorial" ------------------------

    def _institutions(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], informative: bool
    ) -> list[ContextHit]:
        hits: list[ContextHit] = []
        lowered = [t.lower for t in tokens]
        n = len(tokens)
        for i in range(n):
            if lowered[i] not in self._head_first:
                continue
            for k in range(min(self._max_head, n - i), 0, -1):
                head = tuple(lowered[i:i + k])
                starred = self.lex.institution_heads.get(head)
                if starred is None:
                    continue
                if head in _COMPANY_SUFFIXES and _INCREASE_AFTER.match(text, tokens[i + k - 1].end):
                    break  # "PROPOFOL INC X2", "TF INC TO 75CC/HR", "minimal inc in output": increased
                if head in _SERVICE_HEADS and _SERVICE_PHRASE_AFTER.match(text, tokens[i + k - 1].end):
                    break  # "HEALTH CARE PROXY", "home health aide": a role or a service, no place
                name_hits = self._words_before(text, tokens, flags, i, informative)
                if (name_hits and head in _SERVICE_HEADS and not informative
                        and flags[i - 1] & Bits.SAFE and not flags[i - 1] & Bits.UNSAFE):
                    break  # "BEGIN REHAB", "poor health", "CARDIAC REHAB": a plain word before a service
                if name_hits:
                    hits += [ContextHit(j, "LOCATION", "institution") for j in name_hits]
                    if starred:
                        hits += [ContextHit(j, "LOCATION", "institution") for j in range(i, i + k)]
                break
        return hits

    def _words_before(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], head: int, informative: bool
    ) -> list[int]:
        out: list[int] = []
        j = head - 1
        words = 0
        while j >= 0 and words < _LOOKBACK_WORDS and _joined(tokens[j], tokens[j + 1], text):
            tok = tokens[j]
            if tok.lower == "s" and text[tok.start - 1:tok.start] in ("'", "’"):
                out.append(j)  # possessive: "St. Mary's Hospital"
                j -= 1
                continue
            if flags[j] & Bits.STOPWORD and len(tok.text) > 1:
                break
            head = self.lex.institution_heads.get((tok.lower,))
            if head is False:
                break  # "hospital clinic": a plain head word is no name
            if informative and not _capitalised(tok):
                break
            if tok.lower == "a" and not text.startswith(".", tok.end):
                break  # "in a nursing home": the article, not an initial
            out.append(j)
            words += 1
            j -= 1
        return out

    # ---- "Pleasant Grove Family Medicine", "Front Range Credit Union" --------

    def _organisations(self, text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[ContextHit]:
        """A capitalised organisation head after capitalised name words, one of them distinctive.

        Only called where case is informative: "Unit", "Care" or "Research"
        end a name only when written with a capital after capitalised words.
        The head is written in title case (a header "NURSING NOTE" names no
        place). The words before it (up to `_ORG_WORDS`, joined by spaces,
        "&", hyphens or a possessive) must include one that is no kind of
        facility (`facility_words`), no stopword and no short upper-case
        abbreviation ("PMICU"),
        so "Intensive Care Unit", "Internal Medicine" and "ENT Department"
        stay readable while "Queen Alexandra Emergency Department" is masked
        whole. A phrase with a complete drug name ("Humira Support Services")
        is a product's programme, not a place.
        """
        hits: list[ContextHit] = []
        n = len(tokens)
        for i in range(1, n):
            if not _capitalised(tokens[i]):
                continue
            for k in range(min(self._max_org_head, n - i), 0, -1):
                head = tuple(t.lower for t in tokens[i:i + k])
                if head not in self.lex.organisation_heads or not all(_title(t) for t in tokens[i:i + k]):
                    continue
                words = self._organisation_words(text, tokens, flags, i)
                if words:
                    hits += [ContextHit(j, "LOCATION", "organisation") for j in (*words, *range(i, i + k))]
                break
        return hits

    def _organisation_words(self, text: str, tokens: Sequence[Token], flags: Sequence[int], head: int) -> list[int]:
        """The name words before an organisation head, or [] when none of them is distinctive."""
        out: list[int] = []
        distinctive = False
        j = head - 1
        while j >= 0 and len(out) < _ORG_WORDS and _ORG_GAP.fullmatch(text, tokens[j].end, tokens[j + 1].start):
            tok = tokens[j]
            if tok.lower == "s" and text[tok.start - 1:tok.start] in ("'", "’"):
                out.append(j)  # possessive: "Great Western Women's Unit"
                j -= 1
                continue
            if (tok.lower == "and" and j > 0 and out and _capitalised(tokens[j - 1]) and tokens[j - 1].text.isalpha()
                    and text[tokens[j - 1].end:tok.start] == " "):
                out.append(j)  # "Lakshmi Diabetes and Endocrine Research Centre"
                j -= 1
                continue
            if not (_capitalised(tok) and tok.text.isalpha()) or flags[j] & Bits.STOPWORD:
                break
            if flags[j] & Bits.DRUG_NAME:
                return []
            abbreviation = tok.text.isupper() and len(tok.text) <= 5
            if len(tok.text) > 1 and not abbreviation and tok.lower not in self.lex.facility_words:
                distinctive = True
            out.append(j)
            j -= 1
        return out if distinctive else []

    # ---- "Route 9W", "Plainview Municipal Fire Station 3" ---------------------

    def _numbered_places(self, text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[ContextHit]:
        """A title-case road or station word, one space, a number: the place, with its name words.

        Only called where case is informative. The number has one to four
        digits, no leading zero, and at most one letter after it ("9W", "101",
        "3"); the capitalised alphabetic words right before it (up to three, no
        stopword, no drug name) are part of the name.
        """
        hits: list[ContextHit] = []
        for i in range(len(tokens) - 1):
            tok, num = tokens[i], tokens[i + 1]
            if tok.lower not in self.lex.numbered_places or not _title(tok):
                continue
            if text[tok.end:num.start] != " " or not _NUMBERED.fullmatch(num.text):
                continue
            after = text[num.end:num.end + 1]
            if after and (after.isalnum() or after in "/.,:-" and text[num.end + 1:num.end + 2].isdigit()):
                continue  # "Route 1/2", "Station 3.5": not a place number
            words = [i, i + 1]
            j = i - 1
            while j >= 0 and len(words) < 5 and text[tokens[j].end:tokens[j + 1].start] == " ":
                prev = tokens[j]
                if not (_capitalised(prev) and prev.text.isalpha()) or flags[j] & (Bits.STOPWORD | Bits.DRUG_NAME):
                    break
                words.append(j)
                j -= 1
            hits += [ContextHit(k, "LOCATION", "numbered_place") for k in sorted(words)]
        return hits

    # ---- "room 14", "Rm 612-B", "bed 12" ----------------------------------------

    def _rooms(self, text: str, tokens: Sequence[Token]) -> list[ContextHit]:
        """A room, bed or bay word and its number: where the patient lies, masked with its word.

        In any letter case (nursing notes write "bed 12" and "ROOM 208B"); the number has one to four
        digits and may end in a letter or "-B". "room air", "bed rest" and "Bay of Plenty" have no number.
        """
        hits: list[ContextHit] = []
        for m in _ROOM.finditer(text):
            hits += [ContextHit(k, "LOCATION", "room") for k, t in enumerate(tokens)
                     if m.start() <= t.start and t.end <= m.end()]
        return hits

    # ---- "University of Maryland", "Hospital of the Good Samaritan" ----------

    def _institutions_of(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], informative: bool
    ) -> list[ContextHit]:
        hits: list[ContextHit] = []
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if tok.lower not in self.lex.institution_prefixes or i + 2 >= n:
                continue
            if informative and not _capitalised(tok):
                continue
            j = i + 1
            if tokens[j].lower != "of" or not _joined(tok, tokens[j], text):
                continue
            span = [i, j]
            if j + 1 < n and tokens[j + 1].lower == "the" and _joined(tokens[j], tokens[j + 1], text):
                j += 1
                span.append(j)
            names = []
            while j + 1 < n and len(names) < _LOOKBACK_WORDS and _joined(tokens[j], tokens[j + 1], text):
                cand = tokens[j + 1]
                if flags[j + 1] & Bits.STOPWORD or (informative and not _capitalised(cand)):
                    break
                names.append(j + 1)
                j += 1
            if names:
                hits += [ContextHit(k, "LOCATION", "institution") for k in span + names]
        return hits

    # ---- "St. Mary's", "San Diego" --------------------------------------------

    def _saint_names(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], informative: bool
    ) -> list[ContextHit]:
        hits: list[ContextHit] = []
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if tok.lower not in self.lex.saint_prefixes or i + 1 >= n:
                continue
            nxt = tokens[i + 1]
            initial = len(nxt.text) == 1  # "St A." for St Agnes
            if not _joined(tok, nxt, text) or (flags[i + 1] & Bits.STOPWORD and not initial):
                continue
            if not nxt.text.isalpha():
                continue
            if SAINTS_HERB.match(text, tok.start):
                continue  # "St John's wort": the herbal product, a drug of the report
            if informative and not (_capitalised(tok) and _capitalised(nxt)):
                continue
            # without case information "ST" is as likely the ECG segment ("ST DEGREE"):
            # require a name, an initial or a word no safe list knows
            if not informative and not (initial or flags[i + 1] & Bits.NAME or not flags[i + 1] & Bits.SAFE):
                continue
            if tok.text in ("ST", "st") and self._ecg_st(text, tokens, i):
                continue
            hits += [ContextHit(i, "LOCATION", "saint_name"), ContextHit(i + 1, "LOCATION", "saint_name")]
        return hits

    @staticmethod
    def _ecg_st(text: str, tokens: Sequence[Token], i: int) -> bool:
        """Is the capitalised "ST" at `i` sinus tachycardia or the ECG's ST segment, no saint?

        A rhythm is named after another ("NSR to ST HR 90", "SR/ST", "SB-ST") and a segment or
        rhythm before what is measured of it ("ST CHGS", "ST HR 110", "ST ELEVATION"). A saint's
        place is written "St", "St." or "ST." before a name ("ST. AGNES", "St Joseph's").
        """
        before = tokens[i - 1].lower if i > 0 else ""
        if before == "to":  # "SR TO ST. HIGH PRESSURES", not "TO GO TO ST. MARY"
            before = tokens[i - 2].lower if i > 1 else ""
            if before in _RHYTHMS_BEFORE_ST:
                return True
        elif before in _RHYTHMS_BEFORE_ST and text[tokens[i - 1].end:tokens[i].start] in ("/", "-", " "):
            return True  # "SB/ST. Pt. continues", "SR-ST"
        if text.startswith(".", tokens[i].end):
            return False
        return tokens[i + 1].lower in _ECG_AFTER_ST

    # ---- "NN16 0AF", "K1A 0B1" ------------------------------------------------

    def _postcodes(self, text: str, tokens: Sequence[Token]) -> list[ContextHit]:
        """A British or Canadian postcode: both halves, upper case, one space between ("LS6 2QT", "K1A 0B1").

        Each half alone is a code-shaped token the rules mask anyway; the
        inward half ("0AF", "2QT") looks like a value or a lot piece to the
        network, so the pair is masked as one place.
        """
        hits: list[ContextHit] = []
        for i in range(len(tokens) - 1):
            a, b = tokens[i], tokens[i + 1]
            if len(b.text) != 3 or not b.text[0].isdigit() or len(a.text) > 4 or text[a.end:b.start] != " ":
                continue
            if ((_UK_OUTWARD.fullmatch(a.text) and _UK_INWARD.fullmatch(b.text))
                    or (_CA_HALF_A.fullmatch(a.text) and _CA_HALF_B.fullmatch(b.text))):
                hits += [ContextHit(i, "LOCATION", "postcode"), ContextHit(i + 1, "LOCATION", "postcode")]
        return hits

    # ---- "Baltimore, MD", "lives in DC" ---------------------------------------

    def _state_codes(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], informative: bool
    ) -> list[ContextHit]:
        """Upper-case US postal codes right after "<Place>, " ("Towson, MD").

        Codes such as MD, PA, CT or ND are clinical abbreviations too ("NT,
        ND", "to CT"), so they are only masked after a comma that follows a
        known place or, where case is informative, a capitalised word.
        """
        hits: list[ContextHit] = []
        for i, tok in enumerate(tokens):
            if i == 0 or not (flags[i] & Bits.STATE_CODE) or not tok.text.isupper() or len(tok.text) != 2:
                continue
            prev = tokens[i - 1]
            gap = text[prev.end:tok.start]
            if gap.strip() != "," or "\n" in gap:
                continue
            is_place = bool(flags[i - 1] & Bits.PLACE_NAME)
            title = prev.text[:1].isupper() and prev.text[1:].islower()
            if is_place or (informative and title):
                hits.append(ContextHit(i, "LOCATION", "state_code"))
        return hits

    # ---- "12 Elm Street" ----------------------------------------------------

    def _addresses(
        self, text: str, tokens: Sequence[Token], flags: Sequence[int], informative: bool
    ) -> list[ContextHit]:
        """House number, one to four name words, a street suffix: "12 Elm St".

        Name words must not be stopwords and, where case is informative, must
        be capitalised, so that "2 units via PIV" is no address.
        """
        hits: list[ContextHit] = []
        n = len(tokens)
        for i, tok in enumerate(tokens):
            if not (tok.text[:1].isdigit() and len(tok.text) <= 6 and tok.text.rstrip("abcdefghABCDEFGH").isdigit()):
                continue
            for k in range(2, 6):  # 1-4 name words, then the suffix
                j = i + k
                if j >= n or not _joined(tokens[j - 1], tokens[j], text):
                    break
                if k == 2 and "." in text[tok.end:tokens[i + 1].start]:
                    break  # "Na 129. GP Dr Price": a full stop ends the number's sentence, no house number
                word = tokens[j - 1]
                if not word.text.isalpha() or flags[j - 1] & Bits.STOPWORD:
                    break
                if informative and not _capitalised(word):
                    break
                suffix = tokens[j]
                # without case information, two-letter abbreviations (CT, AV, ST)
                # are more often clinical than street types
                if informative:
                    plausible = _capitalised(suffix) and not (len(suffix.text) <= 3 and suffix.text.isupper())
                else:
                    plausible = len(suffix.text) >= 3
                if suffix.lower in self.lex.street_suffixes and plausible:
                    hits += [ContextHit(m, "LOCATION", "address") for m in range(i, j + 1)]
                    break
        if informative:
            hits += self._street_names(text, tokens, flags)
        return hits

    def _street_names(self, text: str, tokens: Sequence[Token], flags: Sequence[int]) -> list[ContextHit]:
        """One to three capitalised words and a title-case street word, no number: "on Tunnel Rd".

        Only where case is informative and for street words that rarely end
        anything else (`_STREET_WITHOUT_NUMBER`). A title ends the walk back:
        "Dr Wendell Lane" is a person, whose name the other detectors judge.
        """
        hits: list[ContextHit] = []
        for j, suffix in enumerate(tokens):
            if not (suffix.lower in _STREET_WITHOUT_NUMBER and suffix.lower in self.lex.street_suffixes
                    and _title(suffix)):
                continue
            first = j
            while (first > 0 and j - first < 3 and _joined(tokens[first - 1], tokens[first], text)
                   and tokens[first - 1].text.isalpha() and _title(tokens[first - 1])
                   and not flags[first - 1] & Bits.STOPWORD
                   and tokens[first - 1].lower not in self.lex.salutations):
                first -= 1
            if first < j:
                hits += [ContextHit(m, "LOCATION", "address") for m in range(first, j + 1)]
        return hits
