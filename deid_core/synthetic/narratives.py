"""Deterministic synthetic ICSR narratives with gold PHI spans.

The project may not ship real case narratives, so ``make run`` de-identifies
documents generated here, and later training-data tools reuse the same
generator. Three properties matter more than realism:

* **Exact spans.** Text is built piece by piece (see :mod:`.builder`); no
  offset is ever found by searching the finished text.
* **Determinism.** Document ``i`` of seed ``s`` depends only on ``(s, i)``:
  every random choice flows from ``random.Random`` instances seeded with a
  string derived from them (string seeds are hashed with SHA-512, so they do
  not depend on ``PYTHONHASHSEED``), and Faker is re-seeded per document.
  The same ``(n, seed)`` gives byte-identical output in any process, and the
  first ``k`` documents do not depend on ``n``.
* **Coverage.** Templates are dealt in shuffled rounds, so any run of at
  least ``len(TEMPLATES)`` documents uses every template.

Only process-local state is shared (cached Faker instances and lexicons);
generation is safe to interleave across generators in one thread but not to
run from several threads at once, because Faker instances are re-seeded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from random import Random
from typing import TYPE_CHECKING, Any

from deid_core.synthetic.builder import BuiltText, NarrativeBuilder
from deid_core.synthetic.case import Doc, sample_case
from deid_core.synthetic.phi import DATE_STYLES, LOCALE_WEIGHTS, LOCALES, PhiFactory, faker_for
from deid_core.synthetic.templates import TEMPLATES, Template

if TYPE_CHECKING:
    from deid_core.corpus.document import Document

GENERATOR = "deid_core.synthetic.narratives"
GENERATOR_VERSION = 2
"""Bump when output for a given seed changes, so stale samples are recognisable.

2: lot numbers are LOT keep spans, no longer ID spans."""

_PHI_DENSITIES = (0.1, 0.35, 0.6, 0.85, 1.0)
_RICHNESS = (0.05, 0.3, 0.55, 0.8, 0.95)
_FULL_DATE_STYLES = tuple(s for s in DATE_STYLES if s not in ("mon_yyyy", "month_yyyy", "year"))
_SENTENCE_SEPS = (" ", " ", " ", "\n", "  ")

#: Keep label (`deid_core.corpus.document.KEEP_LABELS`) of each clinical kind
#: the templates record. Most are the same word; ONSET (time to onset, "two
#: days after the first dose") is a DURATION. LOT is a product's lot or batch
#: number ("Lot no. EK9231"), never PHI.
#: A new kind must be added here (to its closest keep label): `keep_spans`
#: refuses kinds it does not know rather than guess.
CLINICAL_KEEP_LABELS: dict[str, str] = {
    "DRUG": "DRUG",
    "DOSE": "DOSE",
    "LAB": "LAB",
    "ONSET": "DURATION",
    "REACTION": "REACTION",
    "LOT": "LOT",
}


@dataclass(slots=True)
class SyntheticNarrative:
    """One generated narrative.

    ``spans`` are ``(start, end, label)`` with 0-based, end-exclusive offsets
    into ``text``. ``meta`` says how the document was made (style, template,
    seed, locale, ...), keeps the i2b2 subtype of each span in
    ``meta["subtypes"]`` and the offsets of clinical content that must
    survive de-identification in ``meta["clinical"]``.
    """

    doc_id: str
    text: str
    spans: list[tuple[int, int, str]]
    meta: dict[str, Any] = field(default_factory=dict)

    def keep_spans(self) -> list[tuple[int, int, str]]:
        """``meta["clinical"]`` as ``(start, end, keep label)``, via :data:`CLINICAL_KEEP_LABELS`."""
        out: list[tuple[int, int, str]] = []
        for i, c in enumerate(self.meta.get("clinical") or ()):
            label = CLINICAL_KEEP_LABELS.get(c["kind"])
            if label is None:
                raise ValueError(f"clinical span {i} has a kind without a keep label; extend CLINICAL_KEEP_LABELS")
            out.append((c["start"], c["end"], label))
        return out

    def to_json_dict(self) -> dict[str, Any]:
        """The project's JSONL record: ``{"doc_id", "text", "spans", "keep", "meta"}``."""
        return {
            "doc_id": self.doc_id,
            "text": self.text,
            "spans": [{"start": s, "end": e, "label": label} for s, e, label in self.spans],
            "keep": [{"start": s, "end": e, "label": label} for s, e, label in self.keep_spans()],
            "meta": self.meta,
        }

    def to_document(self) -> Document:
        """The corpus form used by the de-identifiers (subtypes and keep spans preserved)."""
        from deid_core.corpus.document import Document, GoldSpan, KeepSpan

        subtypes = self.meta.get("subtypes") or [None] * len(self.spans)
        spans = [GoldSpan(s, e, label, sub) for (s, e, label), sub in zip(self.spans, subtypes)]
        keep = [KeepSpan(s, e, label) for s, e, label in self.keep_spans()]
        return Document(doc_id=self.doc_id, text=self.text, spans=spans, meta=dict(self.meta), keep=keep)


