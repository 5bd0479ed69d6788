"""ALL CAPS telegraphic notes: call logs, telexes, fax covers, ER notes.

Upper case removes the capitalisation cue that name detectors lean on, and
abbreviations ("PT", "D/C", "C/O") replace the function words around PHI.
The builder upper-cases each piece before measuring it, so spans stay exact.
"""

from __future__ import annotations

from deid_core.synthetic.builder import NarrativeBuilder, Phi, Piece, seq
from deid_core.synthetic.case import Doc, join
from deid_core.synthetic.templates.registry import template


def _age_sex(d: Doc) -> Piece:
    """``67M``, ``67 YO F``, ``8 MO M``: age first, sex letter glued on."""
    c = d.case
    letter = "M" if d.male else "F"
    if c.age_years == 0:
        return seq(Phi(str(max(c.age_months, 1)), "AGE"), f" MO {letter}")
    return seq(Phi(str(c.age_years), "AGE"), d.pick(letter, f" YO {letter}", f"Y {letter}", f" {letter}"))


def _telegraph_sep(b: NarrativeBuilder, d: Doc) -> None:
    b.sentence_sep = d.pick(" ", "\n", " ", "  ")


@template("caps_telex", "telegraphic_caps", casing="upper")
def telex(b: NarrativeBuilder, d: Doc) -> None:
    """A telex-style line per fact."""
    c = d.case
    _telegraph_sep(b, d)
    b.say("PT {ini} {agesex}.", ini=d.initials(), agesex=_age_sex(d))
    if c.history and d.rich():
        b.say("HX {h}.", h=join(list(c.history), last=", "))
    b.say("STARTED {dd} {start} FOR {ind}.", dd=d.drug_dose(), start=d.date(c.dates.start), ind=c.indication)
    b.say("{onset} DEVELOPED {rx}.", onset=d.onset(), rx=d.reactions())
    if d.rich():
        b.say("LABS {dt}: {labs}.", dt=d.date(c.dates.lab), labs=d.labs())
    if d.rich():
        b.say("{drug} D/C {dt}.", drug=d.drug(), dt=d.date(c.dates.stop))
    b.say("OUTCOME {o}.", o=c.outcome)
    if d.dense():
        b.say("RPTR {rep} TEL {tel}.", rep=d.reporter(), tel=c.reporter_phone)


@template("caps_call_log", "telegraphic_caps", casing="upper")
def call_log(b: NarrativeBuilder, d: Doc) -> None:
    """A medical-information call log."""
    c = d.case
    _telegraph_sep(b, d)
    b.say("CALL REC'D {rcv} FROM {rep} ({role}) TEL {tel}.", rcv=d.date(c.dates.receipt), rep=d.reporter(),
          role=c.reporter_role, tel=c.reporter_phone)
    mrn = seq(", MRN ", c.mrn) if d.dense() else ""
    b.say("RE PT {ini}, {age}{mrn}.", ini=d.initials(), age=d.age_pred(), mrn=mrn)
    b.say("ON {dd} SINCE {start}.", dd=d.drug_dose(), start=d.date(c.dates.start))
    b.say("C/O {rx} {onset}.", rx=d.reactions(), onset=d.onset())
    if d.rich():
        b.say("ADVISED TO STOP {drug} AND SEE GP.", drug=d.drug())
    if d.rich():
        b.say("LABS PER CALLER: {labs}.", labs=d.labs(2))
    if d.dense():
        b.say("CALLBACK REQUESTED ON {tel}.", tel=c.reporter_phone)


@template("caps_er_note", "telegraphic_caps", casing="upper")
def er_note(b: NarrativeBuilder, d: Doc) -> None:
    """An emergency department note pasted into the case."""
    c = d.case
    _telegraph_sep(b, d)
    b.say("ED VISIT {dt} {hosp}.", dt=d.date(c.dates.admission), hosp=d.hospital_ref())
    b.say("{agesex} PRESENTS W/ {rx}.", agesex=_age_sex(d), rx=d.reactions())
    meds = seq(", ", d.conmeds()) if c.conmeds else ""
    b.say("MEDS: {dd}{meds}.", dd=d.drug_dose(), meds=meds)
    b.say("SX ONSET {onset}.", onset=d.onset())
    if d.rich():
        b.say("LABS: {labs}.", labs=d.labs())
    if d.rich():
        b.say("TX: {t}.", t=d.treatment())
    b.say("DISPO: {disp}.", disp=d.pick("ADMITTED", "D/C HOME", "OBS"))
    if d.dense():
        b.say("ATTENDING: {doc}.", doc=d.doctor())


@template("caps_fax_cover", "telegraphic_caps", casing="upper")
def fax_cover(b: NarrativeBuilder, d: Doc) -> None:
    """A fax cover sheet: the densest contact PHI of any template."""
    c = d.case
    b.line("FAX TO: DRUG SAFETY DEPT")
    b.line("FROM: {rep}, {hosp}", rep=d.reporter(), hosp=d.hospital())
    b.line("FAX NO: {fax}", fax=c.fax)
    b.line("TEL: {tel}", tel=c.reporter_phone)
    b.line("DATE: {dt}", dt=d.date(c.dates.receipt))
    b.line("RE: CASE {cid}", cid=c.case_id)
    b.fmt("MESSAGE: ")
    b.say("PT {ini} ({agesex}) RECEIVED {dd} LOT {lot} ON {start}.", ini=d.initials(), agesex=_age_sex(d),
          dd=d.drug_dose(), lot=c.lot, start=d.date(c.dates.start))
    b.say("{rx} {onset}.", rx=d.reactions(), onset=d.onset())
    if d.rich():
        b.say("{labs}.", labs=d.labs())
    b.say("PLEASE ADVISE.")
