"""Training examples: documents -> token tables -> fixed-size windows.

Two stages so that Spark can do each in parallel over a large corpus:
`token_table` runs the rules and records, per document, the normalised words,
character strings, features and labels (no vocabulary needed yet); once the
vocabulary is counted from those tables, `window_rows` turns them into
padded id windows that petastorm can feed to tf.data with static shapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from deid_core.config import ArchitectureConfig, SequenceConfig
from deid_core.corpus.document import Document
from deid_core.deep.encoding import char_width, token_char_string, token_labels, window_bounds
from deid_core.deep.features import arch_feature_names, extra_features
from deid_core.deep.vocabulary import PAD_ID, Vocabulary, normalise_word
from deid_core.hybrid.combiner import NeverRelease
from deid_core.rules.deidentifier import RuleAnalysis, RuleDeidentifier

#: Columns of a token-table row (one document).
TOKEN_COLUMNS = ("doc_id", "source", "words", "chars", "features", "labels", "gates")
#: Columns of a window row.
WINDOW_COLUMNS = ("words", "chars", "features", "labels", "weights", "gates")

#: What the combiner would do with a token before the network speaks:
#: 0 rules say safe (low threshold), 1 rules mask it (high threshold),
#: 2 never released. Kept with training data so model selection can score
#: the hybrid, not just the network.
GATE_SAFE, GATE_UNSAFE, GATE_NEVER = 0, 1, 2


def labelled_analysis(
    doc: Document,
    rules: RuleDeidentifier,
    classes: Sequence[str],
    label_map: dict[str, str],
    age_phi_min: int,
) -> tuple[RuleAnalysis, np.ndarray]:
    """The rules' analysis of a training document and the class id of each of its tokens.

    One definition of a training token's label for every model family (the
    network's token tables, the CRF's and SVM's examples).
    """
    analysis = rules.analyse(doc.text)
    class_index = {c: i for i, c in enumerate(classes)}
    return analysis, token_labels(analysis.tokens, doc.text, doc.spans, class_index, label_map, age_phi_min)


def phi_only_words(counts: Mapping[str, int], phi_counts: Mapping[str, int], share: float) -> set[str]:
    """Words seen inside gold PHI at least `share` of the times they were seen: no model file may list them.

    The one rule for the network's vocabulary and the classical models' lexicon.
    """
    return {w for w, n in counts.items() if phi_counts.get(w, 0) and phi_counts.get(w, 0) >= share * n}


def token_table(
    doc: Document,
    source: str,
    rules: RuleDeidentifier,
    arch: ArchitectureConfig,
    salutations: frozenset[str],
    classes: Sequence[str],
    label_map: dict[str, str],
    age_phi_min: int,
    never: NeverRelease | None = None,
) -> dict[str, Any]:
    analysis, labels = labelled_analysis(doc, rules, classes, label_map, age_phi_min)
    gates = np.asarray(analysis.unsafe, dtype=np.int32)
    if never is not None and len(gates):
        gates[never.mask(analysis)] = GATE_NEVER
    tokens = analysis.tokens
    if arch.extra_features:
        feats = extra_features(analysis, salutations, rules=arch.rule_features, categories=arch.rule_categories)
    else:
        feats = np.zeros((len(tokens), 0), dtype=np.float32)
    return {
        "doc_id": doc.doc_id,
        "source": source,
        "words": [normalise_word(t.lower) for t in tokens],
        "chars": [token_char_string(t, arch) for t in tokens],
        "features": feats.reshape(-1).tolist(),
        "labels": labels.tolist(),
        "gates": gates.tolist(),
    }


def window_rows(
    row: dict[str, Any],
    vocabulary: Vocabulary,
    arch: ArchitectureConfig,
    seq: SequenceConfig,
) -> Iterator[dict[str, list]]:
    """Padded windows of one token-table row, flattened for Parquet."""
    n = len(row["words"])
    if n == 0:
        return
    size = seq.window_tokens
    width = char_width(arch)
    n_feat = len(arch_feature_names(arch))
    words = np.fromiter((vocabulary.word_id(w) for w in row["words"]), dtype=np.int32, count=n)
    chars = np.zeros((n, width), dtype=np.int32)
    for i, s in enumerate(row["chars"]):
        for j, ch in enumerate(s[:width]):
            chars[i, j] = vocabulary.char_id(ch)
    feats = np.asarray(row["features"], dtype=np.float32).reshape(n, n_feat)
    labels = np.asarray(row["labels"], dtype=np.int32)
    gates = np.asarray(row["gates"], dtype=np.int32)
    for s, e in window_bounds(n, size, seq.overlap):
        m = e - s
        w = np.full(size, PAD_ID, dtype=np.int32)
        w[:m] = words[s:e]
        c = np.zeros((size, width), dtype=np.int32)
        c[:m] = chars[s:e]
        f = np.zeros((size, n_feat), dtype=np.float32)
        f[:m] = feats[s:e]
        lab = np.zeros(size, dtype=np.int32)
        lab[:m] = labels[s:e]
        wt = np.zeros(size, dtype=np.float32)
        wt[:m] = 1.0
        g = np.zeros(size, dtype=np.int32)
        g[:m] = gates[s:e]
        yield {
            "words": w.tolist(),
            "chars": c.reshape(-1).tolist(),
            "features": f.reshape(-1).tolist(),
            "labels": lab.tolist(),
            "weights": wt.tolist(),
            "gates": g.tolist(),
        }
