"""The facts of one synthetic case, and the phrase helpers templates use.

A template never invents facts: it asks :class:`Doc` for "the patient's age
as an adjective" or "the onset date", and :class:`Case` decided those once
for the whole document. That is what keeps a narrative coherent (the same
hospital twice, onset after the start date, an age that matches the date of
birth) however many templates later reuse the same case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from random import Random

from deid_core.synthetic import clinical
from deid_core.synthetic.builder import Clin, Phi, Piece, Seq, seq
from deid_core.synthetic.clinical import Medication
from deid_core.synthetic.phi import LocaleProfile, Person, PhiFactory

REPORTER_ROLES: tuple[str, ...] = ("physician", "pharmacist", "nurse", "general practitioner",
                                   "specialist", "dentist")
_CHILD_RELATIONS = {"M": ("father",), "F": ("mother",)}
_ADULT_RELATIONS = {"M": ("husband", "son", "brother", "partner"),
                    "F": ("wife", "daughter", "sister", "partner")}
MINOR_AGE = 16
"""Below this age a consumer report is written by a parent, not the patient."""
_EPOCH_START = date(2000, 1, 1)
_EPOCH_DAYS = (date(2023, 6, 30) - _EPOCH_START).days


@dataclass
class Timeline:
    """Dates of one case, ordered as exposure -> onset -> action -> report."""

    start: date
    onset: date
    stop: date
    admission: date
    discharge: date
    lab: date
    recovery: date
    receipt: date
    followups: list[date]
    dob: date
    death: date | None
    onset_days: int


def _sample_onset_days(rng: Random) -> int:
    """Time to onset: mostly days to weeks, sometimes months, rarely same day."""
    r = rng.random()
    if r < 0.1:
        return 0
    if r < 0.55:
        return rng.randint(1, 13)
    if r < 0.8:
        return rng.randint(14, 59)
    return rng.randint(60, 400)


def _sample_age(rng: Random) -> tuple[int, int]:
    """(years, months): infants, children, adults and a tail of over-89s."""
    r = rng.random()
    if r < 0.03:
        return 0, rng.randint(1, 11)
    if r < 0.12:
        return rng.randint(1, 17), 0
    if r < 0.95:
        return rng.randint(18, 89), 0
    return rng.randint(90, 103), 0


def sample_timeline(rng: Random, age_years: int, fatal: bool) -> Timeline:
    """Draw dates that respect clinical order, so "onset after start" always holds."""
    start = _EPOCH_START + timedelta(days=rng.randint(0, _EPOCH_DAYS))
    onset_days = _sample_onset_days(rng)
    onset = start + timedelta(days=onset_days)
    stop = onset + timedelta(days=rng.randint(0, 5))
    admission = onset + timedelta(days=rng.randint(0, 2))
    discharge = admission + timedelta(days=rng.randint(2, 14))
    lab = admission + timedelta(days=rng.randint(0, 2))
    recovery = stop + timedelta(days=rng.randint(2, 40))
    death = onset + timedelta(days=rng.randint(1, 30)) if fatal else None
    receipt = max(recovery, death or onset) + timedelta(days=rng.randint(1, 90))
    followups, last = [], receipt
    for _ in range(rng.randint(1, 3)):
        last = last + timedelta(days=rng.randint(5, 120))
        followups.append(last)
    dob = receipt - timedelta(days=age_years * 365 + rng.randint(30, 330))
    return Timeline(start, onset, stop, admission, discharge, lab, recovery, receipt,
                    followups, dob, death, onset_days)


@dataclass
class Case:
    """Everything one narrative may mention, drawn once per document."""

    profile: LocaleProfile
    patient: Person
    age_years: int
    age_months: int
    reporter: Person
    reporter_role: str
    physician: Person
    nurse: Person
    relative: Person
    relation: str
    suspect: Medication
    conmeds: list[Medication]
    indication: str
    history: list[str]
    reactions: list[str]
    labs: list[str]
    treatment: str
    outcome: str
    onset_text: str
    dates: Timeline
    city: str
    hospital: Phi
    organisation: Phi
    reporter_phone: Phi
    fax: Phi
    reporter_email: Phi
    consumer_email: Phi
    url: Phi
    case_id: Phi
    mrn: Phi
    lot: Clin
    local_ref: Phi
    address: Seq


def _relative(f: PhiFactory, rng: Random, patient: Person, child: bool) -> tuple[Person, str]:
    """A family member whose relation word agrees with their sex and the patient's age."""
    sex = rng.choice("MF")
    relation = rng.choice((_CHILD_RELATIONS if child else _ADULT_RELATIONS)[sex])
    person = f.person(sex)
    if relation in ("father", "mother", "son", "daughter", "brother", "sister") and rng.random() < 0.7:
        person = Person(person.first, patient.last, sex)  # families often share a surname
    return person, relation


