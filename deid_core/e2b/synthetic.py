"""The project's own sample E2B files: synthetic reports with PHI-bearing text.

No real ICSR may enter the repository, yet the E2B reader, the ingest job
and the de-identification of structured fields all need realistic input.
This module plans synthetic reports and :mod:`.synthetic_r3` /
:mod:`.synthetic_r2` write them as E2B(R3) batches and E2B(R2) ``ichicsr``
files.

* **Narratives** are the project's generated ones
  (:func:`deid_core.synthetic.generate_one`): report ``i`` of seed ``s``
  carries narrative ``i`` of seed ``s``. Short reporter and sender comments
  that name the reporter, the patient, a hospital, a phone number, an
  e-mail address and a date are added, so every free-text field has PHI.
* **Identities** are drawn once per *case* with the synthetic package's
  :class:`~deid_core.synthetic.phi.PhiFactory` (seeded Faker for the
  narrative's locale), so the structured fields agree with each other: the
  patient's initials come from their name, the age at onset from the birth
  date, the reporter's e-mail from the reporter's name.
* **Versions.** Of every four reports, the second is a follow-up of the
  first: the same case id and sender report id, version 2 (R2
  ``safetyreportversion``) or a later creation time (R3 C.1.2), a later
  most-recent-information date and a new narrative. A batch of n reports
  therefore holds about 3n/4 cases.
* **Determinism.** Report ``i`` depends only on ``(seed, i)``; ``start``
  lets a caller split one stream of reports over several files without
  repeating case ids.
* **Lengths** (optional, for the scale run): with a
  :class:`~deid_core.synthetic.lengths.LengthPlan`, the narrative and the
  two comments of report ``i`` are fitted to the lengths the plan draws
  for ``i`` from real free text (a rare narrative of 100 KB - 1 MB
  included); without one, reports are exactly as before.
  :func:`report_document` writes one report as a document of its own.

:attr:`SyntheticReport.text_fields` is what the reader must give back for
each report, exactly; the tests hold the writers to it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from random import Random

from deid_core.synthetic import SyntheticNarrative, generate_one
from deid_core.synthetic.clinical import pick_drug, pick_reactions
from deid_core.synthetic.lengths import LengthPlan, ReportLengths, fit_plain
from deid_core.synthetic.phi import LOCALES, PhiFactory, faker_for, format_date

GENERATOR = "deid_core.e2b.synthetic"
GENERATOR_VERSION = 1
FOLLOW_UP_EVERY = 4
"""In each block of this many reports, the second is version 2 of the first's case."""

_ZONES = ("+0000", "+0100", "+0200", "-0500", "-0800", "+0900")
_DEPARTMENTS = ("Internal Medicine", "Cardiology", "Oncology", "Dermatology", "Neurology",
                "Emergency Department", "Nephrology")


@dataclass(frozen=True, slots=True)
class Contact:
    """A person with a postal and electronic address (a reporter or a sender's contact)."""

    title: str
    given: str
    family: str
    organisation: str
    department: str
    street: str
    city: str
    state: str | None
    postcode: str
    phone: str
    email: str

    @property
    def full(self) -> str:
        return f"{self.given} {self.family}"


@dataclass(frozen=True, slots=True)
class Case:
    """Facts shared by every version of one synthetic case."""

    index: int
    case_id: str
    report_id: str
    country: str
    sex: str
    initials: str
    record_number: str
    birth_date: date
    age_years: int
    onset: date
    reaction_end: date
    drug: str
    drug_start: date
    drug_end: date
    reaction: str
    first_received: date
    reporter: Contact
    sender: Contact


@dataclass(frozen=True, slots=True)
class SyntheticReport:
    """One version of one case, with the free text that goes into each field."""

    case: Case
    version: int
    created: datetime
    created_zone: str
    most_recent_info: date
    narrative: SyntheticNarrative
    reporter_comment: str
    sender_comment: str

    @property
    def created_ts(self) -> str:
        """The creation time as an HL7 TS with zone (R3 N.2.r.4 and C.1.2)."""
        return self.created.strftime("%Y%m%d%H%M%S") + self.created_zone

    @property
    def text_fields(self) -> dict[str, str]:
        """Path -> text that the reader must return for this report, in either format."""
        return {
            "narrative": self.narrative.text,
            "reporter_comment": self.reporter_comment,
            "sender_comment": self.sender_comment,
            "reaction_as_reported[0]": self.case.reaction,
        }


