"""Patient-level folds: groups stay together, the split is stable and order-free."""

from __future__ import annotations

import pytest

from deid_core.corpus.document import Document
from deid_core.training.folds import DEFAULT_FOLD_KEY, compile_key, group_of, split_folds


def _doc(doc_id: str) -> Document:
    return Document(doc_id=doc_id, text="x", spans=[])


def test_groups_stay_in_one_fold_and_order_does_not_matter() -> None:
    ids = [f"{p}-{n}" for p in range(40) for n in range(1, 4)] + [f"VAERS-{900000 + r}-{part}" for r in range(20)
                                                                 for part in ("narrative", "lab")]
    docs = [_doc(i) for i in ids]
    folds = split_folds(docs, 5)
    assert sum(len(f) for f in folds) == len(docs) and all(folds)
    key = compile_key(DEFAULT_FOLD_KEY)
    where = {group_of(d.doc_id, key): k for k, f in enumerate(folds) for d in f}
    for k, f in enumerate(folds):
        assert all(where[group_of(d.doc_id, key)] == k for d in f)
    assert group_of("12-3", key) == "12" and group_of("VAERS-1234567-lab", key) == "VAERS-1234567"
    again = split_folds(list(reversed(docs)), 5)
    assert [sorted(d.doc_id for d in f) for f in again] == [sorted(d.doc_id for d in f) for f in folds]


def test_bad_key_is_refused() -> None:
    with pytest.raises(ValueError, match="regular expression"):
        split_folds([_doc("1-1")], 2, "(")
