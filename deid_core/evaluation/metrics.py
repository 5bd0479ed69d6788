"""Token masking metrics, entity matching and retention, accumulated per document.

Definitions (the method's, after the i2b2 2014 token evaluation):

* Gold PHI tokens are the tokens of each gold span's own text, so a gold span
  that starts or ends inside a text token yields a gold token that is a part
  of that text token.
* A gold token is *caught* when a predicted (masked) text token covers it.
  Every gold token lies inside exactly one text token, so this is a lookup.
* Precision counts caught gold tokens against false positives: a masked
  token covering no gold token is one false positive; a masked token that
  covers a gold token starting or ending mid-token is a hit for each gold
  token it covers and also counts once as a false positive.
* Retention: the share of non-PHI numeric tokens and of drug-name tokens that
  stay unmasked, i.e. what survives for the safety reviewer.
* Keep-retention: where the corpus marks keep spans (clinical content: drug,
  dose, lab, duration, reaction, lot; `KEEP_LABELS`), the share of their
  tokens (the tokens of each keep span's own text) that no predicted span
  overlaps even by one character, overall and per keep label.

Counts are additive, so results from partitions can be merged.
`deid_core.evaluation.corpus.evaluate_corpus` runs a detector over a gold
corpus and adds them up.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deid_core.categories import UNKNOWN_LABEL
from deid_core.corpus.document import KEEP_LABELS
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.text.tokenize import token_spans

#: Characters allowed between two masked tokens of one predicted entity.
_ENTITY_GAP = frozenset(" \t-/.:'’")


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    label: str = UNKNOWN_LABEL


@dataclass
class Counts:
    """Additive counts; every metric is derived from these."""

    docs: int = 0
    tokens: int = 0
    predicted_tokens: int = 0
    gold_tokens: int = 0
    caught: int = 0
    false_positives: int = 0
    #: false positives that are ages (predicted AGE) or years: PHI under the
    #: i2b2 reading, not in PhysioNet's gold standard
    false_positives_age_year: int = 0
    gold_by_label: Counter[str] = field(default_factory=Counter)
    caught_by_label: Counter[str] = field(default_factory=Counter)
    hipaa_gold: int = 0
    hipaa_caught: int = 0
    gold_entities: int = 0
    pred_entities: int = 0
    gold_exact: int = 0
    gold_overlap: int = 0
    pred_exact: int = 0
    pred_overlap: int = 0
    numeric_total: int = 0
    numeric_kept: int = 0
    drug_total: int = 0
    drug_kept: int = 0
    missed: Counter[str] = field(default_factory=Counter)  # label -> missed tokens (no text!)
    keep_tokens: int = 0
    keep_kept: int = 0
    keep_by_label: Counter[str] = field(default_factory=Counter)
    kept_by_label: Counter[str] = field(default_factory=Counter)

    def merge(self, other: Counts) -> Counts:
        out = Counts()
        for name in self.__dataclass_fields__:
            a, b = getattr(self, name), getattr(other, name)
            setattr(out, name, a + b)
        return out

    # ---- derived metrics --------------------------------------------------

    @property
    def recall(self) -> float:
        return _ratio(self.caught, self.gold_tokens)

    @property
    def precision(self) -> float:
        return _ratio(self.caught, self.caught + self.false_positives)

    @property
    def precision_i2b2_reading(self) -> float:
        """Precision when masked ages and years count as PHI (i2b2 2014 guidelines)."""
        return _ratio(self.caught, self.caught + self.false_positives - self.false_positives_age_year)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def hipaa_recall(self) -> float:
        return _ratio(self.hipaa_caught, self.hipaa_gold)

    @property
    def keep_retention(self) -> float:
        return _ratio(self.keep_kept, self.keep_tokens)

    def keep_label_retention(self) -> dict[str, tuple[int, int, float]]:
        """(kept, total, retention) per keep label present, in `KEEP_LABELS` order."""
        order = {lab: i for i, lab in enumerate(KEEP_LABELS)}
        return {
            lab: (self.kept_by_label[lab], n, _ratio(self.kept_by_label[lab], n))
            for lab, n in sorted(self.keep_by_label.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
        }

    def label_recall(self) -> dict[str, tuple[int, int, float]]:
        return {
            lab: (self.caught_by_label[lab], n, _ratio(self.caught_by_label[lab], n))
            for lab, n in sorted(self.gold_by_label.items())
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "docs": self.docs,
            "tokens": self.tokens,
            "predicted_tokens": self.predicted_tokens,
            "token": {
                "gold": self.gold_tokens,
                "caught": self.caught,
                "false_positives": self.false_positives,
                "recall": self.recall,
                "precision": self.precision,
                "precision_i2b2_reading": self.precision_i2b2_reading,
                "f1": self.f1,
                "hipaa_gold": self.hipaa_gold,
                "hipaa_recall": self.hipaa_recall,
                "per_label": {
                    lab: {"caught": c, "gold": n, "recall": r} for lab, (c, n, r) in self.label_recall().items()
                },
            },
            "entity": {
                "gold": self.gold_entities,
                "predicted": self.pred_entities,
                "exact_recall": _ratio(self.gold_exact, self.gold_entities),
                "exact_precision": _ratio(self.pred_exact, self.pred_entities),
                "overlap_recall": _ratio(self.gold_overlap, self.gold_entities),
                "overlap_precision": _ratio(self.pred_overlap, self.pred_entities),
            },
            "retention": {
                "numeric_total": self.numeric_total,
                "numeric_kept": self.numeric_kept,
                "numeric_retention": _ratio(self.numeric_kept, self.numeric_total),
                "drug_total": self.drug_total,
                "drug_kept": self.drug_kept,
                "drug_retention": _ratio(self.drug_kept, self.drug_total),
            },
            "keep": {
                "tokens": self.keep_tokens,
                "kept": self.keep_kept,
                "retention": self.keep_retention,
                "per_label": {
                    lab: {"kept": k, "tokens": n, "retention": r}
                    for lab, (k, n, r) in self.keep_label_retention().items()
                },
            },
        }


def gold_tokens(text: str, gold: Sequence[Span]) -> list[Span]:
    """Tokens of each gold span's own text, de-duplicated by position."""
    seen: dict[tuple[int, int], Span] = {}
    for g in gold:
        for s, e in token_spans(text[g.start:g.end]):
            key = (g.start + s, g.start + e)
            seen.setdefault(key, Span(key[0], key[1], g.label))
    return sorted(seen.values(), key=lambda s: (s.start, s.end))