def ts(d: date) -> str:
    """A date as E2B digits (CCYYMMDD)."""
    return d.strftime("%Y%m%d")


def _rng(seed: int, key: object, purpose: str) -> Random:
    return Random(f"{GENERATOR}/v{GENERATOR_VERSION}/{seed}/{key}/{purpose}")


def case_of(index: int) -> tuple[int, int]:
    """(case index, version) of report ``index``: blocks of four reports hold three cases."""
    block, pos = divmod(index, FOLLOW_UP_EVERY)
    case = block * (FOLLOW_UP_EVERY - 1) + max(0, pos - 1)
    return case, 2 if pos == 1 else 1


def _contact(f: PhiFactory, *, doctor: bool, company: str | None = None) -> Contact:
    p = f.person()
    city = f.city()
    return Contact(
        title=f.title(p, doctor=doctor),
        given=p.first,
        family=p.last,
        organisation=company or f.hospital(city).text,
        department="Pharmacovigilance" if company else f.rng.choice(_DEPARTMENTS),
        street=f.street(),
        city=city,
        state=f.us_state() if f.profile.code == "en_US" else None,
        postcode=f.zip_code(),
        phone=f.phone().text,
        email=f.email(p).text,
    )


def _make_case(seed: int, index: int, locale: str) -> Case:
    """Draw one case's identities and dates (consistent with each other)."""
    rng = _rng(seed, index, "case")
    profile = LOCALES[locale]
    fake = faker_for(locale)
    fake.seed_instance(rng.getrandbits(64))
    f = PhiFactory(rng=rng, fake=fake, profile=profile)
    patient = f.person()
    age = rng.choice((rng.randint(1, 17), rng.randint(18, 89), rng.randint(18, 89), rng.randint(90, 101)))
    onset = date(2005, 1, 1) + timedelta(days=rng.randint(0, 6500))
    birth = onset - timedelta(days=age * 365 + rng.randint(10, 350))
    drug_start = onset - timedelta(days=rng.randint(0, 120))
    cc = profile.country_code
    return Case(
        index=index,
        case_id=f"{cc}-PVDEID-{seed}-{index:07d}",
        report_id=f"PVDEID-{seed}-{index:07d}",
        country=cc,
        sex=patient.sex,
        initials=f.initials(patient).text,
        record_number=f.mrn().text,
        birth_date=birth,
        age_years=(onset - birth).days * 100 // 36525,
        onset=onset,
        reaction_end=onset + timedelta(days=rng.randint(1, 40)),
        drug=pick_drug(rng),
        drug_start=drug_start,
        drug_end=onset + timedelta(days=rng.randint(0, 5)),
        reaction=pick_reactions(rng, 1)[0],
        first_received=onset + timedelta(days=rng.randint(2, 60)),
        reporter=_contact(f, doctor=True),
        sender=_contact(f, doctor=False, company=f"{rng.choice(('Acme', 'Globex', 'Initech'))} Pharma"),
    )


def _comments(case: Case, report_index: int, seed: int, locale: str) -> tuple[str, str]:
    """A reporter's and a sender's comment, each naming people, contacts and a date."""
    rng = _rng(seed, report_index, "comments")
    style = rng.choice(LOCALES[locale].date_styles)
    r = case.reporter
    reporter = (f"{r.title} {r.full} ({r.phone}) considers the {case.reaction} related to "
                f"{case.drug}; patient {case.initials} was seen at {r.organisation}, {r.city} "
                f"on {format_date(case.onset, style)}.")
    sender = (f"Follow-up requested from {r.title} {r.family} at {r.email} on "
              f"{format_date(case.first_received + timedelta(days=rng.randint(1, 20)), style)}; "
              f"MRN {case.record_number}.")
    return reporter, sender


