"""Apply a policy profile to one document's masked tokens.

The engine is where masking becomes something a safety reviewer can read:
dates move by the case's secret offset (so time-to-onset survives), ages
over the limit become "[AGE>89]", names and places become keyed
pseudonyms, phone numbers and IDs keep their shape.

Per document it first looks at all of the document's entities together:
its unambiguous numeric dates decide how the ambiguous ones are read
(day/month order), its explicit years give year-less dates ("8/14") a year,
and every original string is collected so that no surrogate can coincide
with a real name or place of the same document.

Fail closed: an entity whose replacement fails is tagged; a document whose
masked tokens are inconsistent is tagged token by token. Errors are counted
and logged by type only (their text could quote PHI).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import regex as re

from deid_core.config import DeidConfig
from deid_core.render import replacement as tag_for, splice
from deid_core.replace.e2b_dates import is_e2b_date, shift_e2b_date
from deid_core.replace.dates import document_order, parse_date, reference_year_of, shift_date_text
from deid_core.replace.entities import Entity, build_entities
from deid_core.replace.keys import MissingKeyError, SecretKey
from deid_core.replace.places import place_kind
from deid_core.replace.policy import Action, Policy
from deid_core.replace.pseudonyms import Pseudonymizer, SurrogatePools
from deid_core.results import DocumentResult, MaskedToken, Replacement, mask_everything

log = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W\d_]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
#: Above this no number is an age in years (the oldest verified human lived 122).
MAX_PLAUSIBLE_AGE = 125


def case_offset_days(key: SecretKey, case_id: str, min_days: int, max_days: int) -> int:
    """The case's date offset: |offset| in [min_days, max_days], sign keyed too, never 0."""
    v = key.integer("date-offset", case_id)
    magnitude = min_days + v % (max_days - min_days + 1)
    return -magnitude if (v >> 128) & 1 else magnitude


