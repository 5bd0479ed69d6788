"""Extract one E2B(R2) report from an ``ichicsr`` ``safetyreport`` element.

The walk is generic: groups (``primarysource``, ``reaction``, ``drug``, ...)
open a path segment, and leaves are classified by the tables of
:mod:`.r2_fields`. Anything unknown is walked through (an unknown element
with children is a group named after itself) and its leaves are fields only
if the tables recognise them, which is how the caAERS dialect and regional
extensions are tolerated without special cases.

Paths: report-level leaves are ``report.<name>`` (``report.transmission_date``),
patient-level groups are top-level (``reaction[0].start_date``,
``drug[1].end_date``, ``medical_history[2].start_date``), roles are
``reporter[r].``, ``sender.``, ``receiver.`` and, for caAERS, ``physician.``,
``recipient.`` and ``submitter.`` (the sender block inside ``summary``).

What is extracted (the full tables, with DTD references, are in
:mod:`.r2_fields`):

* text -- ``narrative``, ``reporter_comment``, ``sender_comment``,
  ``sender_diagnosis``, ``tests_results_text``, ``medical_history_text[n]``,
  ``medical_history_comment[r]``, ``parent_medical_history_text[n]``,
  ``parent_medical_history_comment[r]``, ``reaction_as_reported[i]``,
  ``test_result[r]`` (non-numeric only), ``drug_dosage_text[k]``,
  ``drug_additional_info[k]``, ``literature_reference[r]``; caAERS
  ``narrative_extended`` and ``attribution_factor[i]``;
* NAME -- ``patient.initials``, ``parent.initials`` and every role's
  ``given_name`` / ``middle_name`` / ``family_name``;
* ID -- ``patient.gp_record_number``, ``.specialist_record_number``,
  ``.hospital_record_number``, ``.investigation_number``;
* AGE -- ``patient.age``, ``parent.age`` (the number; the unit is its own
  element);
* LOCATION -- a role's ``street``, ``city``, ``state``, ``postcode`` and,
  for reporters (and caAERS physicians), ``organization`` and
  ``department``;
* PHONE / EMAIL -- a role's ``telephone``, ``fax`` / ``email``;
* DATE -- every date element, value as written: ``report.transmission_date``,
  ``report.first_received_date``, ``report.most_recent_info_date``,
  ``patient.birth_date``, ``patient.death_date``,
  ``patient.last_menstrual_date``, ``reaction[i].start_date`` /
  ``end_date``, ``drug[k].start_date`` / ``end_date``, ``test[r].date``,
  ``medical_history[r].*``, ``drug_history[r].*``, the parent's likewise,
  and unknown ones as ``<owner>.<element name>``.

The report's own ids (``safetyreportid``, ``companynumb``, linked and
duplicate report numbers) are identity metadata, not PHI fields; the
``...dateformat`` companions are ignored (the value is kept as written).
"""

from __future__ import annotations

from dataclasses import dataclass

from deid_core.e2b import r2_fields as T
from deid_core.e2b.collect import FieldCollector
from deid_core.e2b.errors import E2BParseError
from deid_core.e2b.model import Report
from deid_core.e2b.xmlnav import (
    Element,
    child,
    children,
    has_children,
    local,
    stripped_text,
    text_content,
)

_CASE_ID_TAGS = ("worldwideuniqcaseidentificationnumber", "authoritynumb", "companynumb")
"""Where the worldwide unique case id may be, in order of preference: an element named
after it (used by some R2 profiles, absent from the ICH DTD 2.1), then the DTD's A.1.10.1
regulatory authority's and A.1.10.2 other sender's case report numbers."""


@dataclass(frozen=True, slots=True)
class _Owner:
    """Where a leaf sits: its owner's path, index (for indexed groups) and role."""

    path: str
    index: int | None = None
    role: str | None = None