def _rng(seed: int, index: int, purpose: str) -> Random:
    """A generator private to one document and one purpose.

    Separate purposes (schedule vs. content) keep the template schedule
    stable when the content code changes, and vice versa.
    """
    return Random(f"{GENERATOR}/v{GENERATOR_VERSION}/{seed}/{index}/{purpose}")


def template_ids() -> tuple[str, ...]:
    """Registered template ids in a fixed order (the scheduling order's basis)."""
    return tuple(sorted(TEMPLATES))


def template_for(seed: int, index: int) -> Template:
    """The template of document ``index``: round ``index // T`` is a shuffle of all T."""
    ids = template_ids()
    rounds, pos = divmod(index, len(ids))
    order = _rng(seed, rounds, "schedule").sample(ids, len(ids))
    return TEMPLATES[order[pos]]


def _pick_locale(rng: Random, tpl: Template) -> str:
    allowed = tpl.locales or tuple(LOCALE_WEIGHTS)
    weights = [LOCALE_WEIGHTS[loc] for loc in allowed]
    return rng.choices(allowed, weights=weights, k=1)[0]


def _pick_casing(rng: Random, tpl: Template) -> str:
    """Most documents as written; some shouted in capitals, some consumer mail in lower case."""
    if tpl.casing:
        return tpl.casing
    r = rng.random()
    if r < 0.07:
        return "upper"
    if tpl.style == "consumer" and r < 0.22:
        return "lower"
    return "as_is"


_CASE_FUNCS = {"as_is": lambda s: s, "upper": str.upper, "lower": str.lower}


def _make_doc(rng: Random, tpl: Template) -> tuple[Doc, str]:
    """Draw the locale, the case and the rendering knobs for one document."""
    locale = _pick_locale(rng, tpl)
    profile = LOCALES[locale]
    fake = faker_for(locale)
    fake.seed_instance(rng.getrandbits(64))
    factory = PhiFactory(rng=rng, fake=fake, profile=profile)
    case = sample_case(factory)
    date_style = rng.choice(profile.date_styles if rng.random() < 0.85 else _FULL_DATE_STYLES)
    doc = Doc(case=case, phi=factory, rng=rng, phi_density=rng.choice(_PHI_DENSITIES),
              richness=rng.choice(_RICHNESS), date_style=date_style)
    return doc, locale


def _meta(seed: int, index: int, tpl: Template, doc: Doc, locale: str, casing: str,
          built: BuiltText) -> dict[str, Any]:
    return {
        "generator": GENERATOR,
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "index": index,
        "style": tpl.style,
        "template": tpl.id,
        "locale": locale,
        "casing": casing,
        "phi_density": doc.phi_density,
        "richness": doc.richness,
        "date_style": doc.date_style,
        "sentences": built.sentences,
        "subtypes": built.subtypes,
        "clinical": [{"start": s, "end": e, "kind": k} for s, e, k in built.clinical],
    }


def generate_one(seed: int, index: int, length: int | None = None) -> SyntheticNarrative:
    """Document ``index`` of the stream for ``seed`` (independent of the others).

    With ``length``, the document is fitted to at most that many characters
    (:func:`fit_length`): cut at white space, or extended with more of the
    seed's narratives; without it, the output is what it always was.
    """
    doc = _generate(seed, index)
    return doc if length is None else fit_length(doc, length, seed=seed, index=index)


