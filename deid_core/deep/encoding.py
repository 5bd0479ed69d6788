"""From rule-annotated text to the arrays the network reads, and back.

Documents are cut into overlapping windows of `window_tokens` so that memory
and padding stay bounded however long a narrative is; `stitch` takes each
token's prediction from the window in which it sits furthest from an edge,
where the BiLSTM has seen the most context on both sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deid_core.config import ArchitectureConfig, SequenceConfig
from deid_core.corpus.document import GoldSpan
from deid_core.deep.features import arch_feature_names, extra_features
from deid_core.deep.vocabulary import PAD_ID, Vocabulary
from deid_core.rules.deidentifier import RuleAnalysis
from deid_core.text.tokenize import POST_SPACE_CHARS, Token

IGNORE_LABEL = -1
"""Label of a token that is not trained on (padding)."""


@dataclass
class EncodedDoc:
    """One document as arrays; `labels` only when gold spans were given."""

    word_ids: np.ndarray  # (n,) int32
    char_ids: np.ndarray  # (n, C) int32
    features: np.ndarray  # (n, F) float32
    labels: np.ndarray | None = None  # (n,) int32 class ids

    def __len__(self) -> int:
        return int(self.word_ids.shape[0])


def char_width(arch: ArchitectureConfig) -> int:
    return arch.max_token_chars + (POST_SPACE_CHARS if arch.post_space else 0)


def token_char_string(tok: Token, arch: ArchitectureConfig) -> str:
    """What the character BiLSTM reads for a token; training and inference must agree."""
    return tok.text[: arch.max_token_chars] + (tok.post_space if arch.post_space else "")


class Encoder:
    """Encodes analyses with one vocabulary and architecture."""

    def __init__(
        self,
        vocabulary: Vocabulary,
        arch: ArchitectureConfig,
        classes: Sequence[str],
        salutations: frozenset[str],
    ) -> None:
        self.vocabulary = vocabulary
        self.arch = arch
        self.classes = list(classes)
        self.class_index = {c: i for i, c in enumerate(self.classes)}
        self.salutations = salutations
        self.n_chars = char_width(arch)
        self.feature_names = arch_feature_names(arch)
        self._char_cache: dict[tuple[str, str], np.ndarray] = {}

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def token_chars(self, tok: Token) -> np.ndarray:
        key = (tok.text, tok.post_space if self.arch.post_space else "")
        row = self._char_cache.get(key)
        if row is None:
            row = np.zeros(self.n_chars, dtype=np.int32)
            for j, ch in enumerate(token_char_string(tok, self.arch)):
                row[j] = self.vocabulary.char_id(ch)
            if len(self._char_cache) < 200_000:
                self._char_cache[key] = row
        return row

    def encode(self, analysis: RuleAnalysis, labels: np.ndarray | None = None) -> EncodedDoc:
        tokens = analysis.tokens
        n = len(tokens)
        words = np.fromiter((self.vocabulary.word_id(t.lower) for t in tokens), dtype=np.int32, count=n)
        chars = np.zeros((n, self.n_chars), dtype=np.int32)
        for i, tok in enumerate(tokens):
            chars[i] = self.token_chars(tok)
        if self.arch.extra_features:
            feats = extra_features(analysis, self.salutations, rules=self.arch.rule_features,
                                   categories=self.arch.rule_categories)
        else:
            feats = np.zeros((n, 0), dtype=np.float32)
        return EncodedDoc(words, chars, feats, labels)


def token_labels(
    tokens: Sequence[Token],
    text: str,
    spans: Sequence[GoldSpan],
    class_index: dict[str, int],
    label_map: dict[str, str],
    age_phi_min: int,
) -> np.ndarray:
    """Class id per token from gold character spans.

    A token overlapping a span takes its class (a partly covered token leaks
    characters, so it is PHI). Ages below `age_phi_min` train as SAFE, as
    the PhysioNet annotation and HIPAA read them; an age we cannot read as a
    number stays AGE (the cautious choice).
    """
    out = np.zeros(len(tokens), dtype=np.int32)
    if not spans or not tokens:
        return out
    starts = np.fromiter((t.start for t in tokens), dtype=np.int64, count=len(tokens))
    ends = np.fromiter((t.end for t in tokens), dtype=np.int64, count=len(tokens))
    for span in spans:
        cls = label_map.get(span.label, "OTHER")
        if cls == "AGE" and _age_below(text[span.start : span.end], age_phi_min):
            continue
        idx = class_index[cls]
        hit = (starts < span.end) & (ends > span.start)
        out[hit] = idx
    return out


def _age_below(surface: str, threshold: int) -> bool:
    digits = "".join(ch if ch.isdigit() else " " for ch in surface).split()
    if not digits:
        return False
    return int(digits[0]) < threshold


def window_bounds(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """[start, end) windows covering 0..n with at least `overlap` shared tokens."""
    if n <= size:
        return [(0, n)]
    stride = size - overlap
    bounds = []
    start = 0
    while True:
        end = min(start + size, n)
        bounds.append((max(0, end - size), end))
        if end == n:
            return bounds
        start += stride


def stitch(window_probs: Sequence[np.ndarray], bounds: Sequence[tuple[int, int]], n: int) -> np.ndarray:
    """Per-token predictions from the window where each token is most central."""
    if len(bounds) == 1:
        return window_probs[0][:n]
    k = window_probs[0].shape[-1]
    out = np.zeros((n, k), dtype=np.float32)
    best = np.full(n, -1, dtype=np.int64)
    for probs, (s, e) in zip(window_probs, bounds):
        pos = np.arange(s, e)
        margin = np.minimum(pos - s, e - 1 - pos)
        take = margin > best[s:e]
        out[pos[take]] = probs[: e - s][take]
        best[s:e] = np.where(take, margin, best[s:e])
    return out


def pad_batch(docs: Sequence[EncodedDoc], length: int, n_chars: int, n_features: int) -> dict[str, np.ndarray]:
    """Right-pad a batch of (windowed) documents to `length` tokens."""
    b = len(docs)
    words = np.full((b, length), PAD_ID, dtype=np.int32)
    chars = np.zeros((b, length, n_chars), dtype=np.int32)
    feats = np.zeros((b, length, n_features), dtype=np.float32)
    for i, d in enumerate(docs):
        m = len(d)
        words[i, :m] = d.word_ids
        chars[i, :m] = d.char_ids
        feats[i, :m] = d.features
    return {"words": words, "chars": chars, "features": feats}


def slice_doc(doc: EncodedDoc, start: int, end: int) -> EncodedDoc:
    return EncodedDoc(
        doc.word_ids[start:end],
        doc.char_ids[start:end],
        doc.features[start:end],
        None if doc.labels is None else doc.labels[start:end],
    )
