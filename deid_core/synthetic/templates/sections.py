"""Reusable sentences in the neutral voice of a safety database narrative.

Templates share these so that the 25+ openings do not each re-implement
"concomitant medications included ...". Every section is optional (gated by
``d.rich()``) and some write several sentences, which is how one template
yields anything from three to thirty sentences.
"""

from __future__ import annotations

from deid_core.synthetic.builder import Clin, NarrativeBuilder, cap, seq
from deid_core.synthetic.case import Doc, join


def history(b: NarrativeBuilder, d: Doc) -> None:
    """Medical history, or its explicit absence."""
    if not d.rich():
        return
    items = d.case.history
    if not items:
        b.say("No relevant medical history was reported.")
        return
    b.say(d.pick("Medical history included {h}.", "The patient had a history of {h}.",
                 "Relevant history: {h}."), h=join(list(items)))


def vitals(b: NarrativeBuilder, d: Doc) -> None:
    """Weight and height: numbers next to units that are *not* ages or dates."""
    if d.rich() and d.rich():
        b.say("The patient's weight was {w} kg and height {h} cm.", w=str(d.rng.randint(48, 120)),
              h=str(d.rng.randint(150, 195)))


def conmeds(b: NarrativeBuilder, d: Doc) -> None:
    """Concomitant medication with doses (drugs and doses are kept, not PHI)."""
    if not d.rich():
        return
    if not d.case.conmeds:
        b.say("No concomitant medications were reported.")
        return
    b.say(d.pick("Concomitant medications included {m}.", "Concomitant medication: {m}.",
                 "The patient was also taking {m}."), m=d.conmeds())


def admission(b: NarrativeBuilder, d: Doc) -> None:
    """Hospitalisation: where PHI clusters (hospital, city, dates, MRN)."""
    if not d.rich():
        return
    dt = d.case.dates
    if d.dense():
        b.say("On {adm}, {he} was admitted to {hosp} in {city}.", adm=d.date(dt.admission),
              he=d.he, hosp=d.hospital(), city=d.city())
    else:
        b.say("The patient was hospitalised on {adm}.", adm=d.date(dt.admission))
    if d.dense():
        b.say("The medical record number was {mrn}.", mrn=d.case.mrn)


def labs(b: NarrativeBuilder, d: Doc) -> None:
    """Abnormal lab values: one summary sentence or one sentence per test."""
    if not d.rich():
        return
    lab_date = d.date(d.case.dates.lab)
    if d.rich() and len(d.case.labs) > 1:
        b.say("Laboratory results on {dt} were as follows.", dt=lab_date)
        for lab in d.case.labs:
            if d.rng.random() < 0.3:
                b.say("Results showed {x}.", x=Clin(lab, "LAB"))
            else:
                b.say(d.pick("{x} was reported.", "{x}."), x=cap(Clin(lab, "LAB")))
        return
    b.say(d.pick("Laboratory tests on {dt} showed {labs}.", "On {dt}, laboratory values included {labs}."),
          dt=lab_date, labs=d.labs())


def treatment(b: NarrativeBuilder, d: Doc) -> None:
    if d.rich():
        b.say("The event was treated with {t}.", t=d.treatment())


def dechallenge(b: NarrativeBuilder, d: Doc) -> None:
    """Action taken with the drug; the stop date follows onset by construction."""
    if not d.rich():
        return
    b.say("{drug} was {act} on {stop}{tail}.", drug=cap(d.drug()),
          act=d.pick("discontinued", "withdrawn", "stopped"), stop=d.date(d.case.dates.stop),
          tail=d.pick(" and the event abated", "", " (positive dechallenge)"))
    if d.rich() and d.rich():
        b.say("The drug was not reintroduced.")


def discharge(b: NarrativeBuilder, d: Doc) -> None:
    if d.rich():
        b.say("The patient was discharged on {dt}.", dt=d.date(d.case.dates.discharge))


def outcome(b: NarrativeBuilder, d: Doc) -> None:
    """Outcome; a fatal case gets a death date (a DATE like any other)."""
    c = d.case
    if c.dates.death is not None:
        b.say("The patient died on {dt}.", dt=d.date(c.dates.death))
        b.say("The cause of death was reported as {r}.", r=d.reaction())
        return
    if not d.rich():
        return
    if c.outcome == "recovered" and d.dense():
        b.say("The patient recovered on {dt}.", dt=d.date(c.dates.recovery))
    else:
        b.say("At the time of the report, the outcome of {r} was {o}.", r=d.reaction(), o=c.outcome)


def causality(b: NarrativeBuilder, d: Doc) -> None:
    """Reporter's causality assessment, naming the reporter at high density."""
    if not d.rich():
        return
    who = d.reporter() if d.dense() else f"The {d.case.reporter_role}"
    b.say("{who} assessed the relationship between {drug} and {r} as {rel}.", who=who,
          drug=d.drug(), r=d.reaction(), rel=d.pick("probable", "possible", "related", "unlikely",
                                                   "not assessable"))


def lot(b: NarrativeBuilder, d: Doc) -> None:
    if d.rich() and d.dense():
        b.say("The lot number of {drug} was {lot}.", drug=d.drug(), lot=d.case.lot)


def contact(b: NarrativeBuilder, d: Doc) -> None:
    """Reporter contact details, rare but high-risk PHI (phone, fax, e-mail)."""
    if not (d.rich() and d.dense()):
        return
    c = d.case
    b.say("The reporter can be contacted at {tel}{fax}.", tel=c.reporter_phone,
          fax=seq(" (fax ", c.fax, ")") if d.rich() else "")
    if d.dense():
        b.say("E-mail: {mail}.", mail=c.reporter_email)
    if d.rich() and d.dense():
        b.say("The report was submitted through {url}.", url=c.url)


def company_comment(b: NarrativeBuilder, d: Doc) -> None:
    """The marketing authorisation holder's assessment, closing many narratives."""
    if not d.rich():
        return
    b.paragraph()
    b.say("Company comment: {rx} is {listed} in the reference safety information for {drug}.",
          rx=cap(d.reaction()), listed=d.pick("listed", "unlisted", "not listed"), drug=d.drug())
    if d.rich():
        b.say("Based on the temporal relationship ({onset}) a causal role of {drug} cannot be excluded.",
              onset=d.onset(), drug=d.drug())


def body(b: NarrativeBuilder, d: Doc) -> None:
    """The usual order of an ICSR narrative after its opening sentences."""
    for section in (history, vitals, conmeds, admission, labs, treatment, dechallenge, discharge,
                    outcome, causality, lot, contact, company_comment):
        section(b, d)
