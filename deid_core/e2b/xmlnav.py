"""Namespace-tolerant navigation of E2B element trees.

E2B(R3) instances are meant to live in ``urn:hl7-org:v3``, but real files
and vendor samples vary: a missing default namespace, a prefixed one, or an
R2 file with none at all. Everything here therefore matches elements and
attributes on their *local* names only. The helpers are deliberately tiny
(child lookup, a slash path, text and attribute access) so that the R2 and R3
extractors read like the implementation guides' element paths.

Comments, processing instructions and entity references are not elements;
the helpers skip them, so an unexpanded entity can never be mistaken for
structure.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

Element = etree._Element


def local(el: Element) -> str:
    """The local name of an element (``""`` for comments and other non-elements)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


def children(el: Element, name: str | None = None) -> Iterator[Element]:
    """Element children of ``el``, optionally only those with local name ``name``.

    ``{*}name`` is lxml's any-or-no-namespace wildcard, matched in C: the
    extractors call this hundreds of times per report.
    """
    if name is None:
        return el.iterchildren(etree.Element)
    return el.iterchildren(f"{{*}}{name}")


def has_children(el: Element) -> bool:
    """Whether ``el`` has element children (an unexpanded entity reference is not one)."""
    return any(isinstance(c.tag, str) for c in el)


def child(el: Element | None, name: str) -> Element | None:
    """The first element child called ``name``, or None."""
    if el is None:
        return None
    return next(children(el, name), None)


def find_all(el: Element | None, path: str) -> Iterator[Element]:
    """All elements reached from ``el`` by the slash-separated local names in ``path``.

    ``find_all(ie, "component/adverseEventAssessment")`` follows every
    ``component`` child, then every ``adverseEventAssessment`` child of each:
    repeating HL7 act relationships are the normal case, not the exception.
    """
    if el is None:
        return
    head, _, rest = path.partition("/")
    for c in children(el, head):
        if rest:
            yield from find_all(c, rest)
        else:
            yield c


def find(el: Element | None, path: str) -> Element | None:
    """The first element reached by ``path`` (see :func:`find_all`), or None."""
    return next(find_all(el, path), None)


def attr(el: Element | None, name: str) -> str | None:
    """An attribute by local name (so ``xsi:type`` is ``attr(el, "type")``), or None."""
    if el is None:
        return None
    value = el.get(name)
    if value is not None:
        return value
    suffix = "}" + name
    for key in el.keys():
        if key.endswith(suffix):
            return el.get(key)
    return None


def value_attr(el: Element | None) -> str | None:
    """The stripped ``value`` attribute, or None when absent or blank."""
    v = attr(el, "value")
    if v is None:
        return None
    v = v.strip()
    return v or None


def text_content(el: Element | None) -> str | None:
    """All character content of ``el`` as written, or None when it is blank.

    Unexpanded entity references come out as their literal ``&name;`` (the
    parser never resolves them), and base64 payloads (``representation="B64"``)
    are skipped: they are attachments, not text.
    """
    if el is None or (attr(el, "representation") or "").upper() == "B64":
        return None
    text = "".join(el.itertext())
    return text if text.strip() else None


def stripped_text(el: Element | None) -> str | None:
    """The content of ``el`` stripped of surrounding white space, or None when empty."""
    text = text_content(el)
    return text.strip() if text is not None else None


def code_of(el: Element | None) -> tuple[str | None, str | None]:
    """``(code, codeSystem)`` of the ``code`` child of ``el`` (Nones when absent)."""
    c = child(el, "code")
    return attr(c, "code"), attr(c, "codeSystem")
