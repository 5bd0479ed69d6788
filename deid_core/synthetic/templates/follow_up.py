"""Follow-up reports: many dated paragraphs, each adding or correcting facts.

These are the longest narratives and the ones with the most DATE spans;
follow-up dates are drawn after the initial receipt date, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from deid_core.synthetic.builder import NarrativeBuilder, cap, seq
from deid_core.synthetic.case import Doc
from deid_core.synthetic.templates import sections
from deid_core.synthetic.templates.registry import template


def _initial_summary(b: NarrativeBuilder, d: Doc) -> None:
    c = d.case
    b.say("Initial information received on {rcv}: {age} {sex} patient experienced {rx} {onset} after "
          "starting {dd} on {start}.", rcv=d.date(c.dates.receipt), age=d.a_age(), sex=d.sex_word,
          rx=d.reactions(), onset=d.onset(), dd=d.drug_dose(), start=d.date(c.dates.start))


def _new_labs(b: NarrativeBuilder, d: Doc) -> None:
    b.say("Laboratory data were provided: {labs}.", labs=d.labs())


def _new_hospital(b: NarrativeBuilder, d: Doc) -> None:
    c = d.case
    b.say("The patient had been admitted to {hosp} on {adm} and discharged on {dis}.", hosp=d.hospital(),
          adm=d.date(c.dates.admission), dis=d.date(c.dates.discharge))


def _new_outcome(b: NarrativeBuilder, d: Doc) -> None:
    before = b.sentences
    sections.outcome(b, d)
    if b.sentences == before:  # the section is optional; an update must say something
        b.say("The outcome was updated to {o}.", o=d.case.outcome)


def _new_conmeds(b: NarrativeBuilder, d: Doc) -> None:
    if d.case.conmeds:
        b.say("Concomitant medications were reported as {m}.", m=d.conmeds())
    else:
        b.say("The reporter confirmed that no concomitant medications were taken.")


def _new_lot(b: NarrativeBuilder, d: Doc) -> None:
    b.say("The lot number was reported as {lot}.", lot=d.case.lot)


def _new_causality(b: NarrativeBuilder, d: Doc) -> None:
    b.say("{rep} considered the event {rel} to {drug}.", rep=d.reporter(),
          rel=d.pick("probably related", "possibly related", "not related"), drug=d.drug())


_UPDATES: tuple[Callable[[NarrativeBuilder, Doc], None], ...] = (
    _new_labs, _new_hospital, _new_outcome, _new_conmeds, _new_lot, _new_causality,
)


class _Dealer:
    """Hands out each kind of update at most once across a report's follow-ups,
    as real follow-ups add new facts rather than repeating old ones."""

    def __init__(self, d: Doc) -> None:
        self._pool = d.rng.sample(_UPDATES, len(_UPDATES))

    def write(self, b: NarrativeBuilder, d: Doc, k: int) -> None:
        if not self._pool:
            b.say("No new information was provided.")
            return
        for _ in range(min(k, len(self._pool))):
            self._pool.pop()(b, d)


@template("fu_dated", "follow_up")
def dated(b: NarrativeBuilder, d: Doc) -> None:
    """'Follow-up information received on 12-JAN-2014: ...' paragraphs."""
    _initial_summary(b, d)
    dealer = _Dealer(d)
    for fu in d.case.dates.followups:
        b.paragraph()
        b.fmt("Follow-up information received on {fu}: ", fu=d.date(fu))
        dealer.write(b, d, d.rng.randint(1, 3))


@template("fu_numbered", "follow_up")
def numbered(b: NarrativeBuilder, d: Doc) -> None:
    """Numbered follow-ups, each attributed to a named source."""
    _initial_summary(b, d)
    sections.history(b, d)
    dealer = _Dealer(d)
    for k, fu in enumerate(d.case.dates.followups, start=1):
        b.paragraph()
        b.fmt("Follow-up #{k} ({fu}) from {src}: ", k=str(k), fu=d.date(fu), src=d.reporter())
        dealer.write(b, d, d.rng.randint(1, 2))


@template("fu_amendment", "follow_up")
def amendment(b: NarrativeBuilder, d: Doc) -> None:
    """A data correction: wrong and right date of birth, updated address, case id."""
    c = d.case
    fu = c.dates.followups[0]
    b.say("Amended report ({fu}) for case {cid}.", fu=d.date(fu), cid=c.case_id)
    wrong = c.dates.dob + timedelta(days=d.rng.choice((-365, 31, 1, 10)))
    b.say("The patient's date of birth was corrected from {wrong} to {dob}.", wrong=d.date(wrong),
          dob=d.date(c.dates.dob))
    if d.dense():
        b.say("The reporter's address was updated to {addr}.", addr=c.address)
    b.say("The patient, now {age}, had received {dd} from {start} and developed {rx} {onset}.",
          age=d.age_pred(), dd=d.drug_dose(), start=d.date(c.dates.start), rx=d.reactions(),
          onset=d.onset())
    sections.body(b, d)
    b.say("No other information was changed.")


@template("fu_outcome", "follow_up")
def outcome_update(b: NarrativeBuilder, d: Doc) -> None:
    """Short follow-up from a relative or reporter that closes the case."""
    c = d.case
    src = seq("the patient's ", c.relation, ", ", d.relative()) if d.dense() else d.pick(
        "the reporter", "the patient's family")
    b.say("Additional information was received from {src} on {fu}.", src=src, fu=d.date(c.dates.followups[0]))
    b.say("The patient had been treated with {dd} for {ind} and developed {rx} {onset}.", dd=d.drug_dose(),
          ind=c.indication, rx=d.reactions(), onset=d.onset())
    if c.dates.death is not None:
        b.say("Sadly, {he} died on {dt}.", he=d.he, dt=d.date(c.dates.death))
    else:
        b.say("{he} {state} on {dt}.", he=cap(d.he), state=d.pick("recovered", "was reported as recovering"),
              dt=d.date(c.dates.recovery))
    if len(c.dates.followups) > 1 and d.rich():
        b.say("Upon further follow-up on {fu}, no new information was available.", fu=d.date(c.dates.followups[1]))
