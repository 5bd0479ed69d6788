"""Consumer reports: first person, informal, full of self-identifying details.

Lay reporters volunteer exactly what de-identification must catch (their own
name, phone, street address, their GP's name) in sentences with none of the
formulaic cues of professional narratives.
"""

from __future__ import annotations

from deid_core.synthetic.builder import NarrativeBuilder, cap, seq
from deid_core.synthetic.case import Doc
from deid_core.synthetic.templates.registry import template


def _self_intro(b: NarrativeBuilder, d: Doc) -> None:
    """'I am a 45-year-old woman' -- or a parent speaking for a child."""
    c = d.case
    if d.minor:
        b.say("My {kin} is {age} and was prescribed {dd} for {ind} on {start}.",
              kin=d.patient_kin_word(), age=d.age_pred(), dd=d.drug_dose(), ind=c.indication,
              start=d.date(c.dates.start))
        return
    b.say("I am {age} {who} and I started taking {dd} for my {ind} on {start}.", age=d.a_age(),
          who=d.person_word, dd=d.drug_dose(), ind=c.indication, start=d.date(c.dates.start))


def _gp_visit(b: NarrativeBuilder, d: Doc) -> None:
    c = d.case
    if not d.rich():
        return
    gp = d.doctor() if d.dense() else "my doctor"
    b.say("I went to see {gp} on {dt} and was told to stop the tablets.", gp=gp, dt=d.date(c.dates.stop))
    if d.rich():
        b.say("They did blood tests and the results showed {labs}.", labs=d.labs(2))


def _sign_off(b: NarrativeBuilder, d: Doc) -> None:
    c = d.case
    if not d.dense():
        return
    b.say("My name is {name} and you can call me on {tel}.", name=d.phi.name(d.me, "PATIENT", title=False),
          tel=c.reporter_phone)
    if d.rich():
        b.say("I live at {addr}.", addr=c.address)


@template("consumer_first_person", "consumer")
def first_person(b: NarrativeBuilder, d: Doc) -> None:
    """A patient telling their own story."""
    c = d.case
    _self_intro(b, d)
    b.say("{onset} I noticed {rx}.", onset=cap(d.onset()), rx=d.reactions())
    if d.rich():
        b.say("It got worse and I was really scared, so I went to {where} on {dt}.",
              where=d.hospital_ref(), dt=d.date(c.dates.admission))
    _gp_visit(b, d)
    if d.rich() and d.dense():
        b.say("I read on {url} that other people had the same problem.", url=c.url)
    if d.rich():
        b.say("I am now {state}.", state=d.pick("feeling much better", "still not right", "slowly improving"))
    _sign_off(b, d)


@template("consumer_caregiver", "consumer")
def caregiver(b: NarrativeBuilder, d: Doc) -> None:
    """A relative reporting for the patient; both are named."""
    c = d.case
    b.say("I am reporting on behalf of my {kin}, {pt}, who is {age}.", kin=d.patient_kin_word(),
          pt=d.patient_name(), age=d.age_pred())
    by = seq(" by ", d.doctor()) if d.dense() else ""
    b.say("{he} was prescribed {dd}{by} on {start} for {ind}.", he=cap(d.he), dd=d.drug_dose(), by=by,
          start=d.date(c.dates.start), ind=c.indication)
    b.say("{onset} {he} developed {rx} and we took {him} to {hosp}.", onset=cap(d.onset()), he=d.he,
          rx=d.reactions(), him="him" if d.male else "her", hosp=d.hospital_ref())
    if d.rich():
        b.say("The doctors there said it was probably the {drug}.", drug=d.drug())
    if d.rich():
        b.say("{he} stopped it on {dt}.", he=cap(d.he), dt=d.date(c.dates.stop))
    if d.dense():
        b.say("My name is {name}, you can reach me at {mail}.", name=d.relative(), mail=d.phi.email(c.relative))


@template("consumer_email", "consumer")
def email(b: NarrativeBuilder, d: Doc) -> None:
    """An e-mail to a company's medical information address, with a signature block."""
    c = d.case
    b.line("Subject: side effects from {drug}", drug=d.drug())
    b.line(d.pick("Hello,", "Dear Sir/Madam,", "Hi,"))
    _self_intro(b, d)
    b.say("{onset} I got {rx}.", onset=cap(d.onset()), rx=d.reactions())
    _gp_visit(b, d)
    if d.rich():
        b.say("The packet said lot {lot}, in case that helps.", lot=c.lot)
    b.paragraph()
    b.line(d.pick("Regards,", "Thanks,", "Best wishes,"))
    b.line("{name}", name=d.phi.name(d.me, "PATIENT", title=False))
    if d.dense():
        b.line("{tel}", tel=c.reporter_phone)
    if d.dense():
        b.line("{mail}", mail=c.consumer_email)


@template("consumer_web_form", "consumer")
def web_form(b: NarrativeBuilder, d: Doc) -> None:
    """A structured web form whose free-text box is written by the patient."""
    c = d.case
    if d.dense():
        b.line("Submitted via: {url}", url=c.url)
    b.line("Reporter name: {name}", name=d.phi.name(d.me, "PATIENT", title=False))
    b.line("Reporter e-mail: {mail}", mail=c.consumer_email)
    if d.dense():
        b.line("Phone: {tel}", tel=c.reporter_phone)
    b.line("Patient initials: {ini}", ini=d.initials())
    b.line("Sex: {sex}", sex=d.sex_word)
    b.line("Age: {age}", age=d.age_bare())
    b.line("Suspect product: {drug}", drug=d.drug())
    b.line("Dose: {dose}", dose=d.dose())
    if d.dense():
        b.line("Batch/lot: {lot}", lot=c.lot)
    b.line("Start date: {dt}", dt=d.date(c.dates.start))
    b.line("Reaction start date: {dt}", dt=d.date(c.dates.onset))
    b.fmt("Description: ")
    b.say("{onset} I had {rx}.", onset=cap(d.onset()), rx=d.reactions())
    if d.rich():
        b.say("I stopped taking it on {dt}.", dt=d.date(c.dates.stop))
    if d.rich():
        b.say("My pharmacist at {org} said to report it here.", org=c.organisation)
