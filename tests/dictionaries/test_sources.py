"""The Hunspell reader expands a stem's affix classes (tests mirror deid_core/dictionaries/sources.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.dictionaries.sources import SourceMissingError, read_hunspell_dic

# A small affix file in en_US's notation: D = -d/-ed/-ied, G = -ing, N = -ion, A = re- (cross product).
_AFF = """SET UTF-8
PFX A Y 1
PFX A   0     re         .

SFX D Y 3
SFX D   0     d          e
SFX D   y     ied        [^aeiou]y
SFX D   0     ed         [^ey]

SFX G Y 2
SFX G   e     ing        e
SFX G   0     ing        [^e]

SFX N Y 1
SFX N   e     ion        e
"""

# The first line is the entry count; indented lines are a licence header, as in hunspell-en-med.
_DIC = """6
    This is a licence header line that is not a word
intubate/DNGA
biopsy/D
ECG
Hopkins
Baltimore/D
fever
"""


@pytest.fixture
def hunspell(tmp_path: Path) -> tuple[Path, Path]:
    aff, dic = tmp_path / "x.aff", tmp_path / "x.dic"
    aff.write_text(_AFF, encoding="utf-8")
    dic.write_text(_DIC, encoding="utf-8")
    return dic, aff


def test_affix_classes_are_expanded(hunspell: tuple[Path, Path]) -> None:
    words = read_hunspell_dic(*hunspell)
    # suffixes whose condition the stem meets, and only those
    assert {"intubate", "intubated", "intubating", "intubation"} <= words
    assert "intubateed" not in words and "intubateing" not in words
    assert {"biopsy", "biopsied"} <= words and "biopsyed" not in words
    # a prefix, alone and with a suffix (both allow the cross product)
    assert {"reintubate", "reintubated", "reintubation"} <= words
    # stems without flags and all-capital abbreviations stay
    assert {"ECG", "fever"} <= words


def test_title_case_stems_are_left_out_with_their_forms(hunspell: tuple[Path, Path]) -> None:
    words = read_hunspell_dic(*hunspell)
    assert not {"Hopkins", "Baltimore", "Baltimored"} & words


def test_licence_header_is_no_word(hunspell: tuple[Path, Path]) -> None:
    words = read_hunspell_dic(*hunspell)
    assert not any(" " in w for w in words)
    assert "This" not in words and "6" not in words


def test_missing_affix_file_says_how_to_install_it(hunspell: tuple[Path, Path], tmp_path: Path) -> None:
    dic, _ = hunspell
    with pytest.raises(SourceMissingError, match="hunspell-en-us"):
        read_hunspell_dic(dic, tmp_path / "absent.aff")