class _Planner:
    """Plans reports in index order, reusing the case drawn for a version 1."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._last: Case | None = None

    def _case(self, case_index: int, locale: str) -> Case:
        if self._last is None or self._last.index != case_index:
            self._last = _make_case(self.seed, case_index, locale)
        return self._last

    def report(self, index: int, lengths: ReportLengths | None = None) -> SyntheticReport:
        case_index, version = case_of(index)
        narrative = generate_one(self.seed, index, None if lengths is None else lengths.narrative)
        if version == 1:
            case = self._case(case_index, narrative.meta["locale"])
        elif self._last is not None and self._last.index == case_index:
            case = self._last
        else:  # a follow-up whose version 1 was planned elsewhere (an earlier file)
            case = self._case(case_index, generate_one(self.seed, index - 1).meta["locale"])
        rng = _rng(self.seed, index, "report")
        received = case.first_received if version == 1 else case.first_received + timedelta(
            days=rng.randint(10, 90))
        created = datetime(received.year, received.month, received.day) + timedelta(
            days=rng.randint(1, 10), seconds=rng.randint(0, 86399))
        reporter_comment, sender_comment = _comments(case, index, self.seed, narrative.meta["locale"])
        if lengths is not None:
            reporter_comment = fit_plain(reporter_comment, lengths.reporter_comment)
            sender_comment = fit_plain(sender_comment, lengths.sender_comment)
        return SyntheticReport(
            case=case, version=version, created=created, created_zone=rng.choice(_ZONES),
            most_recent_info=received, narrative=narrative,
            reporter_comment=reporter_comment, sender_comment=sender_comment,
        )


def synthetic_reports(n_reports: int, seed: int, *, start: int = 0,
                      lengths: LengthPlan | None = None) -> list[SyntheticReport]:
    """Plans of reports ``start .. start + n_reports - 1`` for ``seed`` (free text fitted to ``lengths``)."""
    if isinstance(n_reports, bool) or not isinstance(n_reports, int) or n_reports < 0:
        raise ValueError(f"n_reports must be a non-negative integer, got {n_reports!r}")
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    if lengths is not None and lengths.seed != seed:
        raise ValueError(f"the length plan is for seed {lengths.seed}, not {seed}")
    planner = _Planner(seed)
    return [planner.report(i, None if lengths is None else lengths.for_report(i))
            for i in range(start, start + n_reports)]


def report_document(report: SyntheticReport, fmt: str, *, seed: int, index: int) -> bytes:
    """One E2B document (an R3 batch or an R2 ``ichicsr``) holding ``report`` alone, as report ``index``."""
    if fmt == "R3":
        from deid_core.e2b.synthetic_r3 import write_r3_batch

        return write_r3_batch([report], seed=seed, start=index)
    if fmt == "R2":
        from deid_core.e2b.synthetic_r2 import write_r2_batch

        return write_r2_batch([report], seed=seed, start=index)
    raise ValueError(f"unknown E2B format {fmt!r} (R3 or R2)")


def stable_uuid(*parts: object) -> str:
    """A UUID that depends only on ``parts`` (HL7 act ids must be unique, not random)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, (GENERATOR, *parts)))))


def synthetic_r3_batch(n_reports: int, seed: int, *, start: int = 0) -> bytes:
    """One ``MCCI_IN200100UV01`` batch with ``n_reports`` ``PORR_IN049016UV`` messages."""
    from deid_core.e2b.synthetic_r3 import write_r3_batch

    return write_r3_batch(synthetic_reports(n_reports, seed, start=start), seed=seed, start=start)


def synthetic_r2_batch(n_reports: int, seed: int, *, start: int = 0) -> bytes:
    """One ``ichicsr`` document with ``n_reports`` ``safetyreport`` elements."""
    from deid_core.e2b.synthetic_r2 import write_r2_batch

    return write_r2_batch(synthetic_reports(n_reports, seed, start=start), seed=seed, start=start)
