from __future__ import annotations

import numpy as np

from deid_core.hybrid.categories import infer_categories

CLASSES = ["SAFE", "NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "ID", "OTHER"]


def _probs(rows: list[dict[str, float]]) -> np.ndarray:
    out = np.zeros((len(rows), len(CLASSES)), dtype=np.float32)
    for i, r in enumerate(rows):
        for k, v in r.items():
            out[i, CLASSES.index(k)] = v
    return out


def test_detector_beats_network_beats_dictionary(rules) -> None:
    text = "On 12-JAN-2014 Chicago called xqzt."
    a = rules.analyse(text)
    toks = [t.text for t in a.tokens]
    i_date, i_paris, i_unknown = toks.index("12"), toks.index("Chicago"), toks.index("xqzt")
    rows = [{"SAFE": 1.0} for _ in toks]
    rows[i_date] = {"SAFE": 0.1, "NAME": 0.9}        # network disagrees with the date pattern: pattern wins
    rows[i_paris] = {"SAFE": 0.2, "NAME": 0.8}       # network thinks a person: it wins over the place list
    rows[i_unknown] = {"SAFE": 0.3, "ID": 0.7}       # rules do not know: network decides
    cats = infer_categories(a, _probs(rows), CLASSES)
    assert cats[i_date] == "DATE" and cats[i_paris] == "NAME" and cats[i_unknown] == "ID"
    rows[i_paris] = {"SAFE": 0.9, "NAME": 0.1}       # network sure it is safe: the dictionary label stays
    assert infer_categories(a, _probs(rows), CLASSES)[i_paris] == "LOCATION"
    assert infer_categories(a, None, CLASSES) == a.labels


def test_cautious_masks_keep_an_unknown_category(rules) -> None:
    """A dose masked only out of caution must not be called an age (it would read "[AGE>89] mg")."""
    a = rules.analyse("amoxicillin 500 mg")
    i = [t.text for t in a.tokens].index("500")
    rows = [{"SAFE": 1.0} for _ in a.tokens]
    rows[i] = {"SAFE": 0.7, "AGE": 0.3}
    assert infer_categories(a, _probs(rows), CLASSES)[i] == "PHI"
    rows[i] = {"SAFE": 0.2, "AGE": 0.8}  # the network thinks it is PHI: its class is the best guess
    assert infer_categories(a, _probs(rows), CLASSES)[i] == "AGE"
