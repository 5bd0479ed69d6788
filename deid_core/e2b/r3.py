"""Extract one E2B(R3) report from a ``PORR_IN049016UV`` message.

Element locations follow the ICH E2B(R3) implementation guide (the HL7
paths under ``controlActProcess/subject/investigationEvent``); where the
guide leaves room, they were checked against the FDA FAERS and ICH example
instances. Sections C and H are read here, D to G in :mod:`.r3_patient`.

Free text taken (``TextField`` paths), each because a reporter or sender
writes it in their own words and can name people, places and dates:

* ``narrative`` -- H.1 case narrative (``investigationEvent/text``);
* ``reporter_comment`` / ``sender_comment`` -- H.2 and H.4 (a comment
  observation told apart by its author code); ``comment[n]`` when the author
  is missing or unknown;
* ``sender_diagnosis[n]`` -- H.3.r only when written as text (R3 codes it in
  MedDRA, but an ``originalText`` or a text-typed value is kept);
* ``case_summary[n]`` -- H.5.r.1a case summary and reporter's comments in
  the native language;
* ``document_title[n]`` / ``literature_reference[n]`` -- C.1.6.1.r.1
  documents held by the sender (titles such as "Discharge summary of ...")
  and C.4.r.1 literature references (author names);
* ``reaction_as_reported[i]`` / ``reaction_for_translation[i]`` -- E.i.1.1a
  and E.i.1.2, the primary source's verbatim terms;
* ``medical_history_text[n]`` / ``medical_history_comment[r]`` -- D.7.2 and
  D.7.1.r.5, and the parent's equivalents (D.10.7.2, D.10.7.1.r.5) prefixed
  ``parent_``;
* ``cause_of_death_reported[n]`` / ``cause_of_death_autopsy[n]`` -- D.9.2.r.2
  and D.9.4.r.2 free-text causes of death;
* ``test_result_unstructured[r]`` / ``test_result_comment[r]`` -- F.r.3.4
  and F.r.6;
* ``drug_dosage_text[k][r]`` / ``drug_indication[k][j]`` /
  ``drug_additional_info[k]`` -- G.k.4.r.8 dosage text, G.k.7.r.1 indication
  as reported, G.k.11 additional information.

Not taken: coded values, MedDRA terms, product and substance names, batch
numbers, free-text routes and dose forms (no personal data by their
nature), study names and numbers, other case identifiers, and base64
attachments (C.1.6.1.r.2 included documents: binary, not text).

Structured fields (``StructuredField`` paths and labels):

* patient D.1 ``patient.initials`` (NAME; name parts when the name is
  structured), D.1.1.1-4 ``patient.gp_record_number``,
  ``.specialist_record_number``, ``.hospital_record_number``,
  ``.investigation_number`` (ID), D.2.1 ``patient.birth_date``, D.9.1
  ``patient.death_date``, D.6 ``patient.last_menstrual_date`` (DATE), D.2.2
  ``patient.age`` (AGE, number without unit); the parent's D.10.x likewise
  under ``parent.``;
* primary sources C.2.r as ``reporter[r]``: ``given_name``,
  ``middle_name``, ``family_name`` (NAME), ``organization`` (C.2.r.2.1),
  ``department`` (C.2.r.2.2), ``street``, ``city``, ``state``,
  ``postcode`` (LOCATION), ``telephone``, ``fax`` (PHONE), ``email``
  (EMAIL);
* sender C.3 as ``sender.``: the person's name parts, address, telephone,
  fax and e-mail (the organisation's name is ``Report.sender``);
* every date of the message (DATE, value as written): named ones --
  ``message.creation_time`` (N.2.r.4), ``report.creation_date`` (C.1.2),
  ``report.first_received_date`` (C.1.4), ``report.most_recent_info_date``
  (C.1.5), ``reaction[i].start_date``/``end_date``,
  ``medical_history[r].*``, ``drug_history[r].*``, ``test[r].date``,
  ``drug[k].dosage[r].start_date``/``end_date`` -- and any other time
  stamp found in the message as ``other_date[n]``, so that no date escapes
  de-identification because it sits somewhere unforeseen.

Dates of the batch wrapper (``MCCI_IN200100UV01/creationTime``) belong to
the transmission, not to a report, and are not fields.
"""

from __future__ import annotations

from lxml import etree

from deid_core.e2b import r3_codes as C
from deid_core.e2b.errors import E2BParseError
from deid_core.e2b.model import Report
from deid_core.e2b.r3_parts import R3Fields, is_code, is_date_node, xsi_type
from deid_core.e2b.r3_patient import extract_primary_role
from deid_core.e2b.xmlnav import (
    Element,
    attr,
    child,
    children,
    find,
    find_all,
    stripped_text,
    value_attr,
)


#: ISO 3166-1 alpha-2 code system OID used by E2B(R3)
_ISO_COUNTRY_CS = "1.0.3166.1.2.2"


