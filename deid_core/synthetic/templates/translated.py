"""Translated summaries: English written over another language's structure.

Affiliates translate local reports for the global database. The English is
stilted ("took since ... because of ..."), titles and hospital names stay in
the source language (Herr, Mme, Klinikum, CHU) and dates keep local formats
(21.03.2020) -- all of which trip detectors trained on native English.
"""

from __future__ import annotations

from deid_core.synthetic.builder import NarrativeBuilder, Phi, Piece, cap, seq
from deid_core.synthetic.case import Doc
from deid_core.synthetic.templates.registry import template


def _local_title_name(d: Doc) -> Piece:
    """``Herr K.``, ``Mme Dubois``: the source language's courtesy title kept."""
    p = d.case.patient
    titles = d.case.profile.male_titles if d.male else d.case.profile.female_titles
    shown = Phi(f"{p.last[:1]}." if d.rng.random() < 0.5 else p.last, "NAME", "PATIENT")
    return seq(titles[-1], " ", shown)


def _header(b: NarrativeBuilder, d: Doc, text: str) -> None:
    b.line(text.format(lang=d.case.profile.language))


@template("translated_de", "translated", locales=("de_DE",))
def german(b: NarrativeBuilder, d: Doc) -> None:
    """German affiliate translation with Klinikum stays and a family doctor."""
    c = d.case
    _header(b, d, d.pick("[Translation from {lang}]", "Translated from the {lang} original:",
                         "Übersetzung / translation:"))
    b.say("The {age} patient ({who}) took since {start} {dd} (1-0-0) because of {ind}.", age=d.age_adj(),
          who=_local_title_name(d), start=d.date(c.dates.start), dd=d.drug_dose(), ind=c.indication)
    b.say("{onset} appeared {rx}.", onset=cap(d.onset()), rx=d.reactions())
    gp = seq(" (", d.doctor(), ", ", d.city(), ")") if d.dense() else ""
    b.say("The family doctor{gp} stopped the medication on {stop}.", gp=gp, stop=d.date(c.dates.stop))
    if d.rich():
        b.say("Stationary admission took place in the {hosp} from {adm} to {dis}.", hosp=d.hospital(),
              adm=d.date(c.dates.admission), dis=d.date(c.dates.discharge))
    if d.rich():
        b.say("Laboratory: {labs}.", labs=d.labs())
    if c.outcome == "recovered":
        b.say("The patient is since {dt} free of symptoms.", dt=d.date(c.dates.recovery))
    if d.dense():
        b.say("Report by: {rep}, {addr}, Tel. {tel}.", rep=d.reporter(), addr=c.address, tel=c.reporter_phone)


@template("translated_fr", "translated", locales=("fr_FR",))
def french(b: NarrativeBuilder, d: Doc) -> None:
    """French regional pharmacovigilance centre summary, translated."""
    c = d.case
    _header(b, d, d.pick("Summary translated from {lang}:", "[Traduction] Summary of the {lang} report:"))
    b.say("Patient {sex} {age}, hospitalised at {hosp} on {adm} for {rx}.", sex=d.sex_word,
          age=d.age_pred(), hosp=d.hospital(), adm=d.date(c.dates.admission), rx=d.reactions())
    by = seq(" by ", d.doctor()) if d.dense() else ""
    b.say("Treatment with {dd} had been initiated on {start}{by} for {ind}.", dd=d.drug_dose(),
          start=d.date(c.dates.start), by=by, ind=c.indication)
    b.say("The onset occurred {onset}.", onset=d.onset())
    if d.rich():
        b.say("Biological assessment: {labs}.", labs=d.labs())
    b.say("Favourable evolution after stop of {drug} on {stop}.", drug=d.drug(), stop=d.date(c.dates.stop))
    if d.dense():
        b.say("Notifier: {rep}, {role}, {mail}.", rep=d.reporter(), role=c.reporter_role, mail=c.reporter_email)


@template("translated_es_it", "translated", locales=("es_ES", "it_IT"))
def spanish_italian(b: NarrativeBuilder, d: Doc) -> None:
    """Southern European summary: 'of 54 years', 'was attended in'."""
    c = d.case
    _header(b, d, "Translated summary (original language: {lang}).")
    years = c.age_years
    age: Piece = seq("of ", Phi(str(years), "AGE"), " years") if years else d.age_pred()
    b.say("{who}, {age}, received {dd} from {start} for {ind}.", who=_local_title_name(d), age=age,
          dd=d.drug_dose(), start=d.date(c.dates.start), ind=c.indication)
    b.say("{onset} presented {rx}.", onset=cap(d.onset()), rx=d.reactions())
    b.say("Was attended in {hosp} ({city}).", hosp=d.hospital(), city=d.city())
    if d.rich():
        b.say("Analytical: {labs}.", labs=d.labs())
    b.say("Evolution: {o}.", o=c.outcome)
    if d.dense():
        b.say("Notified by {doc}, tel. {tel}.", doc=d.doctor(), tel=c.reporter_phone)


@template("translated_north", "translated", locales=("sv_SE", "pl_PL", "nl_NL"))
def northern(b: NarrativeBuilder, d: Doc) -> None:
    """Nordic/Polish/Dutch authority report with its local reference number."""
    c = d.case
    b.say("English translation of the {lang} report {ref}.", lang=c.profile.language, ref=c.local_ref)
    born = seq(" born ", d.date(c.dates.dob)) if d.dense() else ""
    b.say("A {sex} patient{born} ({age}) was treated with {dd} {route} for {ind}.", sex=d.sex_word, born=born,
          age=d.age_pred(), dd=d.drug_dose(), route=d.route(), ind=c.indication)
    b.say("{rx} occurred {onset}, on {on}.", rx=cap(d.reaction()), onset=d.onset(), on=d.date(c.dates.onset))
    if d.rich():
        b.say("Treatment given: {t}.", t=d.treatment())
    b.say("Outcome at time of report: {o}.", o=c.outcome)
    if d.dense():
        b.say("Reporter: {rep}, {hosp}, {country}.", rep=d.reporter(), hosp=d.hospital(), country=d.country())
