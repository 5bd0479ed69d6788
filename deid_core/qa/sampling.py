"""How many reports each stratum gives to a QA sample, and how a sample is named.

Stratified by sender, country, narrative length and model version because
residual PHI is not spread evenly: a sender's narrative template, a
country's name and address conventions, and long narratives each carry
their own failure modes, and a gate decision is per model version. Pure
functions here; `jobs.qa_sample` does the counting and drawing in Spark.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence

import numpy as np

Stratum = tuple[str, ...]


def length_bucket(length: int, bounds: Sequence[int]) -> str:
    """A readable label of the narrative-length bucket ("<300", "300-999", ">=3000")."""
    lower = 0
    for b in bounds:
        if length < b:
            return f"<{b}" if lower == 0 else f"{lower}-{b - 1}"
        lower = b
    return f">={lower}"


def allocate(counts: Mapping[Stratum, int], n: int, seed: str) -> dict[Stratum, int]:
    """Reports to draw per stratum: proportional, at least one per stratum, `n` in all.

    With more strata than `n`, `n` strata are drawn with probability
    proportional to their size (seeded), one report each, so that small
    senders still get looked at over successive runs instead of never.
    Largest-remainder rounding keeps the total exact.
    """
    strata = sorted(s for s, c in counts.items() if c > 0)
    total = sum(counts[s] for s in strata)
    if n <= 0 or total == 0:
        return {}
    n = min(n, total)
    if len(strata) > n:
        rng = np.random.default_rng(_seed_int(seed))
        p = np.array([counts[s] for s in strata], dtype=float) / total
        chosen = rng.choice(len(strata), size=n, replace=False, p=p)
        return {strata[i]: 1 for i in sorted(chosen)}
    alloc = {s: 1 for s in strata}
    spare = n - len(strata)
    # the remaining reports go proportionally to what each stratum has left to give
    room = {s: counts[s] - 1 for s in strata}
    room_total = sum(room.values())
    if spare and room_total:
        quotas = {s: spare * room[s] / room_total for s in strata}
        for s in strata:
            alloc[s] += min(room[s], math.floor(quotas[s]))
        left = n - sum(alloc.values())
        by_remainder = sorted(strata, key=lambda s: (-(quotas[s] - math.floor(quotas[s])), s))
        for s in by_remainder:
            if left <= 0:
                break
            if alloc[s] < counts[s]:
                alloc[s] += 1
                left -= 1
    return alloc


def sample_id(run_id: str, seed: str, population_digest: str) -> str:
    """A name without PHI, stable for a re-run over the same batch ("qa-2026-11-26-3f2a9c1d")."""
    safe_run = re.sub(r"[^A-Za-z0-9._-]+", "_", run_id)[:64] or "run"
    h = hashlib.sha256(f"{seed}\0{run_id}\0{population_digest}".encode()).hexdigest()[:8]
    return f"qa-{safe_run}-{h}"


def _seed_int(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
