"""Literature cases: citations (authors and years are PHI of the reporter) and
case-report prose with eponymous scales that must not be taken for names."""

from __future__ import annotations

from deid_core.synthetic.builder import NarrativeBuilder, Phi, Piece, cap, seq
from deid_core.synthetic.case import Doc, join
from deid_core.synthetic.templates import sections
from deid_core.synthetic.templates.registry import template

_JOURNALS = (
    "J Clin Pharm Ther", "Eur J Case Rep Intern Med", "BMJ Case Rep", "Drug Saf Case Rep",
    "Ann Pharmacother", "Clin Toxicol", "Br J Clin Pharmacol", "Int J Clin Pharm",
)
_TITLE_OPENERS = ("A case of", "Unusual presentation of", "Fatal", "Late-onset", "Severe")


def _citation(b: NarrativeBuilder, d: Doc) -> Piece:
    """``Smith J, Rossi PA, et al. A case of ... J Clin ... 2015;12(3):145-8``."""
    c = d.case
    authors: list[Piece] = [d.author(c.reporter)] + [d.author() for _ in range(d.rng.randint(0, 2))]
    names = join(authors, last=", ")
    year = Phi(str(c.dates.receipt.year), "DATE")
    vol, issue, page = d.rng.randint(3, 60), d.rng.randint(1, 12), d.rng.randint(10, 900)
    return seq(names, d.pick(". ", ", et al. "), f"{d.pick(*_TITLE_OPENERS)} ", d.reaction(),
               " associated with ", d.drug(), ". ", d.pick(*_JOURNALS), ". ", year,
               f";{vol}({issue}):{page}-{page + d.rng.randint(2, 9)}")


def _correspondence(b: NarrativeBuilder, d: Doc) -> None:
    if d.dense():
        b.say("Correspondence: {auth}, {hosp}, {city}, {country}; {mail}.", auth=d.author(d.case.reporter),
              hosp=d.hospital(), city=d.city(), country=d.country(), mail=d.case.reporter_email)


@template("lit_case_report", "literature")
def case_report(b: NarrativeBuilder, d: Doc) -> None:
    """Safety-database summary of a published case report."""
    c = d.case
    b.say("This literature report was identified in {cit}.", cit=_citation(b, d))
    b.say("The authors describe {age} {sex} patient who developed {rx} {onset} after initiation of "
          "{dd} for {ind}.", age=d.a_age(), sex=d.sex_word, rx=d.reactions(), onset=d.onset(),
          dd=d.drug_dose(), ind=c.indication)
    sections.history(b, d)
    sections.labs(b, d)
    sections.treatment(b, d)
    sections.outcome(b, d)
    _correspondence(b, d)
    if d.dense():
        b.say("Full text: {url}", url=d.case.url)


@template("lit_abstract", "literature")
def abstract(b: NarrativeBuilder, d: Doc) -> None:
    """Authors' own voice ('We report...') with a Naranjo score, an eponym trap."""
    c = d.case
    b.say("We report the case of {age} {who} treated with {dd} for {ind} who presented with {rx} {onset}.",
          age=d.a_age(), who=d.person_word, dd=d.drug_dose(), ind=c.indication, rx=d.reactions(),
          onset=d.onset())
    if d.rich():
        b.say("Laboratory investigations revealed {labs}.", labs=d.labs())
    if d.rich():
        b.say("{drug} was withdrawn and the patient improved over the following weeks.", drug=cap(d.drug()))
    b.say("The Naranjo score was {n}, indicating a {cat} adverse drug reaction.",
          n=str(d.rng.randint(3, 9)), cat=d.pick("probable", "possible"))
    if d.rich():
        b.say("Clinicians should be aware of this rare complication of {drug}.", drug=d.drug())
    _correspondence(b, d)


@template("lit_department", "literature")
def department(b: NarrativeBuilder, d: Doc) -> None:
    """A case attributed to a department, hospital, city and country."""
    c = d.case
    b.say("Physicians from the Department of {dept}, {hosp}, {city}, {country}, reported a case of {rx} in a "
          "{sex} patient {age}.", dept=d.pick("Internal Medicine", "Dermatology", "Cardiology", "Neurology",
                                              "Clinical Pharmacology"),
          hosp=d.hospital(), city=d.city(), country=d.country(), rx=d.reaction(), sex=d.sex_word,
          age=d.age_pred())
    b.say("The patient had received {dd} {route} since {start}.", dd=d.drug_dose(), route=d.route(),
          start=d.partial_date(c.dates.start))
    b.say("Symptoms began {onset}.", onset=d.onset())
    sections.body(b, d)


@template("lit_letter", "literature")
def letter(b: NarrativeBuilder, d: Doc) -> None:
    """A letter to the editor: year-only dates and an author list."""
    c = d.case
    b.say("In a letter to the editor published in {year}, {auth} and colleagues described {age} {who} "
          "who developed {rx} while taking {drug}.", year=Phi(str(c.dates.receipt.year), "DATE"),
          auth=d.author(c.reporter), age=d.a_age(), who=d.person_word, rx=d.reactions(), drug=d.drug())
    b.say("The dose was {dose} and the reaction appeared {onset}.", dose=d.dose(), onset=d.onset())
    sections.conmeds(b, d)
    sections.dechallenge(b, d)
    sections.outcome(b, d)
