"""Reading the HL7 v3 building blocks that E2B(R3) repeats everywhere.

Names (``name/given|family``), addresses (``addr/...``), telecom URIs
(``telecom/@value``), time stamps and intervals (``effectiveTime``,
``low``/``high``) and coded acts (``code/@code``) look the same whether they
belong to the patient, a reporter or the sender. Reading them once here keeps
the section extractors in :mod:`.r3` and :mod:`.r3_patient` down to *where*
the parts are, with *how* to read them in one place.

:class:`R3Fields` wraps the report's :class:`~.collect.FieldCollector` and
also remembers every date element it has given a semantic path, so that the
final sweep in :mod:`.r3` can give the remaining date values (the guide
allows dates in places no extractor knows) a generic path instead of losing
them.
"""

from __future__ import annotations

import re

from deid_core.e2b.collect import FieldCollector
from deid_core.e2b.model import Label
from deid_core.e2b.xmlnav import (
    Element,
    attr,
    child,
    children,
    local,
    stripped_text,
    text_content,
    value_attr,
)

_TS = re.compile(r"\d{4}")
"""An HL7 TS value starts with the four digits of the year."""

_TIME_ELEMENTS = frozenset({"creationTime", "availabilityTime", "birthTime", "deceasedTime",
                            "effectiveTime", "time"})
_INTERVAL_PARTS = frozenset({"low", "high", "center"})
_INTERVAL_PARENTS = frozenset({"effectiveTime", "comp"})
_TS_TYPES = frozenset({"TS", "IVL_TS"})

_NAME_PARTS = {"family": "family_name"}
_ADDRESS_PARTS = {
    "streetAddressLine": "street", "streetName": "street", "houseNumber": "street",
    "additionalLocator": "street", "city": "city", "county": "county", "state": "state",
    "postalCode": "postcode",
}
_TELECOM_SCHEMES: dict[str, tuple[str, Label]] = {
    "tel": ("telephone", "PHONE"), "fax": ("fax", "PHONE"), "mailto": ("email", "EMAIL"),
}


def is_code(el: Element | None, code: str, system: str | None = None) -> bool:
    """Whether ``el``'s ``code`` child is ``code`` (in ``system``, when the file names one).

    A missing ``codeSystem`` is accepted because some senders omit it; a
    *different* one is not, since FDA regional codes reuse small numbers
    (FDA's "required intervention" is code 7, like ICH's body weight).
    """
    c = child(el, "code")
    if c is None or attr(c, "code") != code:
        return False
    cs = attr(c, "codeSystem")
    return system is None or cs is None or cs == system


def xsi_type(el: Element | None) -> str | None:
    """The ``xsi:type`` of an element (matched on the local name ``type``)."""
    return attr(el, "type")


def is_date_node(el: Element) -> bool:
    """Whether ``el`` carries an HL7 time stamp in its ``value`` attribute.

    Time elements (``effectiveTime``, ``birthTime``, ...), interval bounds
    inside an ``effectiveTime`` or its ``comp`` parts, and ``value`` elements
    typed TS. Physical quantities also use ``low``/``high`` (a test result
    range) but always have a ``unit`` and sit outside ``effectiveTime``.
    """
    v = value_attr(el)
    if v is None or not _TS.match(v):
        return False
    name = local(el)
    if name in _TIME_ELEMENTS:
        return True
    if name in _INTERVAL_PARTS:
        parent = el.getparent()
        if attr(el, "unit") is not None or parent is None:
            return False
        return local(parent) in _INTERVAL_PARENTS or xsi_type(parent) in _TS_TYPES
    if name == "value":
        return xsi_type(el) in _TS_TYPES
    return False


