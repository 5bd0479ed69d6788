"""Clinical content for synthetic narratives: drugs, doses, labs, reactions.

None of this is PHI. It is here so that the sample corpus exercises the
hard part of pharmacovigilance de-identification: removing names and dates
while *keeping* the drug, dose, lab value and reaction that make a case
assessable. Templates record every such value as a :class:`Clin` piece, so
over-redaction can be measured by offset.
"""

from __future__ import annotations

import bz2
import importlib.util
import pickle
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from random import Random

_DRUG_PACKAGE = "drug_named_entity_recognition"
_DRUG_DICT_FILE = "drug_ner_dictionary.pkl.bz2"
_SIMPLE_GENERIC = re.compile(r"[a-z]{5,18}")

# Used only when the dictionary cannot be read (package missing or its data
# format changed in a later release). Generation must not fail just because
# an optional lexicon is absent, and these common generics keep samples
# realistic; the lexicon is preferred because it gives ~1,000 names.
_FALLBACK_DRUGS: tuple[str, ...] = (
    "amiodarone", "amoxicillin", "atorvastatin", "carbamazepine", "ciprofloxacin",
    "clozapine", "diclofenac", "enalapril", "furosemide", "ibuprofen",
    "isoniazid", "lamotrigine", "levofloxacin", "lisinopril", "metformin",
    "methotrexate", "metoprolol", "omeprazole", "paracetamol", "quetiapine",
    "rivaroxaban", "sertraline", "simvastatin", "tramadol", "valproate", "warfarin",
)


