from __future__ import annotations

import pytest

from deid_core.text.scripts import has_other_script


@pytest.mark.parametrize("word", ["王芳", "Москва", "محمد", "かな", "한국", "दिल्ली", "Αθήνα", "Ivan王"])
def test_words_of_other_scripts_are_found(word: str) -> None:
    assert has_other_script(word)


@pytest.mark.parametrize("word", ["Łódź", "Müller", "café", "e\u0301", "β", "μmol", "µg", "α1", "αβ", "40", "", "ª"])
def test_latin_words_and_greek_notation_are_not(word: str) -> None:
    assert not has_other_script(word)