def predicted_token_set(tokens: Sequence[tuple[int, int]], predicted: Sequence[Span]) -> list[bool]:
    """Which text tokens the predicted spans cover completely.

    Our de-identifiers predict whole tokens; a partly covered token still
    leaks characters, so it does not count as masked.
    """
    masked = [False] * len(tokens)
    if not predicted:
        return masked
    merged: list[list[int]] = []
    for p in sorted(predicted, key=lambda p: p.start):
        if merged and p.start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], p.end)
        else:
            merged.append([p.start, p.end])
    starts = [m[0] for m in merged]
    for i, (s, e) in enumerate(tokens):
        k = bisect.bisect_right(starts, s) - 1
        if k >= 0 and merged[k][1] >= e:
            masked[i] = True
    return masked


def _joins(text: str, gap: str, prev_start: int, prev_end: int, nxt: int) -> bool:
    """May two masked tokens with `gap` between them belong to one entity?"""
    if len(gap) > 3:
        return False
    if gap == ", ":
        return text[nxt:nxt + 1].isdigit()  # "January 24, 2014"
    if not all(ch in _ENTITY_GAP for ch in gap):
        return False
    if "." in gap and any(ch.isspace() for ch in gap):
        # ". " ends a sentence unless it follows an initial ("J. Smith") or an
        # abbreviated month before a day ("Sept. 3")
        prev = text[prev_start:prev_end]
        return len(prev) == 1 or (prev.isalpha() and len(prev) <= 4 and text[nxt:nxt + 1].isdigit())
    return True


def _entities_from_tokens(text: str, tokens: Sequence[tuple[int, int]], masked: Sequence[bool]) -> list[Span]:
    """Group adjacent masked tokens into predicted entities.

    Tokens join when only a short in-line gap of name/date punctuation lies
    between them ("Mary Hulse", "12-JAN-2014"); ", " joins only before a
    digit, so "January 24, 2014" is one entity but "Smith, Jones" is two, and
    ". " only after an initial or an abbreviated month.
    """
    out: list[Span] = []
    cur: list[int] | None = None
    prev_start = prev_end = -1
    for (s, e), m in zip(tokens, masked):
        if not m:
            if cur is not None:
                out.append(Span(cur[0], cur[1]))
                cur = None
            continue
        if cur is not None:
            gap = text[prev_end:s]
            ok = _joins(text, gap, prev_start, prev_end, s)
            if ok:
                cur[1] = e
            else:
                out.append(Span(cur[0], cur[1]))
                cur = [s, e]
        else:
            cur = [s, e]
        prev_start, prev_end = s, e
    if cur is not None:
        out.append(Span(cur[0], cur[1]))
    return out


def _token_labels(toks: Sequence[tuple[int, int]], masked: Sequence[bool], predicted: Sequence[Span]) -> list[str]:
    """Label of the predicted span that covers each masked token ("" when unmasked)."""
    out = [""] * len(toks)
    spans = sorted(predicted, key=lambda p: p.start)
    starts = [p.start for p in spans]
    for k, (s, e) in enumerate(toks):
        if masked[k]:
            i = bisect.bisect_right(starts, s) - 1
            while i >= 0 and spans[i].end < e:
                i -= 1
            out[k] = spans[i].label if i >= 0 else ""
    return out


