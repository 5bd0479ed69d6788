"""The category vocabulary: its subsets relate as `deid_core.categories` says, and every declaration follows it."""

from __future__ import annotations

from typing import get_args

from deid_core import categories as cat
from deid_core.config import DeepConfig, RulesConfig, TrainingConfig
from deid_core.e2b.model import LABELS as E2B_MODEL_LABELS
from deid_core.qa.html_report import CATEGORY_COLOURS
from deid_core.replace.policy import ALLOWED, Policy
from deid_core.rules.patterns import CATEGORIES as DETECTOR_CATEGORIES
from deid_core.synthetic import LABELS as SYNTHETIC_MODULE_LABELS


def test_the_vocabulary_is_unique_and_safe_is_no_category() -> None:
    assert len(set(cat.CATEGORIES)) == len(cat.CATEGORIES)
    assert cat.UNKNOWN_LABEL in cat.CATEGORIES
    assert cat.SAFE_LABEL not in cat.CATEGORIES


def test_pattern_categories_are_policy_categories() -> None:
    assert set(cat.PATTERN_CATEGORIES) < set(cat.CATEGORIES)
    assert cat.UNKNOWN_LABEL not in cat.PATTERN_CATEGORIES


def test_model_classes_are_safe_then_policy_categories() -> None:
    assert cat.MODEL_CLASSES[0] == cat.SAFE_LABEL
    assert set(cat.MODEL_CLASSES[1:]) < set(cat.CATEGORIES)
    assert cat.UNKNOWN_LABEL not in cat.MODEL_CLASSES


def test_e2b_and_synthetic_labels_are_known_policy_categories() -> None:
    for labels in (cat.E2B_LABELS, cat.SYNTHETIC_LABELS):
        assert set(labels) < set(cat.CATEGORIES)
        assert cat.UNKNOWN_LABEL not in labels and cat.SAFE_LABEL not in labels


def test_subsets_keep_the_vocabulary_order() -> None:
    for subset in (cat.PATTERN_CATEGORIES, cat.MODEL_CLASSES[1:], cat.E2B_LABELS, cat.SYNTHETIC_LABELS):
        assert list(subset) == [c for c in cat.CATEGORIES if c in subset]


def test_literal_types_hold_the_tuples() -> None:
    assert get_args(cat.Category) == cat.CATEGORIES
    assert get_args(cat.PatternCategory) == cat.PATTERN_CATEGORIES
    assert get_args(cat.ModelClass) == cat.MODEL_CLASSES
    assert get_args(cat.E2BLabel) == cat.E2B_LABELS


def test_every_declaration_derives_from_the_vocabulary() -> None:
    assert DETECTOR_CATEGORIES == cat.PATTERN_CATEGORIES
    assert E2B_MODEL_LABELS == cat.E2B_LABELS
    assert SYNTHETIC_MODULE_LABELS == cat.SYNTHETIC_LABELS
    assert set(ALLOWED) == set(cat.CATEGORIES)
    assert set(CATEGORY_COLOURS) <= set(cat.CATEGORIES)
    # the validated configuration fields accept exactly their subset
    assert get_args(get_args(RulesConfig.model_fields["pattern_categories"].annotation)[0]) == cat.PATTERN_CATEGORIES
    assert get_args(get_args(DeepConfig.model_fields["classes"].annotation)[0]) == cat.MODEL_CLASSES
    assert get_args(get_args(TrainingConfig.model_fields["label_map"].annotation)[1]) == cat.MODEL_CLASSES
    assert get_args(get_args(Policy.model_fields["categories"].annotation)[0]) == cat.CATEGORIES
    assert get_args(get_args(Policy.model_fields["force_mask"].annotation)[0]) == cat.PATTERN_CATEGORIES
