"""Nursing-note style: abbreviations, SOAP lines, bedside names and MRNs.

Source documents attached to hospital cases read like this; they name staff
and family freely and mix abbreviations ("pt c/o", "VS stable") with doses.
"""

from __future__ import annotations

from deid_core.synthetic.builder import NarrativeBuilder, Piece, cap, seq
from deid_core.synthetic.case import Doc
from deid_core.synthetic.templates.registry import template


def _pt(d: Doc) -> Piece:
    """``Pt J.S.``, ``Pt Smith`` or just ``Pt``."""
    if not d.dense():
        return "Pt"
    return seq("Pt ", d.initials() if d.rng.random() < 0.5 else d.patient_name())


@template("nursing_shift", "nursing")
def shift(b: NarrativeBuilder, d: Doc) -> None:
    """A shift note describing the reaction as it happened on the ward."""
    c = d.case
    b.say("Nursing note {dt}.", dt=d.date(c.dates.onset))
    b.say("{pt} ({age}) received {dd} {route} as ordered.", pt=_pt(d), age=d.age_pred(), dd=d.drug_dose(),
          route=d.route())
    b.say("{onset}, pt c/o {rx}.", onset=cap(d.onset()), rx=d.reactions())
    if d.rich():
        b.say("VS stable, {lab}.", lab=d.labs(1))
    b.say("{doc} notified, orders rec'd for {t}.", doc=cap(d.doctor_ref()), t=d.treatment())
    if d.dense():
        b.say("Family ({rel} {name}) at bedside, updated.", rel=c.relation, name=d.relative())
    b.say("Will continue to monitor.")
    if d.dense():
        b.say("{nurse}, RN", nurse=d.nurse())


@template("nursing_soap", "nursing")
def soap(b: NarrativeBuilder, d: Doc) -> None:
    """Subjective / Objective / Assessment / Plan lines."""
    c = d.case
    b.line("S: Pt states \"{quote}\".", quote=d.pick("I feel awful", "my skin is burning",
                                                    "I can't stop shaking", "I feel dizzy"))
    b.line("O: {rx} noted; {labs}.", rx=cap(d.reactions()), labs=d.labs())
    b.line("A: Suspected ADR to {dd}, started {start}.", dd=d.drug_dose(), start=d.date(c.dates.start))
    b.line("P: Hold {drug}, notify {doc}, monitor.", drug=d.drug(), doc=d.doctor_ref())
    if d.dense():
        b.line("Signed: {nurse}, RN, {dt}", nurse=d.nurse(), dt=d.date(c.dates.onset))


@template("nursing_mar", "nursing")
def medication_record(b: NarrativeBuilder, d: Doc) -> None:
    """Medication administration record entries: given, held, lot number."""
    c = d.case
    b.say("Medication administration record: {dd} given {route} on {start}.", dd=d.drug_dose(),
          route=d.route(), start=d.date(c.dates.start))
    b.say("Dose held on {stop} due to {rx} ({onset}).", stop=d.date(c.dates.stop), rx=d.reactions(),
          onset=d.onset())
    if d.dense():
        b.say("Lot no. {lot}.", lot=c.lot)
    if d.rich():
        b.say("Pharmacy ({org}) informed.", org=c.organisation)
    if d.rich() and c.conmeds:
        b.say("Other meds continued: {m}.", m=d.conmeds())


@template("nursing_discharge", "nursing")
def discharge(b: NarrativeBuilder, d: Doc) -> None:
    """Discharge note: the patient's full identity block and next contacts."""
    c = d.case
    if d.dense():
        b.say("Discharge note, {hosp}.", hosp=d.hospital())
    else:
        b.say("Discharge note.")
    ident = seq(", DOB ", d.date(c.dates.dob), ", MRN ", c.mrn) if d.dense() else ""
    b.say("{pt}{ident}, admitted {adm} with {rx} after starting {dd}.", pt=_pt(d), ident=ident,
          adm=d.date(c.dates.admission), rx=d.reactions(), dd=d.drug_dose())
    who = seq(" with ", c.relation, " ", d.relative()) if d.dense() else ""
    b.say("Discharged home on {dis}{who}.", dis=d.date(c.dates.discharge), who=who)
    if d.rich():
        b.say("F/U with {doc} in {n} weeks.", doc=d.doctor_ref(), n=d.pick("two", "2", "four"))
    b.say("{drug} added to allergy list.", drug=cap(d.drug()))
    if d.dense():
        b.say("Contact number on file: {tel}.", tel=c.reporter_phone)