def _overlapped(tokens: Sequence[Span], predicted: Sequence[Span]) -> list[bool]:
    """Which tokens a predicted span overlaps by at least one character."""
    spans = sorted((p.start, p.end) for p in predicted)
    starts = [a for a, _ in spans]
    # running maximum of the ends, so one bisect answers "does any span reaching here overlap"
    max_end: list[int] = []
    for _, b in spans:
        max_end.append(max(b, max_end[-1]) if max_end else b)
    out = []
    for t in tokens:
        k = bisect.bisect_left(starts, t.end) - 1  # spans starting before the token ends
        out.append(k >= 0 and max_end[k] > t.start)
    return out


def _is_year(text: str, s: int, e: int) -> bool:
    """A year as written in notes: 1900-2099, or two digits after an apostrophe ('95)."""
    word = text[s:e]
    if len(word) == 4 and word.isdigit():
        return 1900 <= int(word) <= 2099
    return len(word) == 2 and word.isdigit() and text[s - 1:s] in ("'", "’")


def _trim_to_tokens(text: str, g: Span) -> Span | None:
    """Gold span without edge punctuation ("410-555-9876." -> "410-555-9876")."""
    spans = token_spans(text[g.start:g.end])
    if not spans:
        return None
    return Span(g.start + spans[0][0], g.start + spans[-1][1], g.label)


def evaluate_document(
    text: str,
    gold: Sequence[Span],
    predicted: Sequence[Span],
    hipaa: HipaaMap,
    is_drug: Callable[[str], bool] | None = None,
    keep: Sequence[Span] = (),
) -> Counts:
    """Counts for one document; `predicted` are masked spans (normally whole tokens).

    `keep` are the document's keep spans (label from `KEEP_LABELS`); their
    tokens are found like gold tokens and count as kept when no predicted
    span overlaps them.
    """
    c = Counts(docs=1)
    toks = token_spans(text)
    c.tokens = len(toks)
    masked = predicted_token_set(toks, predicted)
    c.predicted_tokens = sum(masked)
    starts = [s for s, _ in toks]

    # ---- token masking ------------------------------------------------------
    gtoks = gold_tokens(text, gold)
    covered: dict[int, list[Span]] = {}
    for g in gtoks:
        k = bisect.bisect_right(starts, g.start) - 1
        if k < 0 or toks[k][1] < g.end:  # cannot happen for well-formed offsets
            raise ValueError("gold token does not lie within a text token")
        covered.setdefault(k, []).append(g)
        c.gold_tokens += 1
        c.gold_by_label[g.label] += 1
        is_h = hipaa.is_hipaa(g.label, text[g.start:g.end])
        c.hipaa_gold += is_h
        if masked[k]:
            c.caught += 1
            c.caught_by_label[g.label] += 1
            c.hipaa_caught += is_h
        else:
            c.missed[g.label] += 1
    pred_labels = _token_labels(toks, masked, predicted)
    for k, m in enumerate(masked):
        if not m:
            continue
        inside = covered.get(k)
        if not inside:
            c.false_positives += 1
            s, e = toks[k]
            c.false_positives_age_year += pred_labels[k] == "AGE" or _is_year(text, s, e)
        elif any((g.start, g.end) != toks[k] for g in inside):
            c.false_positives += 1

    # ---- entities -----------------------------------------------------------
    gold_ents = [t for t in (_trim_to_tokens(text, g) for g in gold) if t is not None]
    pred_ents = _entities_from_tokens(text, toks, masked)
    c.gold_entities = len(gold_ents)
    c.pred_entities = len(pred_ents)
    pred_exact = {(p.start, p.end) for p in pred_ents}
    gold_exact = {(g.start, g.end) for g in gold_ents}
    c.gold_exact = sum((g.start, g.end) in pred_exact for g in gold_ents)
    c.pred_exact = sum((p.start, p.end) in gold_exact for p in pred_ents)
    c.gold_overlap = sum(any(p.start < g.end and g.start < p.end for p in pred_ents) for g in gold_ents)
    c.pred_overlap = sum(any(p.start < g.end and g.start < p.end for g in gold_ents) for p in pred_ents)

    # ---- retention ----------------------------------------------------------
    for k, (s, e) in enumerate(toks):
        if k in covered or any(g.start < e and s < g.end for g in gold):
            continue
        word = text[s:e]
        if any(ch.isdigit() for ch in word):
            c.numeric_total += 1
            c.numeric_kept += not masked[k]
        if is_drug is not None and is_drug(word.lower()):
            c.drug_total += 1
            c.drug_kept += not masked[k]

    # ---- keep spans ---------------------------------------------------------
    ktoks = gold_tokens(text, keep)
    for t, hit in zip(ktoks, _overlapped(ktoks, predicted)):
        c.keep_tokens += 1
        c.keep_by_label[t.label] += 1
        if not hit:
            c.keep_kept += 1
            c.kept_by_label[t.label] += 1
    return c

