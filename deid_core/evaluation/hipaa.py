"""Which gold labels count as HIPAA Safe Harbor identifiers.

Corpora label more than HIPAA requires (i2b2 adds hospitals, doctors,
professions, all ages); the method is compared with the literature on HIPAA
recall, so the mapping lives in `conf/labels.yaml` where it can be audited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml


#: the number an AGE token starts with ("51" of "51M")
_LEADING_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class HipaaMap:
    categories: dict[str, str | None]
    age_threshold: int = 90

    @classmethod
    def load(cls, path: Path, age_threshold: int = 90) -> HipaaMap:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        mapping = raw.get("hipaa")
        if not isinstance(mapping, dict):
            raise ValueError(f"{path}: expected a 'hipaa' mapping of label -> category or null")
        return cls({str(k): (None if v is None else str(v)) for k, v in mapping.items()}, age_threshold)

    def is_hipaa(self, label: str, token_text: str) -> bool:
        """Unknown labels count as HIPAA (fail safe); ages below the threshold do not.

        An AGE token without a leading number ("ninety", "y.o.") counts as HIPAA (fail safe).
        """
        if label in self.categories and self.categories[label] is None:
            return False
        if label == "AGE":
            # "45", and the number of a token that glues it to a sex or unit letter ("51M", "80Y", "30s")
            head = _LEADING_DIGITS.match(token_text)
            if head and int(head.group()) < self.age_threshold:
                return False
        return True

