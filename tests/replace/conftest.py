"""Helpers for replacement tests: hand-placed masks, keys, policies."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from deid_core.config import DeidConfig
from deid_core.replace.engine import Replacer
from deid_core.replace.keys import SecretKey
from deid_core.replace.policy import Policy, load_policy
from deid_core.results import MaskedToken
from deid_core.text.tokenize import tokenize

KEY_A = SecretKey(b"test-key-A-0123456789abcdef")
KEY_B = SecretKey(b"test-key-B-0123456789abcdef")


def mask(text: str, entities: Sequence[tuple[str, str]]) -> list[MaskedToken]:
    """Mask the tokens of each (substring, label), one detector group per substring.

    Each substring is looked up after the previous one, so repeated strings
    can be listed in order.
    """
    out: list[MaskedToken] = []
    pos = 0
    for g, (sub, label) in enumerate(entities):
        start = text.index(sub, pos)
        end = start + len(sub)
        pos = end
        for t in tokenize(text):
            if t.start >= start and t.end <= end:
                out.append(MaskedToken(t.start, t.end, label, 1.0, g))
    return out


@pytest.fixture(scope="session")
def policy_of(cfg: DeidConfig):
    def load(name: str) -> Policy:
        return load_policy(name, cfg.replacement.policies_dir)

    return load


@pytest.fixture(scope="session")
def replacer_for(cfg: DeidConfig, policy_of):
    def make(name: str = "hipaa_safe_harbor", key: SecretKey | None = KEY_A, c: DeidConfig | None = None) -> Replacer:
        return Replacer(policy_of(name), c or cfg, key)

    return make
