"""Executor-side functions of the training job: rule annotation and windowing.

`jobs/train_model.py` is the entry point; what it hands to `mapInPandas`
lives here so that everything that runs on executors sits in `udfs/`
(README, "jobs vs udfs"). Each factory returns a closure that loads its
inputs once per task and streams pandas frames; nothing here touches Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

TOKEN_SCHEMA = (
    "doc_id string, source string, words array<string>, chars array<string>, features array<float>, "
    "labels array<int>, gates array<int>"
)
WINDOW_SCHEMA = (
    "words array<int>, chars array<int>, features array<float>, labels array<int>, weights array<float>, "
    "gates array<int>"
)


def annotate(config_path: str, artifact_path: str, arch_json: str):  # type: ignore[no-untyped-def]
    """mapInPandas function: rules + labels per document, loaded once per task."""

    def run(frames: Iterator) -> Iterator:  # type: ignore[type-arg]
        import pandas as pd

        from deid_core.config import ArchitectureConfig, load_config
        from deid_core.corpus.document import Document
        from deid_core.corpus.document import GoldSpan
        from deid_core.deep.features import load_salutations
        from deid_core.training.data import TOKEN_COLUMNS, token_table
        from deid_core.hybrid.combiner import never_release_from
        from deid_core.dictionaries.artifact import DictionaryArtifact
        from deid_core.rules.deidentifier import RuleDeidentifier

        cfg = load_config(Path(config_path))
        rules = RuleDeidentifier(DictionaryArtifact.load(Path(artifact_path)), cfg.rules)
        sal = load_salutations(cfg)
        deep = cfg.deep
        arch = ArchitectureConfig.model_validate_json(arch_json)
        never = never_release_from(cfg)
        for pdf in frames:
            out = []
            for rec in pdf.itertuples(index=False):
                spans = [GoldSpan(int(s), int(e), str(lab)) for s, e, lab in json.loads(rec.spans)]
                doc = Document(doc_id=rec.doc_id, text=rec.text, spans=spans)
                out.append(
                    token_table(
                        doc, rec.source, rules, arch, sal, deep.classes, dict(deep.training.label_map),
                        deep.training.age_phi_min, never,
                    )
                )
            yield pd.DataFrame(out, columns=list(TOKEN_COLUMNS))

    return run


def windows(vocab_json: str, arch_json: str, seq_json: str):  # type: ignore[no-untyped-def]
    """mapInPandas function: a token table cut into padded training windows."""

    def run(frames: Iterator) -> Iterator:  # type: ignore[type-arg]
        import pandas as pd

        from deid_core.config import ArchitectureConfig, SequenceConfig
        from deid_core.training.data import WINDOW_COLUMNS, window_rows
        from deid_core.deep.vocabulary import Vocabulary

        vocab = Vocabulary.from_json(vocab_json)
        arch = ArchitectureConfig.model_validate_json(arch_json)
        seq = SequenceConfig.model_validate_json(seq_json)
        for pdf in frames:
            rows = []
            for rec in pdf.to_dict("records"):
                rows.extend(window_rows(rec, vocab, arch, seq))
            yield pd.DataFrame(rows, columns=list(WINDOW_COLUMNS))

    return run
