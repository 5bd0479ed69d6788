"""Keyed pseudonyms: consistent within a case, unlinkable across keys and cases, format kept.

All originals here are synthetic or public (census names, city names).
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.replace.keys import SecretKey
from deid_core.replace.pseudonyms import (
    EMAIL_DOMAIN,
    Pseudonymizer,
    SurrogateExhaustedError,
    SurrogatePools,
)

KEY = SecretKey(b"test-key-0123456789abcdef")
OTHER_KEY = SecretKey(b"other-key-0123456789abcdef")
CASE = "CASE-0001"


@pytest.fixture(scope="module")
def pools() -> SurrogatePools:
    return SurrogatePools.load()


@pytest.fixture(scope="module")
def ps(pools: SurrogatePools) -> Pseudonymizer:
    return Pseudonymizer(KEY, pools)


def tiny_pools(**overrides: tuple[str, ...]) -> SurrogatePools:
    """Hand-built pools small enough to force re-draws."""
    base = {
        "female_first": ("Alice", "Beth"),
        "male_first": ("Carl", "Dan"),
        "last": ("Smith", "Jones"),
        "cities": ("Oslo", "Lima"),
    }
    base.update(overrides)
    return SurrogatePools(**base)


def sample_names(pools: SurrogatePools, n: int = 200) -> list[str]:
    """`n` surnames spread over the whole list."""
    step = len(pools.last) // n
    return list(pools.last[::step][:n])


# --- pools -----------------------------------------------------------------------


def test_pools_are_large(pools: SurrogatePools) -> None:
    assert len(pools.female_first) + len(pools.male_first) > 1_000
    assert len(pools.female_first) > 1_000
    assert len(pools.male_first) > 500
    assert len(pools.last) > 10_000
    assert len(pools.cities) > 1_000


def test_load_is_cached(pools: SurrogatePools) -> None:
    assert SurrogatePools.load() is pools


def test_pools_are_sorted_and_clean(pools: SurrogatePools) -> None:
    for pool in (pools.female_first, pools.male_first, pools.last):
        assert list(pool) == sorted(pool)
        assert len(set(pool)) == len(pool)
        assert all(len(n) >= 2 and n.isalpha() and n.isascii() and n == n.title() for n in pool)
    assert list(pools.cities) == sorted(pools.cities)
    assert all(re.fullmatch(r"[A-Za-z]+(?:[ -][A-Za-z]+)*", c) for c in pools.cities)
    assert any(" " in c for c in pools.cities)


def test_first_name_pools_are_split_by_rank(pools: SurrogatePools) -> None:
    # "James" is in both census lists but far more frequent as a male name.
    assert not set(pools.female_first) & set(pools.male_first)
    assert "James" in pools.male_first and "James" not in pools.female_first
    assert "Mary" in pools.female_first and "Mary" not in pools.male_first


def test_fingerprint_is_short_stable_and_pool_specific(pools: SurrogatePools) -> None:
    assert re.fullmatch(r"[0-9a-f]{12}", pools.fingerprint)
    assert tiny_pools().fingerprint == tiny_pools().fingerprint
    assert tiny_pools().fingerprint != tiny_pools(cities=("Oslo", "Rome")).fingerprint
    assert tiny_pools().fingerprint != pools.fingerprint


def test_empty_pool_is_refused() -> None:
    with pytest.raises(ValueError, match="cities"):
        tiny_pools(cities=())


# --- names -----------------------------------------------------------------------


def test_name_is_deterministic(pools: SurrogatePools) -> None:
    a, b = Pseudonymizer(KEY, pools), Pseudonymizer(KEY, pools)
    for name in ("Smith", "Mary", "John", "Oyelaran", "Xq"):
        assert a.name_word(name, CASE) == b.name_word(name, CASE)


def test_case_variants_map_alike_and_keep_their_case(ps: Pseudonymizer) -> None:
    upper, title, lower = (ps.name_word(w, CASE) for w in ("SMITH", "Smith", "smith"))
    assert upper.isupper() and lower.islower() and title == title.title()
    assert upper.casefold() == title.casefold() == lower.casefold()
    mixed = ps.name_word("McDonald", CASE)
    assert mixed == mixed.title()
    assert mixed.casefold() == ps.name_word("MCDONALD", CASE).casefold()


def share_identical(a: list[str], b: list[str]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def test_names_are_unlinkable_across_keys_and_cases(pools: SurrogatePools) -> None:
    names = sample_names(pools)
    first = [Pseudonymizer(KEY, pools).name_word(n, CASE) for n in names]
    other_key = [Pseudonymizer(OTHER_KEY, pools).name_word(n, CASE) for n in names]
    other_case = [Pseudonymizer(KEY, pools).name_word(n, "CASE-0002") for n in names]
    assert share_identical(first, other_key) < 0.05
    assert share_identical(first, other_case) < 0.05
    # and distinct originals rarely collide within one case
    assert len(set(first)) > 0.95 * len(names)


def test_name_is_never_the_original(ps: Pseudonymizer, pools: SurrogatePools) -> None:
    for name in sample_names(pools) + list(pools.female_first[:100]):
        assert ps.name_word(name, CASE).casefold() != name.casefold()


def test_never_the_original_forces_a_redraw() -> None:
    tiny = Pseudonymizer(KEY, tiny_pools())
    for case_id in ("a", "b", "c", "d"):
        assert tiny.name_word("Smith", case_id) == "Jones"
        assert tiny.name_word("SMITH", case_id) == "JONES"
        assert tiny.name_word("Jones", case_id) == "Smith"


def test_avoid_is_honoured_deterministically(ps: Pseudonymizer, pools: SurrogatePools) -> None:
    for name in sample_names(pools, 50):
        plain = ps.name_word(name, CASE)
        avoided = ps.name_word(name, CASE, avoid={plain.upper()})
        assert avoided.casefold() != plain.casefold()
        assert avoided == ps.name_word(name, CASE, avoid=[plain.lower()])
    tiny = Pseudonymizer(KEY, tiny_pools())
    assert tiny.name_word("Brown", CASE, avoid=["smith"]) == "Jones"


def test_exhausted_pool_raises_without_the_original() -> None:
    tiny = Pseudonymizer(KEY, tiny_pools(last=("Smith", "Jones")))
    with pytest.raises(SurrogateExhaustedError) as info:
        tiny.name_word("Smith", CASE, avoid=["Jones"])
    assert "smith" not in str(info.value).casefold()


@pytest.mark.parametrize("name", ["Mary", "Patricia", "Linda", "Jennifer", "Susan", "MARY"])
def test_female_names_get_female_names(ps: Pseudonymizer, pools: SurrogatePools, name: str) -> None:
    for case_id in ("a", "b", "c"):
        assert ps.name_word(name, case_id).title() in pools.female_first


@pytest.mark.parametrize("name", ["John", "James", "Robert", "Michael", "William", "john"])
def test_male_names_get_male_names(ps: Pseudonymizer, pools: SurrogatePools, name: str) -> None:
    for case_id in ("a", "b", "c"):
        assert ps.name_word(name, case_id).title() in pools.male_first


@pytest.mark.parametrize("name", ["Smith", "Oyelaran", "Zzyzx", "O'Brien"])
def test_surnames_and_unknown_words_get_surnames(
    ps: Pseudonymizer, pools: SurrogatePools, name: str
) -> None:
    assert ps.name_word(name, CASE) in pools.last


def test_hyphenated_first_name_keeps_its_gender(ps: Pseudonymizer, pools: SurrogatePools) -> None:
    assert ps.name_word("Mary-Jane", CASE) in pools.female_first


@pytest.mark.parametrize("initial", list("AJZajz"))
def test_initials_stay_single_letters_of_the_same_case(ps: Pseudonymizer, initial: str) -> None:
    for case_id in ("a", "b", "c", "d", "e"):
        out = ps.name_word(initial, case_id)
        assert len(out) == 1 and out in string.ascii_letters
        assert out != initial and out.isupper() == initial.isupper()
        assert ps.name_word(initial, case_id, avoid=[out.lower()]) not in (out, initial)


def test_initial_with_dot_keeps_the_dot(ps: Pseudonymizer) -> None:
    out = ps.name_word("J.", CASE)
    assert out == ps.name_word("J", CASE) + "."


def test_empty_name_is_refused(ps: Pseudonymizer) -> None:
    with pytest.raises(ValueError):
        ps.name_word("  ", CASE)


# --- places ----------------------------------------------------------------------


def test_location_is_a_city_rendered_in_the_original_case(
    ps: Pseudonymizer, pools: SurrogatePools
) -> None:
    assert ps.location_words("New York", CASE) in pools.cities
    upper = ps.location_words("ST. LOUIS", CASE)
    assert upper.isupper() and upper.title() in {c.title() for c in pools.cities}
    lower = ps.location_words("new york", CASE)
    assert lower.islower() and lower == ps.location_words("New York", CASE).lower()


def test_location_is_consistent_across_spellings(ps: Pseudonymizer) -> None:
    assert ps.location_words("St. Louis", CASE) == ps.location_words("St Louis", CASE)


def test_location_never_original_and_avoid() -> None:
    tiny = Pseudonymizer(KEY, tiny_pools(cities=("Oslo", "Lima", "Rome")))
    for case_id in ("a", "b", "c", "d"):
        assert tiny.location_words("OSLO", case_id) != "OSLO"
        assert tiny.location_words("Paris", case_id, avoid=["oslo", "LIMA"]) == "Rome"


def test_locations_are_unlinkable_across_keys(pools: SurrogatePools) -> None:
    places = list(pools.cities[:: len(pools.cities) // 200][:200])
    a = [Pseudonymizer(KEY, pools).location_words(p, CASE) for p in places]
    b = [Pseudonymizer(OTHER_KEY, pools).location_words(p, CASE) for p in places]
    assert share_identical(a, b) < 0.05
    assert all(x != p for x, p in zip(a, places, strict=True))


# --- identifiers --------------------------------------------------------------------


def assert_same_shape(original: str, out: str) -> None:
    assert len(out) == len(original)
    for o, s in zip(original, out, strict=True):
        if o.isdigit():
            assert s.isdigit()
        elif o in string.ascii_uppercase:
            assert s in string.ascii_uppercase
        elif o in string.ascii_lowercase:
            assert s in string.ascii_lowercase
        else:
            assert s == o


@pytest.mark.parametrize(
    "original", ["MRN 0012345", "AB-12345/x", "7", "q", "2019-SE-000123", "lot L4k9-ZZ"]
)
def test_ids_keep_their_shape_and_change(ps: Pseudonymizer, original: str) -> None:
    out = ps.digits_and_letters(original, CASE)
    assert_same_shape(original, out)
    assert out != original
    assert out == ps.digits_and_letters(original, CASE)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + "-/. #", min_size=1, max_size=30))
def test_ids_keep_their_shape_for_any_input(original: str) -> None:
    ps = Pseudonymizer(KEY, tiny_pools())
    if not any(c.isalnum() for c in original):
        with pytest.raises(ValueError):
            ps.digits_and_letters(original, CASE)
        return
    out = ps.digits_and_letters(original, CASE)
    assert_same_shape(original, out)
    assert out != original


def test_ids_are_keyed_by_case_and_purpose(ps: Pseudonymizer, pools: SurrogatePools) -> None:
    ids = [f"{n:08d}" for n in range(10_000_000, 10_000_200)]
    a = [ps.digits_and_letters(i, CASE) for i in ids]
    assert share_identical(a, [ps.digits_and_letters(i, "CASE-0002") for i in ids]) < 0.05
    assert share_identical(a, [ps.digits_and_letters(i, CASE, purpose="MRN") for i in ids]) < 0.05
    other = Pseudonymizer(OTHER_KEY, pools)
    assert share_identical(a, [other.digits_and_letters(i, CASE) for i in ids]) < 0.05


def test_id_avoid_is_honoured(ps: Pseudonymizer) -> None:
    plain = ps.digits_and_letters("ab12", CASE)
    assert ps.digits_and_letters("ab12", CASE, avoid=[plain.upper()]) != plain


def test_id_without_digits_or_letters_is_refused_without_echo(ps: Pseudonymizer) -> None:
    with pytest.raises(ValueError) as info:
        ps.digits_and_letters("--//--", CASE)
    assert "--//--" not in str(info.value)


@pytest.mark.parametrize(
    "ip", ["192.168.0.1", "10.0.0.255", "255.255.255.255", "1.2.3.4", "172.16.254.99"]
)
def test_ipv4_octets_stay_valid(ps: Pseudonymizer, ip: str) -> None:
    for case_id in (f"c{i}" for i in range(50)):
        out = ps.digits_and_letters(ip, case_id, purpose="IP")
        assert out != ip
        octets = out.split(".")
        assert len(octets) == 4
        assert [len(o) for o in octets] == [len(o) for o in ip.split(".")]
        assert all(0 <= int(o) <= 255 for o in octets)


def test_ipv6_stays_hex(ps: Pseudonymizer) -> None:
    ip = "fe80::1ff:fe23:4567:890a"
    out = ps.digits_and_letters(ip, CASE, purpose="IP")
    assert out != ip and len(out) == len(ip)
    assert re.fullmatch(r"[0-9a-f:]+", out)
    assert [i for i, c in enumerate(out) if c == ":"] == [i for i, c in enumerate(ip) if c == ":"]


# --- phones ---------------------------------------------------------------------


def separators(text: str) -> list[tuple[int, str]]:
    return [(i, c) for i, c in enumerate(text) if not c.isdigit()]


@pytest.mark.parametrize(
    ("original", "prefix"),
    [
        ("+46 70-123 45 67", "+46 "),
        ("+1 (555) 123-4567", "+1 "),
        ("+353-1-234-5678", "+353-"),
        ("+46701234567", "+46"),
        ("+15551234567", "+1"),
        ("(555) 123-4567", "("),
        ("0701234567", ""),
    ],
)
def test_phone_keeps_layout_and_country_code(
    ps: Pseudonymizer, original: str, prefix: str
) -> None:
    for case_id in ("a", "b", "c"):
        out = ps.phone(original, case_id)
        assert len(out) == len(original)
        assert separators(out) == separators(original)
        assert out.startswith(prefix)
        assert out != original


def test_phone_digits_agree_across_layouts(ps: Pseudonymizer) -> None:
    spaced = ps.phone("+46 70-123 45 67", CASE)
    packed = ps.phone("+46701234567", CASE)
    assert re.sub(r"\D", "", spaced) == re.sub(r"\D", "", packed)


def test_phone_is_never_the_original_even_when_short(ps: Pseudonymizer) -> None:
    for case_id in (f"c{i}" for i in range(100)):
        assert ps.phone("+44 7", case_id) != "+44 7"
        assert ps.phone("+44", case_id) != "+44"


def test_phone_avoid_and_unlinkability(ps: Pseudonymizer, pools: SurrogatePools) -> None:
    plain = ps.phone("555-1234", CASE)
    assert ps.phone("555-1234", CASE, avoid=[plain]) != plain
    numbers = [f"+1 555 {n:07d}" for n in range(200)]
    other = Pseudonymizer(OTHER_KEY, pools)
    mine = [ps.phone(n, CASE) for n in numbers]
    assert share_identical(mine, [other.phone(n, CASE) for n in numbers]) < 0.05


# --- e-mail -----------------------------------------------------------------------


def test_email_uses_reserved_domain(ps: Pseudonymizer) -> None:
    out = ps.email("jane.doe@hospital.se", CASE)
    local, _, domain = out.partition("@")
    assert domain == EMAIL_DOMAIN == "example.org"
    assert re.fullmatch(r"[a-z]+[0-9]{2}", local)
    assert out == ps.email("Jane.Doe@Hospital.SE", CASE)


def test_email_keeps_upper_case_local_part(ps: Pseudonymizer) -> None:
    local, _, domain = ps.email("JDOE@HOSPITAL.SE", CASE).partition("@")
    assert re.fullmatch(r"[A-Z]+[0-9]{2}", local) and domain == "example.org"


def test_email_avoid_and_never_original(ps: Pseudonymizer) -> None:
    plain = ps.email("a@b.c", CASE)
    assert ps.email("a@b.c", CASE, avoid=[plain.upper()]) != plain
    assert ps.email(plain, CASE) != plain


def test_email_unlinkable_across_cases(ps: Pseudonymizer) -> None:
    addresses = [f"user{n}@mail.example.com" for n in range(200)]
    a = [ps.email(x, CASE) for x in addresses]
    b = [ps.email(x, "CASE-0002") for x in addresses]
    assert share_identical(a, b) < 0.05


# --- no PHI leaks -----------------------------------------------------------------


def test_repr_shows_fingerprints_only(ps: Pseudonymizer) -> None:
    text = repr(ps)
    assert "test-key" not in text and KEY.fingerprint in text
