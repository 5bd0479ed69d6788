"""Write planned synthetic reports as one E2B(R2) ``ichicsr`` document.

Element names and order follow the ICH ICSR DTD 2.1 (M2 E2B(R2)): message
header, then per ``safetyreport`` the A.1 identification (with
``safetyreportversion`` for follow-ups and ``companynumb`` as the worldwide
case number), A.2 ``primarysource``, A.3 ``sender`` and B ``patient`` with
reaction, drug and ``summary`` (narrative and comments). Dates are written
with their ``...dateformat`` companion (102 = CCYYMMDD, 204 = CCYYMMDDHHMMSS).

Like the R3 writer, it streams one ``safetyreport`` at a time through
:class:`lxml.etree.xmlfile`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from lxml import etree

from deid_core.e2b.synthetic import SyntheticReport, ts


def _leaf(parent: etree._Element, name: str, text: str | None) -> None:
    if text is not None:
        etree.SubElement(parent, name).text = text


def _date(parent: etree._Element, name: str, value: str, fmt: str = "102") -> None:
    _leaf(parent, f"{name}format", fmt)
    _leaf(parent, name, value)


def build_safetyreport(r: SyntheticReport) -> etree._Element:
    """One ``safetyreport`` element for report ``r``."""
    case, rep, snd = r.case, r.case.reporter, r.case.sender
    sr = etree.Element("safetyreport")
    _leaf(sr, "safetyreportversion", str(r.version))
    _leaf(sr, "safetyreportid", case.report_id)
    _leaf(sr, "primarysourcecountry", case.country)
    _leaf(sr, "occurcountry", case.country)
    _date(sr, "transmissiondate", r.created.strftime("%Y%m%d"))
    _leaf(sr, "reporttype", "1")
    _leaf(sr, "serious", "1")
    _leaf(sr, "seriousnessother", "1")
    _date(sr, "receivedate", ts(case.first_received))
    _date(sr, "receiptdate", ts(r.most_recent_info))
    _leaf(sr, "companynumb", case.case_id)

    ps = etree.SubElement(sr, "primarysource")
    _leaf(ps, "reportertitle", rep.title)
    _leaf(ps, "reportergivename", rep.given)
    _leaf(ps, "reporterfamilyname", rep.family)
    _leaf(ps, "reporterorganization", rep.organisation)
    _leaf(ps, "reporterdepartment", rep.department)
    _leaf(ps, "reporterstreet", rep.street)
    _leaf(ps, "reportercity", rep.city)
    _leaf(ps, "reporterstate", rep.state)
    _leaf(ps, "reporterpostcode", rep.postcode)
    _leaf(ps, "reportercountry", case.country)
    _leaf(ps, "qualification", "1")

    sender = etree.SubElement(sr, "sender")
    _leaf(sender, "sendertype", "1")
    _leaf(sender, "senderorganization", snd.organisation)
    _leaf(sender, "senderdepartment", snd.department)
    _leaf(sender, "sendergivename", snd.given)
    _leaf(sender, "senderfamilyname", snd.family)
    _leaf(sender, "senderstreetaddress", snd.street)
    _leaf(sender, "sendercity", snd.city)
    _leaf(sender, "senderstate", snd.state)
    _leaf(sender, "senderpostcode", snd.postcode)
    _leaf(sender, "sendercountrycode", case.country)
    _leaf(sender, "sendertel", snd.phone)
    _leaf(sender, "senderemailaddress", snd.email)

    patient = etree.SubElement(sr, "patient")
    _leaf(patient, "patientinitial", case.initials)
    _leaf(patient, "patienthospitalrecordnumb", case.record_number)
    _date(patient, "patientbirthdate", ts(case.birth_date))
    _leaf(patient, "patientonsetage", str(case.age_years))
    _leaf(patient, "patientonsetageunit", "801")
    _leaf(patient, "patientsex", "1" if case.sex == "M" else "2")
    reaction = etree.SubElement(patient, "reaction")
    _leaf(reaction, "primarysourcereaction", case.reaction)
    _date(reaction, "reactionstartdate", ts(case.onset))
    _date(reaction, "reactionenddate", ts(case.reaction_end))
    _leaf(reaction, "reactionoutcome", "1")
    drug = etree.SubElement(patient, "drug")
    _leaf(drug, "drugcharacterization", "1")
    _leaf(drug, "medicinalproduct", case.drug)
    _date(drug, "drugstartdate", ts(case.drug_start))
    _date(drug, "drugenddate", ts(case.drug_end))
    summary = etree.SubElement(patient, "summary")
    _leaf(summary, "narrativeincludeclinical", r.narrative.text)
    _leaf(summary, "reportercomment", r.reporter_comment)
    _leaf(summary, "sendercomment", r.sender_comment)
    return sr


def write_r2_batch(reports: Sequence[SyntheticReport], *, seed: int, start: int) -> bytes:
    """Serialise ``reports`` as one ``ichicsr`` document (UTF-8, with XML declaration)."""
    buf = io.BytesIO()
    newest = max((r.created for r in reports), default=None)
    with etree.xmlfile(buf, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element("ichicsr", {"lang": "en"}):
            header = etree.Element("ichicsrmessageheader")
            _leaf(header, "messagetype", "ichicsr")
            _leaf(header, "messageformatversion", "2.1")
            _leaf(header, "messageformatrelease", "2.0")
            _leaf(header, "messagenumb", f"PVDEID-{seed}-{start:07d}")
            _leaf(header, "messagesenderidentifier", "PVDEID-SENDER")
            _leaf(header, "messagereceiveridentifier", "PVDEID-RECEIVER")
            _date(header, "messagedate", newest.strftime("%Y%m%d%H%M%S") if newest else "20000101000000", "204")
            xf.write(header)
            for r in reports:
                xf.write(build_safetyreport(r))
    return buf.getvalue()
