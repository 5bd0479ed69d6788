"""Sweep the dictionary ambiguity thresholds on PhysioNet train and dev.

A word that is both an everyday word and a name or place ("Given", "Bay",
"Time") is masked everywhere when it stays on an unsafe list. This prints,
for each threshold setting, token masking recall and precision and the share
of all tokens masked, so the setting in conf/deid.yaml is measured, not
guessed. The test split is deliberately not used (it is for reporting).

    .venv/bin/python bench/ambiguity.py --surname-ranks 5000,20000,100000
"""

from __future__ import annotations

import argparse

from _common import PHYSIONET, require

from deid_core.config import load_config
from deid_core.corpus.jsonl import read_jsonl
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.dictionaries.build import build_payload
from deid_core.evaluation.corpus import evaluate_corpus
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts
from deid_core.detectors import RulesDetector
from deid_core.rules.deidentifier import RuleDeidentifier


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x]


def evaluate(rules: RuleDeidentifier, split: str, hipaa: HipaaMap) -> Counts:
    docs = read_jsonl(require(PHYSIONET / f"{split}.jsonl"))
    return evaluate_corpus(docs, hipaa, detector=RulesDetector(rules)).counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--first-ranks", type=_ints, default=None)
    ap.add_argument("--surname-ranks", type=_ints, default=None)
    ap.add_argument("--city-populations", type=_ints, default=None)
    ap.add_argument("--very-common-surname-ranks", type=_ints, default=None)
    ap.add_argument("--very-common-city-populations", type=_ints, default=None)
    args = ap.parse_args()
    cfg = load_config()
    base = cfg.dictionaries.ambiguity
    hipaa = HipaaMap.load(cfg.evaluation.label_map)
    grid = [("base", {})]
    for name, key in (("first_ranks", "common_word_max_first_name_rank"),
                      ("surname_ranks", "common_word_max_surname_rank"),
                      ("city_populations", "common_word_min_city_population"),
                      ("very_common_surname_ranks", "very_common_word_max_surname_rank"),
                      ("very_common_city_populations", "very_common_word_min_city_population")):
        for v in getattr(args, name) or []:
            grid.append((f"{key}={v}", {key: v}))
    print(f"{'setting':45s} {'split':5s} {'recall':>7s} {'prec.':>7s} {'masked':>7s} {'missed':>6s}")
    for label, change in grid:
        amb = base.model_copy(update=change)
        c = cfg.model_copy(update={"dictionaries": cfg.dictionaries.model_copy(update={"ambiguity": amb})})
        art = DictionaryArtifact.from_payload(build_payload(c))
        rules = RuleDeidentifier(art, c.rules)
        for split in ("train", "dev"):
            r = evaluate(rules, split, hipaa)
            print(f"{label:45s} {split:5s} {r.recall:7.4f} {r.precision:7.4f} "
                  f"{r.predicted_tokens / r.tokens:7.4f} {r.gold_tokens - r.caught:6d}", flush=True)


if __name__ == "__main__":
    main()
