"""Out-of-fold scores tune only a network that reads the same per-token inputs as the fold networks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deid_core.deep.features import FAMILY_FEATURES, feature_names
from deid_core.training.out_of_fold import OOF_INDEX, read_oof

from tests.training.oof_fixture import one_fold_oof

PLAIN = list(feature_names(extra=True, rules=True))
WITH_CATEGORIES = list(feature_names(extra=True, rules=True, categories=True))


def _record(folder: Path, names: list[str] | None) -> Path:
    index = json.loads((folder / OOF_INDEX).read_text())
    if names is None:
        index.pop("feature_names", None)
    else:
        index["feature_names"] = names
    (folder / OOF_INDEX).write_text(json.dumps(index))
    return folder


def test_recorded_inputs_must_match(tmp_path: Path) -> None:
    oof = read_oof(_record(one_fold_oof(tmp_path), WITH_CATEGORIES))
    oof.check_inputs(WITH_CATEGORIES)
    with pytest.raises(ValueError, match="other per-token inputs"):
        oof.check_inputs(PLAIN)


def test_a_folder_without_a_recorded_layout_is_of_networks_without_categories(tmp_path: Path) -> None:
    oof = read_oof(_record(one_fold_oof(tmp_path), None))
    oof.check_inputs(PLAIN)
    assert set(FAMILY_FEATURES) <= set(WITH_CATEGORIES)
    with pytest.raises(ValueError, match="without the rule-category inputs"):
        oof.check_inputs(WITH_CATEGORIES)