def _drug_dictionary_path() -> Path | None:
    """Locate the package's bundled dictionary *without importing the package*.

    Importing ``drug_named_entity_recognition`` runs its finder module, which
    unpickles the dictionary again, builds n-gram indexes and reads a cache
    file from the user's home directory. We only need the names, so we find
    the package directory via its import spec and read the file ourselves.
    """
    try:
        spec = importlib.util.find_spec(_DRUG_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _DRUG_DICT_FILE
    return path if path.is_file() else None


def _names_from_dictionary(data: object) -> list[str]:
    """Pick plain generic names from the package's canonical drug table.

    The table maps lower-case canonical names to metadata. Entries with a
    MedlinePlus id are drugs with consumer-facing monographs (the ones that
    appear in real ADR reports); one-word alphabetic names avoid combination
    products and salts that read oddly in a sentence.
    """
    if not isinstance(data, dict):
        return []
    table = data.get("drug_canonical_to_data")
    if not isinstance(table, dict):
        return []
    return sorted(
        name
        for name, info in table.items()
        if isinstance(name, str)
        and isinstance(info, dict)
        and "medline_plus_id" in info
        and _SIMPLE_GENERIC.fullmatch(name)
    )


@lru_cache(maxsize=1)
def drug_lexicon() -> tuple[str, ...]:
    """Generic drug names, sorted so that seeded choices are reproducible.

    The dictionary is a pickle shipped inside a pinned dependency; we unpickle
    it exactly as that package itself does, and never from any other path.
    """
    path = _drug_dictionary_path()
    if path is None:
        return _FALLBACK_DRUGS
    try:
        with bz2.open(path, "rb") as fh:
            names = _names_from_dictionary(pickle.load(fh))  # noqa: S301 - pinned package data
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        return _FALLBACK_DRUGS
    return tuple(names) if len(names) >= len(_FALLBACK_DRUGS) else _FALLBACK_DRUGS


# --- vocabularies -------------------------------------------------------------

REACTIONS: tuple[str, ...] = (
    "rash", "maculopapular rash", "urticaria", "pruritus", "angioedema", "anaphylaxis",
    "anaphylactic shock", "hepatitis", "drug-induced liver injury", "cholestatic jaundice",
    "acute pancreatitis", "QT prolongation", "torsade de pointes", "atrial fibrillation",
    "bradycardia", "hypotension", "syncope", "seizure", "dizziness", "headache",
    "confusion", "hallucinations", "serotonin syndrome", "neuroleptic malignant syndrome",
    "Stevens-Johnson syndrome", "toxic epidermal necrolysis", "DRESS syndrome",
    "Guillain-Barre syndrome", "Bell's palsy", "rhabdomyolysis", "myalgia",
    "acute kidney injury", "interstitial nephritis", "hyponatraemia", "hyperkalaemia",
    "hypoglycaemia", "lactic acidosis", "agranulocytosis", "neutropenia",
    "thrombocytopenia", "haemolytic anaemia", "gastrointestinal haemorrhage", "melaena",
    "nausea", "vomiting", "diarrhoea", "Clostridioides difficile colitis",
    "interstitial lung disease", "bronchospasm", "pulmonary embolism",
    "deep vein thrombosis", "tendon rupture", "peripheral neuropathy", "tinnitus",
    "blurred vision", "alopecia", "photosensitivity reaction", "fatigue", "insomnia",
    "suicidal ideation", "injection site reaction",
)
"""Adverse reaction terms, MedDRA-like; eponyms (Stevens-Johnson, Bell's) are
deliberate traps for name detectors."""

INDICATIONS: tuple[str, ...] = (
    "hypertension", "type 2 diabetes mellitus", "atrial fibrillation", "heart failure",
    "hypercholesterolaemia", "rheumatoid arthritis", "psoriasis", "Crohn's disease",
    "ulcerative colitis", "major depressive disorder", "generalised anxiety disorder",
    "schizophrenia", "bipolar disorder", "epilepsy", "migraine", "Parkinson's disease",
    "Alzheimer's disease", "asthma", "COPD", "community-acquired pneumonia",
    "urinary tract infection", "cellulitis", "HIV infection", "chronic hepatitis C",
    "breast cancer", "non-small cell lung cancer", "multiple myeloma",
    "Hodgkin lymphoma", "osteoporosis", "hypothyroidism", "Hashimoto's thyroiditis",
    "gout", "chronic back pain", "gastro-oesophageal reflux disease", "acne",
)
"""Indications and history terms, including eponymous diseases that are not PHI."""

_LABS: tuple[tuple[str, str, float, float, int], ...] = (
    # (test name, unit, low, high, decimals) -- abnormal ranges on purpose
    ("ALT", "U/L", 80, 1400, 0),
    ("AST", "U/L", 70, 1200, 0),
    ("alkaline phosphatase", "U/L", 160, 900, 0),
    ("total bilirubin", "mg/dL", 1.5, 14, 1),
    ("bilirubin", "umol/L", 30, 240, 0),
    ("INR", "", 1.3, 6.5, 1),
    ("potassium", "mmol/L", 2.5, 3.4, 1),
    ("potassium", "mmol/L", 5.6, 7.4, 1),
    ("sodium", "mmol/L", 112, 129, 0),
    ("creatinine", "mg/dL", 1.4, 6.8, 1),
    ("creatinine", "umol/L", 130, 560, 0),
    ("eGFR", "mL/min/1.73 m2", 8, 44, 0),
    ("CK", "U/L", 900, 48000, 0),
    ("haemoglobin", "g/dL", 5.9, 9.8, 1),
    ("platelets", "x10^9/L", 6, 90, 0),
    ("neutrophils", "x10^9/L", 0.1, 1.4, 1),
    ("eosinophils", "%", 8, 32, 0),
    ("QTc", "ms", 470, 620, 0),
    ("lipase", "U/L", 300, 4200, 0),
    ("glucose", "mmol/L", 1.6, 3.4, 1),
    ("TSH", "mIU/L", 0.01, 0.2, 2),
    ("CRP", "mg/L", 40, 310, 0),
    ("lactate", "mmol/L", 4.1, 12.0, 1),
)

_DOSE_FORMS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("5", "10", "20", "40", "80"), "mg"),
    (("100", "250", "500", "750", "1000"), "mg"),
    (("0.25", "0.5", "1", "2"), "mg"),
    (("25", "50", "75", "100", "125"), "mcg"),
    (("0.5", "1", "2.5", "5"), "mL"),
    (("1000", "5000", "20000"), "IU"),
    (("2", "5", "10"), "mg/kg"),
)
_FREQUENCIES: tuple[str, ...] = (
    "once daily", "twice daily", "three times daily", "daily", "every 8 hours",
    "every 12 hours", "at night", "weekly", "every 2 weeks", "every 4 weeks",
    "as needed", "BID", "TID", "QD", "q12h", "/day", "per day",
)
ROUTES: tuple[str, ...] = (
    "orally", "intravenously", "subcutaneously", "intramuscularly", "topically", "by inhalation",
)
OUTCOMES: tuple[str, ...] = (
    "recovered", "recovering", "not recovered", "recovered with sequelae", "unknown",
)
TREATMENTS: tuple[str, ...] = (
    "prednisolone", "methylprednisolone", "cetirizine", "adrenaline", "hydrocortisone",
    "ondansetron", "intravenous fluids", "vitamin K", "naloxone", "furosemide",
)
_NUMBER_WORDS: tuple[str, ...] = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
)


