"""Inverse, hybrid de-identification of pharmacovigilance case narratives.

`deid_core` is pure Python on purpose: it never imports Spark, so the same
code runs in the CLI, in unit tests and inside Spark's Python workers.

The public API, for a program that de-identifies texts without Spark::

    from deid_core import DeidPipeline, Method, load_config, load_policy, load_key
    cfg = load_config()                       # --config, $DEID_CONFIG, else conf/deid.yaml
    pipe = DeidPipeline.build(cfg, load_policy("tags", cfg.replacement.policies_dir), None,
                              method=Method.hybrid)
    [result] = pipe.process(["Seen by Dr. Smith on 12-JAN-2014."], ["case-1"])
    result.text                               # a DocumentResult

or detection alone: `build_detector(Method.hybrid, cfg, artifact)` returns a
detector whose `detect(texts)` gives one list of `MaskedToken` per text.
`load_model(model_dir, cfg)` loads the hybrid's second stage of any family
(the BiLSTM, a CRF or an SVM) and raises `ModelError` when it cannot.

The names are resolved lazily (PEP 562), so `import deid_core.text.tokenize`
in a worker does not load the network.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "DeidPipeline": "deid_core.pipeline",
    "build_detector": "deid_core.detectors",
    "Method": "deid_core.detectors",
    "load_config": "deid_core.config",
    "DeidConfig": "deid_core.config",
    "ConfigError": "deid_core.config",
    "load_policy": "deid_core.replace.policy",
    "load_key": "deid_core.replace.keys",
    "MaskedToken": "deid_core.results",
    "DocumentResult": "deid_core.results",
    "mask_everything": "deid_core.results",
    "Thresholds": "deid_core.thresholds",
    "load_model": "deid_core.models",
    "ModelError": "deid_core.model_files",
    "CATEGORIES": "deid_core.categories",
}
__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from deid_core.categories import CATEGORIES
    from deid_core.config import ConfigError, DeidConfig, load_config
    from deid_core.detectors import Method, build_detector
    from deid_core.model_files import ModelError
    from deid_core.models import load_model
    from deid_core.pipeline import DeidPipeline
    from deid_core.replace.keys import load_key
    from deid_core.replace.policy import load_policy
    from deid_core.results import DocumentResult, MaskedToken, mask_everything
    from deid_core.thresholds import Thresholds


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deid_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