class R3Fields:
    """The report's field collector plus the set of date elements already placed."""

    def __init__(self) -> None:
        self.out = FieldCollector()
        self.claimed: set[Element] = set()

    # -- plain values -------------------------------------------------------------
    def text(self, path: str, el: Element | None) -> None:
        """A free-text field from the content of ``el``."""
        self.out.text(path, text_content(el))

    def value(self, path: str, label: Label, value: str | None) -> None:
        self.out.structured(path, label, value)

    # -- dates ----------------------------------------------------------------------
    def date(self, path: str, el: Element | None) -> None:
        """A DATE field from ``el/@value`` (when it is a time stamp); claims ``el``."""
        if el is None or el in self.claimed or not is_date_node(el):
            return
        self.claimed.add(el)
        self.out.structured(path, "DATE", value_attr(el))

    def interval(self, prefix: str, eff: Element | None) -> None:
        """``prefix.date``, ``prefix.start_date`` and ``prefix.end_date`` of a TS or IVL_TS.

        ``SXPR_TS`` dosage schedules nest their intervals in ``comp`` parts;
        those are read too (a periodic ``comp`` holds no dates, only a period).
        """
        if eff is None:
            return
        self.date(f"{prefix}.date", eff)
        for part, name in (("low", "start_date"), ("high", "end_date"), ("center", "date")):
            for p in children(eff, part):
                self.date(f"{prefix}.{name}", p)
        for comp in children(eff, "comp"):
            self.interval(prefix, comp)

    # -- people ---------------------------------------------------------------------
    def person_name(self, prefix: str, name: Element | None, *, whole: str = "name") -> None:
        """Name parts as NAME fields: first ``given`` is the given name, later ones middle names.

        E2B(R3) puts the middle name (C.2.r.1.3, C.3.3.4) in a second
        ``given``. Titles (``prefix``) and suffixes are not identifying and are
        left alone. A name written as plain text (the patient's D.1 "name or
        initials") becomes one field, ``prefix.<whole>``.
        """
        if name is None or attr(name, "nullFlavor") is not None:
            return
        parts = list(children(name))
        if not parts:
            self.value(f"{prefix}.{whole}", "NAME", stripped_text(name))
            return
        givens = 0
        for part in parts:
            kind = local(part)
            if kind == "given":
                field = "given_name" if givens == 0 else "middle_name"
                givens += 1
            elif kind in _NAME_PARTS:
                field = _NAME_PARTS[kind]
            else:
                continue
            self.value(f"{prefix}.{field}", "NAME", stripped_text(part))
        loose = (name.text or "").strip()
        if loose:
            self.value(f"{prefix}.{whole}", "NAME", loose)

    def address(self, prefix: str, addr: Element | None) -> None:
        """Street, city, county, state and postcode as LOCATION (country codes are kept)."""
        if addr is None:
            return
        for part in children(addr):
            field = _ADDRESS_PARTS.get(local(part))
            if field is not None:
                self.value(f"{prefix}.{field}", "LOCATION", stripped_text(part))
        loose = (addr.text or "").strip()
        if loose:
            self.value(f"{prefix}.address", "LOCATION", loose)

    def telecoms(self, prefix: str, holder: Element | None) -> None:
        """``telecom/@value`` URIs as PHONE (tel:, fax:) or EMAIL (mailto:), scheme removed.

        The scheme is packaging, not identity; a writer re-adds it around the
        replacement. A value without a scheme is an e-mail when it has an
        ``@`` and a telephone number otherwise; one with another scheme is
        ``prefix.telecom`` (OTHER), kept whole.
        """
        if holder is None:
            return
        for tc in children(holder, "telecom"):
            raw = value_attr(tc)
            if raw is None:
                continue
            scheme, sep, rest = raw.partition(":")
            known = _TELECOM_SCHEMES.get(scheme.lower()) if sep else None
            if known is not None:
                field, label = known
                self.value(f"{prefix}.{field}", label, rest)
            elif "@" in raw:
                self.value(f"{prefix}.email", "EMAIL", raw)
            elif sep:  # another scheme (http:, x-...): identifying, of no known kind
                self.value(f"{prefix}.telecom", "OTHER", raw)
            else:
                self.value(f"{prefix}.telephone", "PHONE", raw)
