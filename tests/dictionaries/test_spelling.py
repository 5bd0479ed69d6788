"""British spellings derived from the safe lists' American words (deid_core/dictionaries/spelling.py)."""

from __future__ import annotations

import pytest

from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.dictionaries.flags import UNSAFE, Lex
from deid_core.dictionaries.spelling import british_forms


@pytest.mark.parametrize(
    ("american", "british"),
    [
        ("anemia", "anaemia"), ("hyponatremia", "hyponatraemia"), ("ischemic", "ischaemic"),
        ("hemorrhage", "haemorrhage"), ("hematuria", "haematuria"), ("hemoglobin", "haemoglobin"),
        ("edema", "oedema"), ("esophagitis", "oesophagitis"), ("estrogen", "oestrogen"),
        ("pediatric", "paediatric"), ("diarrhea", "diarrhoea"), ("dyspnea", "dyspnoea"), ("fetal", "foetal"),
        ("hospitalized", "hospitalised"), ("immunization", "immunisation"), ("paralyzed", "paralysed"),
        ("anesthesia", "anaesthesia"), ("etiology", "aetiology"), ("leukocytes", "leucocytes"),
        ("tumor", "tumour"), ("behavior", "behaviour"), ("liter", "litre"), ("sulfate", "sulphate"),
    ],
)
def test_british_forms(american: str, british: str) -> None:
    assert british in british_forms(american)


def test_rules_combine_and_leave_other_words_alone() -> None:
    assert set(british_forms("anesthetized")) == {"anaesthetized", "anesthetised", "anaesthetised"}
    for word in ("them", "after", "fetch", "speed", "pedal", "hem"):
        assert not list(british_forms(word)), word


def test_the_artifact_holds_british_forms_as_safe_words_only(artifact: DictionaryArtifact) -> None:
    for word in ("haemorrhage", "oedema", "hyponatraemia", "hospitalised", "paediatric"):
        f = artifact.flags(word)
        assert f & (Lex.MEDICAL | Lex.COMMON_WORD) and not f & int(UNSAFE), word
    assert "british_spellings" in {s["name"] for s in artifact.metadata["sources"]}