def extract_r3(message: Element) -> Report:
    """The report in one ``PORR_IN049016UV`` message (raises :class:`E2BParseError`)."""
    ie = find(message, "controlActProcess/subject/investigationEvent")
    if ie is None:
        raise E2BParseError("message without an investigationEvent")
    report_id, case_id = _ids(ie)
    f = R3Fields()

    created = find(message, "controlActProcess/effectiveTime")
    f.date("message.creation_time", child(message, "creationTime"))
    f.date("report.creation_date", created)
    first_received = child(child(ie, "effectiveTime"), "low")
    latest = child(ie, "availabilityTime")
    f.date("report.first_received_date", first_received)
    f.date("report.most_recent_info_date", latest)

    f.text("narrative", child(ie, "text"))
    _documents(ie, f)
    for assessment in find_all(ie, "component/adverseEventAssessment"):
        for role in find_all(assessment, "subject1/primaryRole"):
            extract_primary_role(role, f)
        for event in find_all(assessment, "component1/observationEvent"):
            _comment(event, f)
    for event in find_all(ie, "component/observationEvent"):
        if is_code(event, C.OBS_CASE_SUMMARY, C.OBSERVATION_CS):
            f.text(f"case_summary[{f.out.next_index('case_summary')}]", child(event, "value"))
    for related in find_all(ie, "outboundRelationship/relatedInvestigation"):
        if is_code(related, C.RELATION_SOURCE_REPORT, C.REPORT_RELATION_CS):
            _reporter(related, f)
    sender = None
    for entity in find_all(ie, "subjectOf1/controlActEvent/author/assignedEntity"):
        sender = _sender(entity, f) or sender
    _remaining_dates(message, f)

    return Report(
        case_id=case_id,
        version=value_attr(created) or value_attr(child(message, "creationTime")) or "1",
        format="R3",
        report_id=report_id,
        received_date=value_attr(latest) or value_attr(first_received),
        sender=sender,
        text_fields=f.out.text_fields,
        structured_fields=f.out.structured_fields,
        country=_country(ie),
    )


def _country(ie: Element) -> str | None:
    """The first ISO 3166 country code in the report (the primary source's comes first in R3 order)."""
    for el in ie.iter("{*}code"):
        if el.get("codeSystem") == _ISO_COUNTRY_CS and el.get("code"):
            return str(el.get("code")).strip().upper() or None
    return None


def _ids(ie: Element) -> tuple[str, str]:
    """(C.1.1 report id, C.1.8.1 case id), told apart by id root; root-less ids by position.

    The case id falls back to the report id (a sender that is the first
    sender may omit C.1.8.1 in some regional profiles).
    """
    ids = [(attr(i, "root"), (attr(i, "extension") or "").strip()) for i in children(ie, "id")]
    by_root = {root: ext for root, ext in ids if ext}
    report_id = by_root.get(C.ROOT_REPORT_ID)
    case_id = by_root.get(C.ROOT_CASE_ID)
    unrooted = [ext for root, ext in ids if ext and not root]
    if report_id is None and unrooted:
        report_id = unrooted.pop(0)
    if case_id is None and unrooted:
        case_id = unrooted.pop(0)
    case_id = case_id or report_id
    if not case_id:
        raise E2BParseError("report without a case id")
    return report_id or case_id, case_id


def _documents(ie: Element, f: R3Fields) -> None:
    """C.1.6.1.r.1 document titles and C.4.r.1 literature references."""
    for document in find_all(ie, "reference/document"):
        title = child(document, "title")
        if title is not None:
            f.text(f"document_title[{f.out.next_index('document_title')}]", title)
        citation = child(document, "bibliographicDesignationText")
        if citation is not None:
            f.text(f"literature_reference[{f.out.next_index('literature_reference')}]", citation)


def _comment(event: Element, f: R3Fields) -> None:
    """H.2 reporter's / H.4 sender's comments and H.3.r sender's diagnosis when free text."""
    value = child(event, "value")
    if is_code(event, C.OBS_COMMENT, C.OBSERVATION_CS):
        author = attr(find(event, "author/assignedEntity/code"), "code")
        if author == C.AUTHOR_REPORTER:
            f.text("reporter_comment", value)
        elif author == C.AUTHOR_SENDER:
            f.text("sender_comment", value)
        else:
            f.text(f"comment[{f.out.next_index('comment')}]", value)
    elif is_code(event, C.OBS_DIAGNOSIS, C.OBSERVATION_CS):
        text = value if xsi_type(value) in ("ED", "ST") else child(value, "originalText")
        if text is not None:
            f.text(f"sender_diagnosis[{f.out.next_index('sender_diagnosis')}]", text)


def _reporter(related: Element, f: R3Fields) -> None:
    """C.2.r: one primary source's name, organisation, address and telecoms."""
    prefix = f"reporter[{f.out.next_index('reporter')}]"
    entity = find(related, "subjectOf2/controlActEvent/author/assignedEntity")
    if entity is None:
        return
    f.address(prefix, child(entity, "addr"))
    f.telecoms(prefix, entity)
    f.person_name(prefix, find(entity, "assignedPerson/name"))
    department = child(entity, "representedOrganization")
    f.value(f"{prefix}.department", "LOCATION", stripped_text(child(department, "name")))
    f.value(f"{prefix}.organization", "LOCATION",
            stripped_text(find(department, "assignedEntity/representedOrganization/name")))


def _sender(entity: Element, f: R3Fields) -> str | None:
    """C.3: the sender person's name, address and telecoms; returns the C.3.2 organisation.

    ``subjectOf1/controlActEvent`` also carries C.1.9.1.r other case ids
    (an ``id`` and no author); only an entity with an author is the sender.
    """
    f.address("sender", child(entity, "addr"))
    f.telecoms("sender", entity)
    f.person_name("sender", find(entity, "assignedPerson/name"))
    department = child(entity, "representedOrganization")
    return stripped_text(find(department, "assignedEntity/representedOrganization/name"))


_WITH_VALUE = etree.XPath("descendant-or-self::*[@value]")


def _remaining_dates(message: Element, f: R3Fields) -> None:
    """Every time stamp no extractor placed, as ``other_date[n]`` in document order."""
    for el in _WITH_VALUE(message):
        if el not in f.claimed and is_date_node(el):
            f.date(f"other_date[{f.out.next_index('other_date')}]", el)