def extract_r2(report: Element) -> Report:
    """The report in one ``safetyreport`` element (raises :class:`E2BParseError`)."""
    report_id = _leaf(report, "safetyreportid")
    case_id = next((v for v in (_leaf(report, t) for t in _CASE_ID_TAGS) if v), None) or report_id
    if not case_id:
        raise E2BParseError("report without a case id")
    out = FieldCollector()
    _walk(report, _Owner(""), out)
    return Report(
        case_id=case_id,
        version=_leaf(report, "safetyreportversion") or "1",
        format="R2",
        report_id=report_id or case_id,
        received_date=_leaf(report, "receiptdate") or _leaf(report, "receivedate"),
        sender=_sender_name(report),
        text_fields=out.text_fields,
        structured_fields=out.structured_fields,
        country=_country(report),
    )


def _country(report: Element) -> str | None:
    """A.1.2 ``occurcountry``, else A.1.1 ``primarysourcecountry``, else the first reporter's."""
    for name in ("occurcountry", "primarysourcecountry"):
        found = _leaf(report, name)
        if found:
            return found.upper()
    for el in report.iter("{*}reportercountry"):
        found = stripped_text(el)
        if found:
            return found.upper()
    return None


def _leaf(el: Element, name: str) -> str | None:
    return stripped_text(child(el, name))


def _sender_name(report: Element) -> str | None:
    """A.3.1.2 ``sender/senderorganization`` (or a dialect's ``sendercompany``), anywhere."""
    sender = child(report, "sender")
    for name in ("senderorganization", "sendercompany"):
        found = _leaf(sender, name) if sender is not None else None
        if found:
            return found
    for el in report.iter("{*}senderorganization", "{*}sendercompany"):
        found = stripped_text(el)
        if found:
            return found
    return None


def _walk(el: Element, owner: _Owner, out: FieldCollector) -> None:
    for c in children(el):
        tag = local(c).lower()
        group = T.GROUPS.get(tag)
        if group is not None or has_children(c):
            _walk(c, _enter(tag, group, owner, out), out)
        else:
            _classify(tag, c, owner, out)


def _enter(tag: str, group: T.Group | None, owner: _Owner, out: FieldCollector) -> _Owner:
    """The owner for the children of group element ``tag``."""
    if group is None:
        group = T.Group(tag, True)
    if group.segment is None:
        return owner
    base = group.segment if owner.path in T.TOP_LEVEL_OWNERS else f"{owner.path}.{group.segment}"
    if not group.indexed:
        return _Owner(base, None, group.role)
    index = out.next_index(base)
    return _Owner(f"{base}[{index}]", index, group.role)


def _classify(tag: str, el: Element, owner: _Owner, out: FieldCollector) -> None:
    text_rule = T.TEXT.get(tag)
    if text_rule is not None:
        _text(text_rule, tag, el, owner, out)
        return
    identity = T.IDENTITY.get(tag)
    if identity is not None:
        out.structured(identity[0], identity[1], stripped_text(el))
        return
    contact = T.contact_field(tag)
    if contact is not None:
        role, field, label = contact
        out.structured(f"{_role_path(role, owner)}.{field}", label, stripped_text(el))
        return
    if T.is_date_tag(tag):
        name = T.DATE_NAMES.get(tag, tag)
        out.structured(f"{owner.path or 'report'}.{name}", "DATE", stripped_text(el))


def _text(rule: T.Text, tag: str, el: Element, owner: _Owner, out: FieldCollector) -> None:
    text = text_content(el)
    if text is None or (tag == "testresult" and T.is_numeric(text)):
        return
    if rule.per is None:
        path = rule.kind
    else:
        index = owner.index if rule.per == "owner" and owner.index is not None else out.next_index(rule.kind)
        path = f"{rule.kind}[{index}]"
    out.text(path, text)


def _role_path(role: str, owner: _Owner) -> str:
    """Whose contact element this is: the enclosing role group, else the role itself.

    caAERS writes the reporter's e-mail and phone next to ``primarysource``
    rather than in it (they are ``reporter[0]``'s) and repeats the sender's
    person in ``summary`` (called ``submitter`` there, as caAERS does).
    """
    if owner.role == role:
        return owner.path
    if owner.path == "summary" and role == "sender":
        return "submitter"
    if role == "reporter":
        return "reporter[0]"
    return role
