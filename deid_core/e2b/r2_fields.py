"""Which E2B(R2) ``ichicsr`` elements are personal data, and what they are called.

R2 is flat and self-describing: an element's name says what it holds
(``reportergivename``, ``reactionstartdate``), so the extractor in
:mod:`.r2` is table-driven and these tables are the whole policy. Names are
those of the ICH ICSR DTD 2.1; the caAERS samples add their own elements
(``physicianemail``, ``senderfirstname``, ``narrativeincludeclinicalextended``,
``factor``), which are covered where they carry personal data and otherwise
ignored.

Four kinds of leaves are fields:

* :data:`TEXT` -- genuinely free text. ``patientepisodename``,
  ``patientdrugindication`` and the like are MedDRA terms in R2 and are left
  out; ``senderdiagnosis`` is a MedDRA term too but is kept because senders
  routinely write their own wording there. ``testresult`` is text only when
  it is not a number.
* :data:`IDENTITY` -- the patient's and parent's identifying elements.
* contact elements of a *role* (reporter, sender, receiver and caAERS's
  physician and recipient), recognised by a role prefix plus one of the
  :data:`CONTACT` suffixes: ``sendertel``, ``reporterfamilyname``,
  ``physicianemail``.
* dates -- every element whose name contains "date" (except the
  ``...dateformat`` companions, which only say how to read the date), named
  by :data:`DATE_NAMES` or after the element itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deid_core.e2b.model import Label


@dataclass(frozen=True, slots=True)
class Group:
    """A repeating or nesting element and the path segment its fields live under."""

    segment: str | None
    """Path segment; None merges the group's fields into its owner (``patientdeath``)."""
    indexed: bool
    role: str | None = None
    """The contact role whose elements the group holds (``reportergivename`` in ``primarysource``)."""


GROUPS: dict[str, Group] = {
    "primarysource": Group("reporter", True, "reporter"),
    "sender": Group("sender", False, "sender"),
    "receiver": Group("receiver", False, "receiver"),
    "patient": Group("patient", False),
    "parent": Group("parent", False),
    "patientdeath": Group(None, False),
    "summary": Group("summary", False),
    "medicalhistoryepisode": Group("medical_history", True),
    "parentmedicalhistoryepisode": Group("medical_history", True),
    "patientpastdrugtherapy": Group("drug_history", True),
    "parentpastdrugtherapy": Group("drug_history", True),
    "reaction": Group("reaction", True),
    "test": Group("test", True),
    "drug": Group("drug", True),
    "activesubstance": Group("substance", True),
    "drugrecurrence": Group("recurrence", True),
    "drugreactionrelatedness": Group("relatedness", True),
    "patientdeathcause": Group("death_cause", True),
    "patientautopsy": Group("autopsy_cause", True),
    "reportduplicate": Group("duplicate", True),
    "linkedreport": Group("linked_report", True),
}
"""Known groups; an unknown element with children becomes an indexed group named after itself."""

TOP_LEVEL_OWNERS = frozenset({"", "patient"})
"""Owners whose child groups get top-level paths (``reaction[0]``, not ``patient.reaction[0]``)."""


@dataclass(frozen=True, slots=True)
class Text:
    """A free-text element: ``kind`` names the field, ``per`` how it is indexed.

    ``per="owner"`` uses the index of the enclosing group (the reaction's,
    the drug's), ``per="count"`` counts occurrences, ``per=None`` means the
    element occurs once per report.
    """

    kind: str
    per: str | None


TEXT: dict[str, Text] = {
    "narrativeincludeclinical": Text("narrative", None),        # B.5.1
    "narrativeincludeclinicalextended": Text("narrative_extended", None),  # caAERS
    "reportercomment": Text("reporter_comment", None),          # B.5.2
    "senderdiagnosis": Text("sender_diagnosis", None),          # B.5.3
    "sendercomment": Text("sender_comment", None),              # B.5.4
    "resultstestsprocedures": Text("tests_results_text", None),  # B.3.2
    "patientmedicalhistorytext": Text("medical_history_text", "count"),        # B.1.7.2
    "parentmedicalrelevanttext": Text("parent_medical_history_text", "count"),  # B.1.10.7.2
    "patientmedicalcomment": Text("medical_history_comment", "owner"),        # B.1.7.1g
    "parentmedicalcomment": Text("parent_medical_history_comment", "owner"),  # B.1.10.7.1g
    "primarysourcereaction": Text("reaction_as_reported", "owner"),           # B.2.i.0
    "testresult": Text("test_result", "owner"),                 # B.3.1d, when not numeric
    "drugdosagetext": Text("drug_dosage_text", "owner"),        # B.4.k.6
    "drugadditional": Text("drug_additional_info", "owner"),    # B.4.k.19
    "literaturereference": Text("literature_reference", "owner"),  # A.2.2
    "factor": Text("attribution_factor", "owner"),              # caAERS attribution text
}