def _generate(seed: int, index: int) -> SyntheticNarrative:
    tpl = template_for(seed, index)
    rng = _rng(seed, index, "content")
    doc, locale = _make_doc(rng, tpl)
    casing = _pick_casing(rng, tpl)
    builder = NarrativeBuilder(casing=_CASE_FUNCS[casing], sentence_sep=rng.choice(_SENTENCE_SEPS))
    tpl.render(builder, doc)
    built = builder.build()
    return SyntheticNarrative(
        doc_id=f"synth-{seed}-{index:06d}",
        text=built.text,
        spans=built.spans,
        meta=_meta(seed, index, tpl, doc, locale, casing, built),
    )


EXTENSION_POOL = 512
"""Distinct narratives per seed that long documents are extended with (built once per process)."""
_EXTENSION_BASE = 10**12
"""Indices of the extension narratives start here, far from any real stream's."""
_PARAGRAPH = "\n\n"


@lru_cache(maxsize=4)
def _extension_pool(seed: int) -> tuple[SyntheticNarrative, ...]:
    return tuple(_generate(seed, _EXTENSION_BASE + k) for k in range(EXTENSION_POOL))


def fit_length(doc: SyntheticNarrative, length: int, *, seed: int, index: int) -> SyntheticNarrative:
    """``doc`` cut or extended to at most ``length`` characters, spans kept exact.

    A longer document is cut at white space outside every span and clinical
    value (:func:`deid_core.synthetic.lengths.cut_point`), so what stays
    annotated is annotated whole. A shorter one is followed, paragraph after
    paragraph, by narratives of the seed's extension pool (other templates,
    people and dates, so the de-identifier has PHI to find all along), in an
    order drawn from ``(seed, index)``, and then cut. A length below the
    first word keeps that word. ``meta["fitted"]`` records the target, the
    pieces used and the length before the cut.
    """
    from deid_core.synthetic.lengths import cut_point

    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be a positive integer, got {length!r}")
    pieces = [doc]
    total = len(doc.text)
    if total < length:
        pool = _extension_pool(seed)
        rng = _rng(seed, index, "extend")
        while total < length:
            piece = pool[rng.randrange(len(pool))]
            pieces.append(piece)
            total += len(_PARAGRAPH) + len(piece.text)
    texts: list[str] = []
    spans: list[tuple[int, int, str]] = []
    subtypes: list[str | None] = []
    clinical: list[dict[str, Any]] = []
    sentences = 0
    offset = 0
    for piece in pieces:
        if texts:
            texts.append(_PARAGRAPH)
            offset += len(_PARAGRAPH)
        texts.append(piece.text)
        spans += [(s + offset, e + offset, label) for s, e, label in piece.spans]
        subtypes += piece.meta.get("subtypes") or [None] * len(piece.spans)
        clinical += [{**c, "start": c["start"] + offset, "end": c["end"] + offset}
                     for c in piece.meta.get("clinical") or ()]
        sentences += piece.meta.get("sentences", 0)
        offset += len(piece.text)
    text = "".join(texts)
    cut = cut_point(text, length, [(s, e) for s, e, _ in spans] + [(c["start"], c["end"]) for c in clinical])
    text = text[:cut].rstrip()
    keep = [i for i, (_, e, _) in enumerate(spans) if e <= len(text)]
    meta = dict(doc.meta)
    meta.update(
        subtypes=[subtypes[i] for i in keep],
        clinical=[c for c in clinical if c["end"] <= len(text)],
        sentences=sentences,
        fitted={"target": length, "pieces": len(pieces), "before_cut": offset},
    )
    return SyntheticNarrative(doc_id=doc.doc_id, text=text, spans=[spans[i] for i in keep], meta=meta)


def generate_narratives(n: int, seed: int = 0) -> Iterator[SyntheticNarrative]:
    """Yield ``n`` synthetic narratives, deterministically for ``(n, seed)``.

    Lazy, so a training-data job can stream millions without holding them;
    arguments are checked at call time, not at the first ``next()``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return (generate_one(seed, index) for index in range(n))