def sample_case(f: PhiFactory) -> Case:
    """Draw a coherent case: people, drugs, reactions, dates and contact details."""
    rng = f.rng
    patient = f.person()
    years, months = _sample_age(rng)
    fatal = rng.random() < 0.05
    dates = sample_timeline(rng, years, fatal)
    suspect = clinical.pick_medication(rng)
    conmeds = [clinical.pick_medication(rng, exclude=(suspect.name.lower(),))
               for _ in range(rng.randint(0, 3))]
    relative, relation = _relative(f, rng, patient, child=years < 18)
    reporter = f.person()
    writer = relative if years < MINOR_AGE else patient
    city = f.city()
    return Case(
        profile=f.profile, patient=patient, age_years=years, age_months=months,
        reporter=reporter, reporter_role=rng.choice(REPORTER_ROLES),
        physician=f.person(), nurse=f.person(), relative=relative, relation=relation,
        suspect=suspect, conmeds=conmeds,
        indication=rng.choice(clinical.INDICATIONS),
        history=rng.sample(clinical.INDICATIONS, rng.randint(0, 3)),
        reactions=clinical.pick_reactions(rng, rng.choice((1, 1, 1, 2, 2, 3))),
        labs=clinical.pick_labs(rng, rng.randint(1, 5)),
        treatment=rng.choice(clinical.TREATMENTS),
        outcome="fatal" if fatal else rng.choice(clinical.OUTCOMES),
        onset_text=clinical.onset_phrase(rng, dates.onset_days),
        dates=dates, city=city, hospital=f.hospital(city), organisation=f.organisation(),
        reporter_phone=f.phone(), fax=f.phone(fax=True), reporter_email=f.email(reporter),
        consumer_email=f.email(writer),
        url=f.url(), case_id=f.case_id(dates.receipt.year), mrn=f.mrn(), lot=f.lot(),
        local_ref=f.local_ref(dates.receipt.year), address=f.address(city),
    )