def number_words(n: int) -> str:
    """Spell small counts ("seven days later") the way narrators often do."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


@dataclass(frozen=True, slots=True)
class Medication:
    """A drug with the dose and route it was given at."""

    name: str
    dose: str
    route: str


def pick_drug(rng: Random, exclude: tuple[str, ...] = ()) -> str:
    """A drug name, sometimes capitalised as narrators tend to write them."""
    lexicon = drug_lexicon()
    while True:
        name = rng.choice(lexicon)
        if name not in exclude:
            break
    return name.capitalize() if rng.random() < 0.4 else name


def pick_dose(rng: Random) -> str:
    """A dose with unit and (usually) frequency: ``500 mg twice daily``, ``40 mg/day``."""
    amounts, unit = rng.choice(_DOSE_FORMS)
    amount = rng.choice(amounts)
    freq = rng.choice(_FREQUENCIES)
    if rng.random() < 0.15:
        return f"{amount} {unit}"  # single dose, e.g. "0.5 mL"
    if freq.startswith("/"):
        return f"{amount} {unit}{freq}"
    return f"{amount} {unit} {freq}"


def pick_medication(rng: Random, exclude: tuple[str, ...] = ()) -> Medication:
    """A drug, dose and route that fit together well enough for a narrative."""
    return Medication(pick_drug(rng, exclude), pick_dose(rng), rng.choice(ROUTES))


def pick_labs(rng: Random, k: int) -> list[str]:
    """``k`` abnormal results for different tests (no "potassium" twice)."""
    chosen: list[str] = []
    tests: list[str] = []
    for entry in rng.sample(_LABS, len(_LABS)):
        if len(chosen) == k:
            break
        if entry[0] not in tests:
            tests.append(entry[0])
            chosen.append(_render_lab(rng, entry))
    return chosen


def pick_lab(rng: Random) -> str:
    """An abnormal lab result such as ``ALT 245 U/L`` or ``INR 1.5``."""
    return _render_lab(rng, rng.choice(_LABS))


def _render_lab(rng: Random, entry: tuple[str, str, float, float, int]) -> str:
    name, unit, low, high, decimals = entry
    value = rng.uniform(low, high)
    shown = f"{value:.{decimals}f}" if decimals else str(int(round(value)))
    return f"{name} {shown} {unit}".rstrip() if unit != "%" else f"{name} {shown}%"


def pick_reactions(rng: Random, k: int) -> list[str]:
    """``k`` distinct reaction terms."""
    return rng.sample(REACTIONS, k)


def onset_phrase(rng: Random, days: int) -> str:
    """A time-to-onset phrase that agrees with the case timeline.

    ``days`` is onset minus start; the phrase always describes that interval,
    so a reader (or a consistency check) never sees onset before exposure.
    """
    if days <= 0:
        return rng.choice(("on the same day", "within hours of the first dose", "shortly after the first dose"))
    if days == 1:
        return rng.choice(("the next day", "one day later", "on day 2"))
    if days < 14:
        return rng.choice((
            f"{number_words(days)} days later",
            f"{days} days later",
            f"on day {days + 1}",
            f"after {days} days of treatment",
        ))
    weeks, months = days // 7, days // 30
    if days < 60:
        return rng.choice((
            f"after {weeks} weeks of treatment",
            f"approximately {number_words(weeks)} weeks later",
            f"on day {days + 1} of therapy",
        ))
    return rng.choice((
        f"{number_words(months)} months after starting treatment",
        f"after about {months} months of therapy",
        f"after {weeks} weeks of treatment",
    ))
