"""The PHI category vocabulary, defined once for the whole engine.

A category name travels from the detector that finds a token through the
network, the combiner, the policy that decides its replacement, the E2B
structured fields, the synthetic gold spans and the QA report. Were each of
them to spell out its own list, the lists could drift apart and a category
one step produces would be one the next step rejects or silently treats as
unknown. Every other declaration (the configuration's and the policy's
`Literal` types, the pattern detector's categories, the E2B and synthetic
labels) is derived from the tuples below.

The categories, in the order reports and error messages list them:

* ``NAME``     -- a person's name (patient, relative, reporter, physician);
* ``DATE``     -- a date or a part of one (day, month, weekday, holiday);
* ``AGE``      -- an age (HIPAA identifies ages over 89 only);
* ``LOCATION`` -- a place: address, street, city, state, country, hospital;
* ``PHONE``    -- a telephone or fax number;
* ``EMAIL``    -- an e-mail address;
* ``URL``      -- a web address;
* ``IP``       -- an IP address;
* ``ID``       -- any identifying number or code (record, case, licence);
* ``OTHER``    -- PHI of a known kind outside the above (a profession);
* ``PHI`` (:data:`UNKNOWN_LABEL`) -- masked, but nobody knows what it is; it
  can only ever be tagged with the generic placeholder.

``SAFE`` (:data:`SAFE_LABEL`) is no PHI category: it is the rules' label of
a token they let through and the network's class 0.

Subsets:

* :data:`CATEGORIES` -- all of the above but SAFE: what a policy profile may
  name (``Category``) and what a masked entity may be labelled;
* :data:`PATTERN_CATEGORIES` -- what the regex detectors find
  (``PatternCategory``); names and places come from dictionaries and context;
* :data:`MODEL_CLASSES` -- the network's classes (``ModelClass``): SAFE
  first, then every category but IP (left to its pattern) and PHI;
* :data:`E2B_LABELS` -- what an E2B structured value is replaced as
  (``E2BLabel``): every category but URL, IP and PHI;
* :data:`SYNTHETIC_LABELS` -- the gold labels of the synthetic corpus:
  every category but IP, OTHER and PHI.

The ``Literal`` types are built from the tuples at run time, which pydantic
validates exactly as if written out (same error messages); a static type
checker cannot read them and does not check them.
"""

from __future__ import annotations

from typing import Literal

#: The category of a token that is masked but whose kind nobody knows.
UNKNOWN_LABEL = "PHI"
#: Not PHI: the rules' label of a released token and the network's class 0.
SAFE_LABEL = "SAFE"

#: Every PHI category, the unknown one last.
CATEGORIES: tuple[str, ...] = (
    "NAME", "DATE", "AGE", "LOCATION", "PHONE", "EMAIL", "URL", "IP", "ID", "OTHER", UNKNOWN_LABEL,
)


def _without(*left_out: str) -> tuple[str, ...]:
    """The categories but `left_out`, in vocabulary order."""
    unknown = set(left_out) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"not categories: {sorted(unknown)}")
    return tuple(c for c in CATEGORIES if c not in left_out)


#: What the regex detectors find.
PATTERN_CATEGORIES: tuple[str, ...] = _without("NAME", "LOCATION", "OTHER", UNKNOWN_LABEL)
#: The network's classes: SAFE is class 0.
MODEL_CLASSES: tuple[str, ...] = (SAFE_LABEL, *_without("IP", UNKNOWN_LABEL))
#: What an E2B structured value is replaced as.
E2B_LABELS: tuple[str, ...] = _without("URL", "IP", UNKNOWN_LABEL)
#: The gold labels of the synthetic corpus (i2b2 2014 categories, contacts split out).
SYNTHETIC_LABELS: tuple[str, ...] = _without("IP", "OTHER", UNKNOWN_LABEL)

Category = Literal[CATEGORIES]  # type: ignore[valid-type]
PatternCategory = Literal[PATTERN_CATEGORIES]  # type: ignore[valid-type]
ModelClass = Literal[MODEL_CLASSES]  # type: ignore[valid-type]
E2BLabel = Literal[E2B_LABELS]  # type: ignore[valid-type]
