"""Replacement: turn masked entities into informative, safe surrogates.

The flow is: masked tokens -> entities (`entities`) -> per-category action
from the policy profile (`policy`) -> surrogate text (`dates`, `pseudonyms`,
`ages`) -> rendered document (`engine`). Secrets come from `keys`.
"""