IDENTITY: dict[str, tuple[str, Label]] = {
    "patientinitial": ("patient.initials", "NAME"),                           # B.1.1
    "patientgpmedicalrecordnumb": ("patient.gp_record_number", "ID"),         # B.1.1.1a
    "patientspecialistrecordnumb": ("patient.specialist_record_number", "ID"),  # B.1.1.1b
    "patienthospitalrecordnumb": ("patient.hospital_record_number", "ID"),    # B.1.1.1c
    "patientinvestigationnumb": ("patient.investigation_number", "ID"),       # B.1.1.1d
    "patientonsetage": ("patient.age", "AGE"),                                # B.1.2.2a
    "parentidentification": ("parent.initials", "NAME"),                      # B.1.10.1
    "parentage": ("parent.age", "AGE"),                                       # B.1.10.2.2a
}

ROLES: tuple[str, ...] = ("reporter", "sender", "receiver", "physician", "recipient")

CONTACT: dict[str, tuple[str, Label]] = {
    "givename": ("given_name", "NAME"), "firstname": ("given_name", "NAME"),
    "middlename": ("middle_name", "NAME"), "midname": ("middle_name", "NAME"),
    "familyname": ("family_name", "NAME"), "lastname": ("family_name", "NAME"),
    "organization": ("organization", "LOCATION"), "department": ("department", "LOCATION"),
    "street": ("street", "LOCATION"), "streetaddress": ("street", "LOCATION"),
    "city": ("city", "LOCATION"), "state": ("state", "LOCATION"), "postcode": ("postcode", "LOCATION"),
    "tel": ("telephone", "PHONE"), "phone": ("telephone", "PHONE"), "phonenumber": ("telephone", "PHONE"),
    "fax": ("fax", "PHONE"), "faxnumber": ("fax", "PHONE"),
    "email": ("email", "EMAIL"), "emailaddress": ("email", "EMAIL"), "emailid": ("email", "EMAIL"),
    "emails": ("emails", "EMAIL"),
}
"""Suffixes after a role prefix. Titles, country codes and telephone extensions are not identifying."""

ORGANISATION_ROLES = frozenset({"reporter", "physician"})
"""Roles whose organisation and department are fields; the sender's is ``Report.sender``
and the receiver is a regulator."""

_CONTACT_TAG = re.compile(rf"({'|'.join(ROLES)})({'|'.join(sorted(CONTACT, key=len, reverse=True))})")

DATE_NAMES: dict[str, str] = {
    "transmissiondate": "transmission_date",
    "receivedate": "first_received_date",
    "receiptdate": "most_recent_info_date",
    "patientbirthdate": "birth_date", "parentbirthdate": "birth_date",
    "patientlastmenstrualdate": "last_menstrual_date", "parentlastmenstrualdate": "last_menstrual_date",
    "patientmedicalstartdate": "start_date", "patientmedicalenddate": "end_date",
    "parentmedicalstartdate": "start_date", "parentmedicalenddate": "end_date",
    "patientdrugstartdate": "start_date", "patientdrugenddate": "end_date",
    "parentdrugstartdate": "start_date", "parentdrugenddate": "end_date",
    "patientdeathdate": "death_date",
    "reactionstartdate": "start_date", "reactionenddate": "end_date",
    "testdate": "date",
    "drugstartdate": "start_date", "drugenddate": "end_date",
}

_NUMBER = re.compile(r"\s*[<>=≤≥]{0,2}\s*[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?\s*")


def contact_field(tag: str) -> tuple[str, str, Label] | None:
    """``(role, field, label)`` for a role contact element such as ``sendertel``, else None."""
    m = _CONTACT_TAG.fullmatch(tag)
    if m is None:
        return None
    role, suffix = m.groups()
    field, label = CONTACT[suffix]
    if field in ("organization", "department") and role not in ORGANISATION_ROLES:
        return None
    return role, field, label


def is_date_tag(tag: str) -> bool:
    """Whether an element holds a date (``...date``, ``dateremoved``) rather than its format."""
    return "date" in tag and not tag.endswith("format")


def is_numeric(text: str) -> bool:
    """A test result such as ``12``, ``<0.5`` or ``1.2e3`` (kept, not de-identified)."""
    return _NUMBER.fullmatch(text) is not None