def join(items: list[Piece], last: str = " and ") -> Piece:
    """``a``, ``a and b``, ``a, b and c`` -- as one piece."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    parts: list[Piece] = []
    for i, item in enumerate(items):
        if i:
            parts.append(last if i == len(items) - 1 else ", ")
        parts.append(item)
    return Seq(tuple(parts))


@dataclass
class Doc:
    """Phrase helpers over one :class:`Case` for one rendering.

    ``phi_density`` is the chance that an optional PHI mention is made
    (``Dr. Smith`` rather than ``the physician``); ``richness`` is the chance
    that an optional section is included. Together they make documents range
    from one bare sentence to a dense page.
    """

    case: Case
    phi: PhiFactory
    rng: Random
    phi_density: float
    richness: float
    date_style: str

    # -- randomness ------------------------------------------------------------
    def dense(self) -> bool:
        """Whether to name PHI where a generic phrase would also do."""
        return self.rng.random() < self.phi_density

    def rich(self) -> bool:
        """Whether to include an optional section."""
        return self.rng.random() < self.richness

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    # -- words that depend on the patient -------------------------------------------
    @property
    def male(self) -> bool:
        return self.case.patient.sex == "M"

    @property
    def he(self) -> str:
        return "he" if self.male else "she"

    @property
    def his(self) -> str:
        return "his" if self.male else "her"

    @property
    def sex_word(self) -> str:
        return "male" if self.male else "female"

    @property
    def person_word(self) -> str:
        """``man``/``woman``, or ``boy``/``girl``/``infant`` for minors."""
        c = self.case
        if c.age_years == 0:
            return "infant"
        if c.age_years < 18:
            return "boy" if self.male else "girl"
        return "man" if self.male else "woman"

    # -- PHI -----------------------------------------------------------------
    def date(self, d: date) -> Phi:
        """A date in the document's style, with the occasional inconsistency real
        narratives have (a report mixes ``12-JAN-2014`` and ``2014-01-15``)."""
        style = self.date_style if self.rng.random() < 0.8 else None
        return self.phi.date(d, style)

    def partial_date(self, d: date) -> Phi:
        """Month-level or year-level date (``jan2014``, ``March 2014``, ``2014``)."""
        return self.phi.date(d, self.pick("mon_yyyy", "month_yyyy", "month_yyyy", "year"))

    def age_adj(self) -> Piece:
        return self.phi.age_adjective(self.case.age_years, self.case.age_months)

    def a_age(self, *, capital: bool = False) -> Piece:
        """``a 67-year-old`` / ``an 88-year-old``: the article follows the spoken number."""
        c = self.case
        n = c.age_years or max(c.age_months, 1)
        vowel = str(n).startswith("8") or n in (11, 18)
        article = ("An" if vowel else "A") if capital else ("an" if vowel else "a")
        return seq(article, " ", self.age_adj())

    def age_pred(self) -> Piece:
        return self.phi.age_predicate(self.case.age_years, self.case.patient.sex, self.case.age_months)

    def age_bare(self) -> Piece:
        """Age in a form field: ``67``, ``67 years`` or ``8 months``."""
        c = self.case
        if c.age_years == 0:
            return seq(Phi(str(max(c.age_months, 1)), "AGE"), " months")
        return seq(Phi(str(c.age_years), "AGE"), self.pick("", " years", " yrs"))

    def patient_name(self) -> Piece:
        return self.phi.name(self.case.patient, "PATIENT")

    def initials(self) -> Phi:
        return self.phi.initials(self.case.patient)

    def patient_ref(self) -> Piece:
        """``the patient``, or the patient's initials or name at high density."""
        if not self.dense():
            return self.pick("the patient", "the patient", f"the {self.sex_word} patient")
        if self.rng.random() < 0.6:
            return seq("the patient (", self.initials(), ")")
        return self.patient_name()

    def doctor(self, p: Person | None = None) -> Piece:
        return self.phi.name(p or self.case.physician, "DOCTOR", title=self.rng.random() < 0.85, doctor=True)

    def doctor_ref(self) -> Piece:
        """``the treating physician`` or ``Dr. Smith``."""
        if self.dense():
            return self.doctor()
        return self.pick("the treating physician", "the physician", "the attending doctor")

    def reporter(self) -> Piece:
        p = self.case.reporter
        if self.case.reporter_role in ("physician", "general practitioner", "specialist", "dentist"):
            return self.phi.name(p, "DOCTOR", title=self.rng.random() < 0.7, doctor=True)
        return self.phi.name(p, "DOCTOR")

    def relative(self) -> Piece:
        return self.phi.name(self.case.relative, "PATIENT")

    def nurse(self) -> Piece:
        return self.phi.name(self.case.nurse, "DOCTOR", title=False)

    def hospital(self) -> Phi:
        return self.case.hospital

    def hospital_ref(self) -> Piece:
        return self.case.hospital if self.dense() else self.pick("hospital", "the local hospital", "a hospital")

    def city(self) -> Phi:
        return Phi(self.case.city, "LOCATION", "CITY")

    def country(self) -> Phi:
        return self.phi.country()

    # -- clinical --------------------------------------------------------------
    def drug(self) -> Clin:
        return Clin(self.case.suspect.name, "DRUG")

    def dose(self) -> Clin:
        return Clin(self.case.suspect.dose, "DOSE")

    def drug_dose(self) -> Piece:
        """``amoxicillin 500 mg twice daily``."""
        return seq(self.drug(), " ", self.dose())

    def route(self) -> str:
        return self.case.suspect.route

    def onset(self) -> Clin:
        return Clin(self.case.onset_text, "ONSET")

    def reaction(self, i: int = 0) -> Clin:
        reactions = self.case.reactions
        return Clin(reactions[i % len(reactions)], "REACTION")

    def reactions(self) -> Piece:
        return join([Clin(r, "REACTION") for r in self.case.reactions])

    def labs(self, k: int | None = None) -> Piece:
        labs = self.case.labs if k is None else self.case.labs[:k]
        return join([Clin(x, "LAB") for x in labs])

    def conmeds(self) -> Piece:
        return join([seq(Clin(m.name, "DRUG"), " ", Clin(m.dose, "DOSE")) for m in self.case.conmeds])

    def treatment(self) -> Clin:
        return Clin(self.case.treatment, "DRUG")

    # -- family and literature -------------------------------------------------
    @property
    def minor(self) -> bool:
        """Children's cases are told by a parent, not in the first person."""
        return self.case.age_years < MINOR_AGE

    @property
    def me(self) -> Person:
        """Who writes a consumer report: the patient, or a parent for a child."""
        return self.case.relative if self.minor else self.case.patient

    def patient_kin_word(self) -> str:
        """What the relative calls the patient: a mother's patient is "my son"."""
        m = self.male
        rel = self.case.relation
        if rel in ("mother", "father"):
            return "son" if m else "daughter"
        if rel in ("son", "daughter"):
            return "father" if m else "mother"
        if rel in ("brother", "sister"):
            return "brother" if m else "sister"
        if rel == "partner":
            return "partner"
        return "husband" if m else "wife"

    def author(self, p: Person | None = None) -> Phi:
        """A literature author as cited: ``Smith J`` or ``Smith JA``."""
        p = p or self.phi.person()
        initials = "".join(part[:1].upper() for part in re.split(r"[\s-]+", p.first) if part)
        return Phi(f"{p.last} {initials}", "NAME", "DOCTOR")
