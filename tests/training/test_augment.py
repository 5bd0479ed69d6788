"""Surrogate copies: every gold value replaced, offsets exact, form and context kept."""

from __future__ import annotations

from random import Random

from deid_core.corpus.document import Document, GoldSpan, KeepSpan
from deid_core.training.augment import surrogate_copies, surrogate_for, swap_surrogates

TEXT = "SEEN BY DR. HALVERSON ON 10/14/87 AT WESTBROOK. halverson aware. Call 410-555-1234. Age 92. INR 2.3"


def _doc() -> Document:
    spans = []
    for value, label in (("HALVERSON", "NAME"), ("10/14/87", "DATE"), ("WESTBROOK", "LOCATION"),
                         ("halverson", "NAME"), ("410-555-1234", "PHONE"), ("92", "AGE")):
        s = TEXT.index(value)
        spans.append(GoldSpan(s, s + len(value), label))
    k = TEXT.index("INR 2.3")
    return Document("n1", TEXT, spans, keep=[KeepSpan(k, k + 7, "LAB")])


def test_swap_replaces_values_and_keeps_offsets_exact() -> None:
    doc = _doc()
    out = swap_surrogates(doc, Random(1), doc_id="n1#swap1")
    assert out.doc_id == "n1#swap1" and len(out.spans) == len(doc.spans)
    old = [doc.text[s.start:s.end] for s in doc.spans]
    new = [out.text[s.start:s.end] for s in out.spans]
    assert all(a != b for a, b in zip(old, new, strict=True))
    assert [s.label for s in out.spans] == [s.label for s in doc.spans]
    # context is untouched: the text between spans is the same
    assert out.text.startswith("SEEN BY DR. ") and out.text.endswith("INR 2.3")
    assert out.text[out.keep[0].start:out.keep[0].end] == "INR 2.3"


def test_form_is_kept() -> None:
    out = swap_surrogates(_doc(), Random(2))
    name_upper, date, place, name_lower, phone, age = (out.text[s.start:s.end] for s in out.spans)
    assert name_upper.isupper() and place.isupper() and name_lower.islower()
    # one person keeps one surrogate within a note, in each occurrence's case
    assert name_upper.lower() == name_lower
    m, d, y = (int(x) for x in date.split("/"))
    assert 1 <= m <= 12 and 1 <= d <= 28 and len(date.split("/")[2]) == 2
    assert [len(x) for x in phone.split("-")] == [3, 3, 4]
    assert int(age) >= 90  # an age over 89 stays PHI-aged


def test_copies_are_reproducible_and_differ_from_each_other() -> None:
    a = list(surrogate_copies([_doc()], 2, seed=5))
    b = list(surrogate_copies([_doc()], 2, seed=5))
    assert [d.text for d in a] == [d.text for d in b]
    assert a[0].text != a[1].text and [d.doc_id for d in a] == ["n1#swap1", "n1#swap2"]


def test_surrogates_for_small_forms() -> None:
    rng = Random(0)
    initial = surrogate_for(rng, "W", "NAME")
    assert len(initial) == 1 and initial.isupper()
    acronym = surrogate_for(rng, "GH", "LOCATION")
    assert len(acronym) == 2 and acronym.isupper()
    assert surrogate_for(rng, "Mary's", "LOCATION").endswith("'s")
    young = surrogate_for(rng, "45", "AGE")
    assert 18 <= int(young) < 90
