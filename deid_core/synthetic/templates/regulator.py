"""Regulator / safety-database style: third person, formulaic, dense with dates."""

from __future__ import annotations

from deid_core.synthetic.builder import NarrativeBuilder, cap, seq
from deid_core.synthetic.case import Doc
from deid_core.synthetic.templates import sections
from deid_core.synthetic.templates.registry import template


@template("reg_spontaneous_hcp", "regulator")
def spontaneous_hcp(b: NarrativeBuilder, d: Doc) -> None:
    """The classic opening: 'This spontaneous report was received from a physician...'."""
    c = d.case
    origin = seq(" from ", d.country()) if d.dense() else ""
    b.say("This spontaneous report was received from a {role} and concerns {age} {sex} patient{origin}.",
          role=c.reporter_role, age=d.a_age(), sex=d.sex_word, origin=origin)
    b.say("The patient received {dd} {route} for {ind} from {start}.", dd=d.drug_dose(),
          route=d.route(), ind=c.indication, start=d.date(c.dates.start))
    b.say("{onset}, the patient developed {rx}.", onset=cap(d.onset()), rx=d.reactions())
    sections.body(b, d)


@template("reg_case_id", "regulator")
def case_id_opening(b: NarrativeBuilder, d: Doc) -> None:
    """Opening that leads with the worldwide case id and the receipt date."""
    c = d.case
    b.say("Case {cid} is a spontaneous report from {country} received on {rcv} from a {role} "
          "concerning a {sex} patient {age}.", cid=c.case_id, country=d.country(),
          rcv=d.date(c.dates.receipt), role=c.reporter_role, sex=d.sex_word, age=d.age_pred())
    b.say("The patient started {drug} ({dose}) on {start} for {ind} and experienced {rx} on {on} ({onset}).",
          drug=d.drug(), dose=d.dose(), start=d.date(c.dates.start), ind=c.indication,
          rx=d.reaction(), on=d.date(c.dates.onset), onset=d.onset())
    sections.body(b, d)


@template("reg_named_hcp", "regulator")
def named_hcp(b: NarrativeBuilder, d: Doc) -> None:
    """Initial information from a named reporter at a named hospital, with MRN and DOB."""
    c = d.case
    mrn = seq(" (MRN ", c.mrn, ")") if d.dense() else ""
    b.say("Initial information was received on {rcv} from {rep} ({hosp}, {city}) regarding {age} {who}{mrn}.",
          rcv=d.date(c.dates.receipt), rep=d.reporter(), hosp=d.hospital(), city=d.city(),
          age=d.a_age(), who=d.person_word, mrn=mrn)
    born = seq(", born ", d.date(c.dates.dob), ",") if d.dense() else ""
    b.say("The patient, {ini}{born} was treated with {dd} starting {start}.", ini=d.initials(),
          born=born if born else ",", dd=d.drug_dose(), start=d.date(c.dates.start))
    b.say("On {on}, {onset}, {he} presented with {rx}.", on=d.date(c.dates.onset), onset=d.onset(),
          he=d.he, rx=d.reactions())
    sections.body(b, d)


@template("reg_solicited_psp", "regulator")
def solicited_psp(b: NarrativeBuilder, d: Doc) -> None:
    """Solicited report from a patient support programme (web portal, programme nurse)."""
    c = d.case
    via = seq(" via ", c.url) if d.dense() else ""
    b.say("This solicited report was received from a patient support programme{via} and concerns a "
          "{sex} consumer {age}.", via=via, sex=d.sex_word, age=d.age_pred())
    b.say("The patient was enrolled in the programme on {enr} and received {dd} for {ind}.",
          enr=d.date(c.dates.start), dd=d.drug_dose(), ind=c.indication)
    b.say("{onset} the patient reported {rx}.", onset=cap(d.onset()), rx=d.reactions())
    if d.dense():
        b.say("The programme nurse, {nurse}, obtained consent to contact {doc}.", nurse=d.nurse(),
              doc=d.doctor_ref())
    sections.body(b, d)


@template("reg_minimal", "regulator")
def minimal(b: NarrativeBuilder, d: Doc) -> None:
    """One to three sentences: the shortest real narratives look like this."""
    c = d.case
    b.say("{age} {sex} patient experienced {rx} {onset} after starting {dd}.", age=d.a_age(capital=True),
          sex=d.sex_word, rx=d.reaction(), onset=d.onset(), dd=d.drug_dose())
    if d.rich():
        b.say("Outcome: {o}.", o=c.outcome)
    if d.rich() and d.dense():
        b.say("Reported by {rep} on {rcv}.", rep=d.reporter(), rcv=d.date(c.dates.receipt))
