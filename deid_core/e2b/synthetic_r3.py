"""Write planned synthetic reports as one E2B(R3) batch (``MCCI_IN200100UV01``).

The layout follows the ICH E2B(R3) implementation guide and the shape of
the ICH/FDA example instances: one ``PORR_IN049016UV`` message per report,
C.1 identification, H.1 narrative, D.1-D.2 patient, E.i reaction, G.k drug,
H.2/H.4 comments, C.2.r primary source and C.3 sender. Only elements the
project needs are written; the result is meant for this project's reader
and pipelines, not for submission to a regulator (no schema validation).

The batch is written with :class:`lxml.etree.xmlfile`, one message at a time,
so writing a large batch needs memory for one message, not the whole file.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from lxml import etree

from deid_core.e2b import r3_codes as C
from deid_core.e2b.synthetic import Contact, SyntheticReport, stable_uuid, ts

_NS = C.HL7_NS
_XSI_TYPE = f"{{{C.XSI_NS}}}type"
_NSMAP = {None: C.HL7_NS, "xsi": C.XSI_NS}
_BATCH_OID = "2.16.840.1.113883.3.989.2.1.3.22"
_SENDER_TYPE_CS = "2.16.840.1.113883.3.989.2.1.1.7"
_QUALIFICATION_CS = "2.16.840.1.113883.3.989.2.1.1.6"
_COUNTRY_CS = "1.0.3166.1.2.2"


def _el(parent: etree._Element | None, name: str, text: str | None = None, **attrs: str) -> etree._Element:
    """A child (or root) element in the HL7 namespace; ``xsi_type`` becomes ``xsi:type``."""
    attributes = {(_XSI_TYPE if k == "xsi_type" else k): v for k, v in attrs.items()}
    tag = f"{{{_NS}}}{name}"
    el = etree.Element(tag, attributes, nsmap=_NSMAP) if parent is None else etree.SubElement(
        parent, tag, attributes)
    if text is not None:
        el.text = text
    return el


def _code(parent: etree._Element, code: str, system: str) -> etree._Element:
    return _el(parent, "code", code=code, codeSystem=system)


def _obs_code(parent: etree._Element, code: str) -> etree._Element:
    return _code(parent, code, C.OBSERVATION_CS)


def _device(parent: etree._Element, role: str, oid: str, ident: str) -> None:
    holder = _el(parent, role, typeCode="RCV" if role == "receiver" else "SND")
    device = _el(holder, "device", classCode="DEV", determinerCode="INSTANCE")
    _el(device, "id", root=oid, extension=ident)


def _address_and_telecoms(entity: etree._Element, c: Contact) -> None:
    addr = _el(entity, "addr")
    _el(addr, "streetAddressLine", c.street)
    _el(addr, "city", c.city)
    if c.state:
        _el(addr, "state", c.state)
    _el(addr, "postalCode", c.postcode)
    _el(entity, "telecom", value=f"tel:{c.phone}")
    _el(entity, "telecom", value=f"mailto:{c.email}")


def _organisation(entity: etree._Element, c: Contact) -> None:
    dept = _el(entity, "representedOrganization", classCode="ORG", determinerCode="INSTANCE")
    _el(dept, "name", c.department)
    inner = _el(dept, "assignedEntity", classCode="ASSIGNED")
    org = _el(inner, "representedOrganization", classCode="ORG", determinerCode="INSTANCE")
    _el(org, "name", c.organisation)


def _person(entity: etree._Element, c: Contact, country: str, *, qualified: bool) -> None:
    person = _el(entity, "assignedPerson", classCode="PSN", determinerCode="INSTANCE")
    name = _el(person, "name")
    _el(name, "prefix", c.title)
    _el(name, "given", c.given)
    _el(name, "family", c.family)
    if qualified:
        qual = _el(person, "asQualifiedEntity", classCode="QUAL")
        _code(qual, "1", _QUALIFICATION_CS)
    located = _el(person, "asLocatedEntity", classCode="LOCE")
    loc = _el(located, "location", classCode="COUNTRY", determinerCode="INSTANCE")
    _code(loc, country, _COUNTRY_CS)


def _patient(role: etree._Element, r: SyntheticReport) -> None:
    case = r.case
    player = _el(role, "player1", classCode="PSN", determinerCode="INSTANCE")
    _el(player, "name", case.initials)
    _el(player, "administrativeGenderCode", code="1" if case.sex == "M" else "2", codeSystem="1.0.5218")
    _el(player, "birthTime", value=ts(case.birth_date))
    ident = _el(player, "asIdentifiedEntity", classCode="IDENT")
    _el(ident, "id", root="2.16.840.1.113883.3.989.2.1.3.9", extension=case.record_number)
    _code(ident, "3", "2.16.840.1.113883.3.989.2.1.1.4")

    age = _el(_el(role, "subjectOf2", typeCode="SBJ"), "observation", classCode="OBS", moodCode="EVN")
    _obs_code(age, C.OBS_AGE)
    _el(age, "value", xsi_type="PQ", value=str(case.age_years), unit="a")

    reaction = _el(_el(role, "subjectOf2", typeCode="SBJ"), "observation", classCode="OBS", moodCode="EVN")
    _el(reaction, "id", root=stable_uuid(case.case_id, "reaction", 0))
    _obs_code(reaction, C.OBS_REACTION)
    period = _el(reaction, "effectiveTime", xsi_type="IVL_TS")
    _el(period, "low", value=ts(case.onset))
    _el(period, "high", value=ts(case.reaction_end))
    value = _el(reaction, "value", xsi_type="CE", codeSystem=C.MEDDRA_CS, codeSystemVersion="26.0")
    _el(value, "originalText", case.reaction)

    drugs = _el(_el(role, "subjectOf2", typeCode="SBJ"), "organizer", classCode="CATEGORY", moodCode="EVN")
    _code(drugs, C.ORG_DRUGS, C.ORGANIZER_CS)
    sa = _el(_el(drugs, "component", typeCode="COMP"), "substanceAdministration",
             classCode="SBADM", moodCode="EVN")
    _el(sa, "id", root=stable_uuid(case.case_id, "drug", 0))
    product = _el(_el(_el(sa, "consumable", typeCode="CSM"), "instanceOfKind", classCode="INST"),
                  "kindOfProduct", classCode="MMAT", determinerCode="KIND")
    _el(product, "name", case.drug)
    dose = _el(_el(sa, "outboundRelationship2", typeCode="COMP"), "substanceAdministration",
               classCode="SBADM", moodCode="EVN")
    period = _el(dose, "effectiveTime", xsi_type="IVL_TS")
    _el(period, "low", value=ts(case.drug_start))
    _el(period, "high", value=ts(case.drug_end))


def _comment(assessment: etree._Element, text: str, author: str) -> None:
    event = _el(_el(assessment, "component1", typeCode="COMP"), "observationEvent",
                classCode="OBS", moodCode="EVN")
    _obs_code(event, C.OBS_COMMENT)
    _el(event, "value", text, xsi_type="ED")
    entity = _el(_el(event, "author", typeCode="AUT"), "assignedEntity", classCode="ASSIGNED")
    _code(entity, author, C.AUTHOR_CS)


def _primary_source(ie: etree._Element, r: SyntheticReport) -> None:
    rel = _el(ie, "outboundRelationship", typeCode="SPRT")
    _el(rel, "priorityNumber", value="1")
    inv = _el(rel, "relatedInvestigation", classCode="INVSTG", moodCode="EVN")
    _code(inv, C.RELATION_SOURCE_REPORT, C.REPORT_RELATION_CS)
    event = _el(_el(inv, "subjectOf2", typeCode="SUBJ"), "controlActEvent", classCode="CACT", moodCode="EVN")
    entity = _el(_el(event, "author", typeCode="AUT"), "assignedEntity", classCode="ASSIGNED")
    _address_and_telecoms(entity, r.case.reporter)
    _person(entity, r.case.reporter, r.case.country, qualified=True)
    _organisation(entity, r.case.reporter)


def _sender(ie: etree._Element, r: SyntheticReport) -> None:
    event = _el(_el(ie, "subjectOf1", typeCode="SUBJ"), "controlActEvent", classCode="CACT", moodCode="EVN")
    entity = _el(_el(event, "author", typeCode="AUT"), "assignedEntity", classCode="ASSIGNED")
    _code(entity, "1", _SENDER_TYPE_CS)
    _address_and_telecoms(entity, r.case.sender)
    _person(entity, r.case.sender, r.case.country, qualified=False)
    _organisation(entity, r.case.sender)


def build_message(r: SyntheticReport, message_id: str) -> etree._Element:
    """One ``PORR_IN049016UV`` message holding report ``r``."""
    case = r.case
    msg = _el(None, C.MESSAGE)
    _el(msg, "id", root=C.ROOT_REPORT_ID, extension=message_id)
    _el(msg, "creationTime", value=r.created_ts)
    _el(msg, "interactionId", root="2.16.840.1.113883.1.6", extension=C.MESSAGE)
    _el(msg, "processingCode", code="P")
    _el(msg, "processingModeCode", code="T")
    _el(msg, "acceptAckCode", code="AL")
    _device(msg, "receiver", "2.16.840.1.113883.3.989.2.1.3.12", "PVDEID-RECEIVER")
    _device(msg, "sender", "2.16.840.1.113883.3.989.2.1.3.11", "PVDEID-SENDER")
    cap = _el(msg, "controlActProcess", classCode="CACT", moodCode="EVN")
    _code(cap, "PORR_TE049016UV", "2.16.840.1.113883.1.18")
    _el(cap, "effectiveTime", value=r.created_ts)
    ie = _el(_el(cap, "subject", typeCode="SUBJ"), "investigationEvent", classCode="INVSTG", moodCode="EVN")
    _el(ie, "id", root=C.ROOT_REPORT_ID, extension=case.report_id)
    _el(ie, "id", root=C.ROOT_CASE_ID, extension=case.case_id)
    _code(ie, "PAT_ADV_EVNT", "2.16.840.1.113883.5.4")
    _el(ie, "text", r.narrative.text, mediaType="text/plain")
    _el(ie, "statusCode", code="active")
    _el(_el(ie, "effectiveTime"), "low", value=ts(case.first_received))
    _el(ie, "availabilityTime", value=ts(r.most_recent_info))
    assessment = _el(_el(ie, "component", typeCode="COMP"), "adverseEventAssessment",
                     classCode="INVSTG", moodCode="EVN")
    _patient(_el(_el(assessment, "subject1", typeCode="SBJ"), "primaryRole", classCode="INVSBJ"), r)
    _comment(assessment, r.reporter_comment, C.AUTHOR_REPORTER)
    _comment(assessment, r.sender_comment, C.AUTHOR_SENDER)
    _primary_source(ie, r)
    _sender(ie, r)
    characteristic = _el(_el(ie, "subjectOf2", typeCode="SUBJ"), "investigationCharacteristic",
                         classCode="OBS", moodCode="EVN")
    _code(characteristic, "1", "2.16.840.1.113883.3.989.2.1.1.23")
    _el(characteristic, "value", xsi_type="CE", code="1", codeSystem="2.16.840.1.113883.3.989.2.1.1.2")
    return msg


def write_r3_batch(reports: Sequence[SyntheticReport], *, seed: int, start: int) -> bytes:
    """Serialise ``reports`` as one R3 batch (UTF-8, with XML declaration)."""
    buf = io.BytesIO()
    batch_id = f"PVDEID-B-{seed}-{start:07d}"
    newest = max((r.created_ts for r in reports), default="20000101000000+0000")
    with etree.xmlfile(buf, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element(f"{{{_NS}}}{C.BATCH_ROOT}", {"ITSVersion": "XML_1.0"}, nsmap=_NSMAP):
            header = _el(None, "id", root=_BATCH_OID, extension=batch_id)
            xf.write(header, _el(None, "creationTime", value=newest), _el(None, "responseModeCode", code="D"),
                     _el(None, "interactionId", root="2.16.840.1.113883.1.6", extension=C.BATCH_ROOT),
                     _el(None, "name", code="1", codeSystem="2.16.840.1.113883.3.989.2.1.1.1"))
            for offset, r in enumerate(reports):
                xf.write(build_message(r, f"{batch_id}-M{offset + 1:05d}"))
            receiver = _el(None, "receiver", typeCode="RCV")
            _el(_el(receiver, "device", classCode="DEV", determinerCode="INSTANCE"), "id",
                root="2.16.840.1.113883.3.989.2.1.3.14", extension="PVDEID-RECEIVER")
            sender = _el(None, "sender", typeCode="SND")
            _el(_el(sender, "device", classCode="DEV", determinerCode="INSTANCE"), "id",
                root="2.16.840.1.113883.3.989.2.1.3.13", extension="PVDEID-SENDER")
            xf.write(receiver, sender)
    return buf.getvalue()