class Replacer:
    """A policy, a key and the surrogate pools, applied document by document."""

    def __init__(
        self,
        policy: Policy,
        cfg: DeidConfig,
        key: SecretKey | None,
        pools: SurrogatePools | None = None,
    ) -> None:
        if policy.needs_key and key is None:
            raise MissingKeyError(
                f"policy {policy.name!r} shifts dates or draws pseudonyms and needs a secret key"
            )
        self.policy = policy
        self.cfg = cfg
        self.key = key
        self.pools = (pools or SurrogatePools.load()) if key is not None else None
        self._pseudo = Pseudonymizer(key, self.pools) if key is not None and self.pools is not None else None
        self.age_limit = cfg.replacement.age_bucket_from

    @property
    def version(self) -> str:
        """Policy, key fingerprint and surrogate pools: what decides the output besides the text."""
        if self.key is None or self.pools is None:
            return f"{self.policy.version}+nokey"
        return f"{self.policy.version}+key-{self.key.fingerprint}+pools-{self.pools.fingerprint}"

    def offset_days(self, case_id: str) -> int:
        assert self.key is not None
        ds = self.cfg.replacement.date_shift
        return case_offset_days(self.key, case_id, ds.min_days, ds.max_days)

    # ------------------------------------------------------------------
    def replace(self, text: str, masked: Sequence[MaskedToken], case_id: str) -> DocumentResult:
        try:
            entities = build_entities(text, masked)
        except ValueError:
            # inconsistent detector output: tag every token of the document
            log.error("inconsistent masked spans; document tagged token by token")  # phi-safe
            return self.replace_fully_masked(text, case_id)
        return self._apply(text, entities, case_id)

    def replace_fully_masked(self, text: str, case_id: str) -> DocumentResult:
        """Fail closed: every token tagged as of unknown category, counted as one failure."""
        result = self._apply(text, build_entities(text, mask_everything(text)), case_id)
        result.failures += 1
        return result

    def _apply(self, text: str, entities: list[Entity], case_id: str) -> DocumentResult:
        entities = [_with_phone_prefix(text, e) for e in entities]
        ctx = _DocumentContext.of(text, entities, self.cfg.replacement.default_date_order)
        out: list[Replacement] = []
        kept: Counter[str] = Counter()
        failures = 0
        for e in entities:
            original = text[e.start : e.end]
            try:
                new = self._replacement(e, original, case_id, ctx)
            except MissingKeyError:
                raise
            except Exception as exc:  # noqa: BLE001 - fail closed per entity
                failures += 1
                log.error("replacement failed (%s); entity tagged", type(exc).__name__)  # phi-safe
                new = tag_for(e.label, self.cfg.output)
            if new is None:
                kept[e.label] += 1
                continue
            out.append(Replacement(e.start, e.end, e.label, new))
        return DocumentResult(_render(text, out), out, kept, failures)

    def replace_value(self, value: str, label: str, case_id: str) -> str | None:
        """A structured field (birth date, reporter name, telephone) as one entity of `label`.

        Returns the replacement, or None when the policy keeps the value.
        E2B date values ("20140112") move by the same per-case offset as
        the narrative's dates. Failures are tagged (fail closed).
        """
        if not value.strip():
            return None
        try:
            if label == "DATE" and is_e2b_date(value) and self.policy.rule("DATE").action is Action.shift:
                if self.policy.rule("DATE").keep_year_only and len(value.strip()) == 4:
                    return None
                shifted = shift_e2b_date(value, self.offset_days(case_id))
                return shifted if shifted is not None else tag_for("DATE", self.cfg.output)
            entity = Entity(0, len(value), label, 1.0, ((0, len(value)),), True)
            ctx = _DocumentContext.of(value, [entity], self.cfg.replacement.default_date_order)
            return self._replacement(entity, value, case_id, ctx)
        except MissingKeyError:
            raise
        except Exception as exc:  # noqa: BLE001 - fail closed
            log.error("structured value replacement failed (%s); tagged", type(exc).__name__)  # phi-safe
            return tag_for(label, self.cfg.output)

    def _replacement(self, e: Entity, original: str, case_id: str, ctx: _DocumentContext) -> str | None:
        """The text for one entity, or None to keep it."""
        rule = self.policy.rule(e.label)
        action = rule.action
        if action is Action.keep:
            return None
        if action is Action.tag:
            return tag_for(e.label, self.cfg.output)
        if action is Action.bucket:
            return self._age(original, rule.keep_below_limit)
        pseudo = self._pseudo
        if pseudo is None:  # needs_key was checked at construction; defensive
            raise MissingKeyError("no key")
        if action is Action.shift:
            if not e.detected and not any(ch.isalpha() for ch in original):
                # digits the network alone calls a date ("2/10" of a pain score): a
                # shifted value would read as a real clinical number
                return tag_for("DATE", self.cfg.output)
            parsed = parse_date(original, ctx.order, reference_year=ctx.year)
            if rule.keep_year_only and parsed is not None and _year_only(parsed):
                return None
            shifted = shift_date_text(original, self.offset_days(case_id), ctx.order, reference_year=ctx.year)
            return shifted if shifted is not None else tag_for("DATE", self.cfg.output)
        if action is Action.pseudonym:
            if e.label == "LOCATION":
                if rule.keep_kinds and place_kind(original) in rule.keep_kinds:
                    return None
                return pseudo.location_words(original, case_id, avoid=ctx.originals)
            if any(ch.isdigit() for ch in original):
                return tag_for(e.label, self.cfg.output)
            return _WORD.sub(lambda m: pseudo.name_word(m.group(), case_id, avoid=ctx.words), original)
        if action is Action.surrogate:
            if not e.detected or not any(ch.isalnum() for ch in original):
                # format-preserving digits only where a detector saw the shape: a
                # lab value the network guessed to be an ID must not turn into a
                # plausible but false number
                return tag_for(e.label, self.cfg.output)
            if e.label == "PHONE":
                if not any(ch.isdigit() for ch in original):
                    # the network alone may call a word a phone number ("KRISSY"): no digits to keep
                    # the shape of, so it is tagged, not counted as a failed replacement
                    return tag_for(e.label, self.cfg.output)
                return pseudo.phone(original, case_id, avoid=ctx.originals)
            if e.label == "EMAIL":
                return pseudo.email(original, case_id, avoid=ctx.originals)
            return pseudo.digits_and_letters(original, case_id, purpose=e.label, avoid=ctx.originals)
        raise ValueError("unsupported action")

    def _age(self, original: str, keep_below: bool) -> str | None:
        m = _NUMBER.search(original)
        if m is None:
            return tag_for("AGE", self.cfg.output)
        value = float(m.group().replace(",", "."))
        if value > MAX_PLAUSIBLE_AGE:
            return tag_for("AGE", self.cfg.output)  # not an age: no bucket that claims one
        if value >= self.age_limit:
            bucket = f"[AGE>{self.age_limit - 1}]"
            return original[: m.start()] + bucket + original[m.end() :]
        return None if keep_below else tag_for("AGE", self.cfg.output)


@dataclass(frozen=True)
class _DocumentContext:
    order: str
    year: int | None
    #: casefolded original entity texts and words: no surrogate may equal one
    originals: frozenset[str]
    words: frozenset[str]

    @classmethod
    def of(cls, text: str, entities: Sequence[Entity], default_order: str) -> _DocumentContext:
        dates = [text[e.start : e.end] for e in entities if e.label == "DATE"]
        order = document_order(dates, default_order)  # type: ignore[arg-type]
        originals = {text[e.start : e.end].casefold() for e in entities}
        words = {w.casefold() for e in entities for w in _WORD.findall(text[e.start : e.end])}
        return cls(order, reference_year_of(dates, order), frozenset(originals | words), frozenset(words))  # type: ignore[arg-type]


def _year_only(parsed: object) -> bool:
    return (
        getattr(parsed, "year", None) is not None
        and getattr(parsed, "month", None) is None
        and getattr(parsed, "day", None) is None
        and getattr(parsed, "weekday", None) is None
    )


def _with_phone_prefix(text: str, e: Entity) -> Entity:
    """A phone number's leading "+" belongs to it (the tokenizer drops punctuation)."""
    if e.label == "PHONE" and e.start > 0 and text[e.start - 1] == "+":
        return Entity(e.start - 1, e.end, e.label, e.score, e.tokens, e.detected)
    return e


def _render(text: str, replacements: Sequence[Replacement]) -> str:
    return splice(text, ((r.start, r.end, r.replacement) for r in replacements))
