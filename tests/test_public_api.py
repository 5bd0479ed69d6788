"""The names `deid_core` exports are the library's own objects, and the documented example runs."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import deid_core

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(deid_core._EXPORTS))
def test_every_export_is_the_defining_modules_object(name: str) -> None:
    assert getattr(deid_core, name) is getattr(importlib.import_module(deid_core._EXPORTS[name]), name)
    assert name in deid_core.__all__ and name in dir(deid_core)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        deid_core.nothing_here  # noqa: B018


def test_importing_a_leaf_module_does_not_load_the_pipeline() -> None:
    code = ("import sys, deid_core.text.tokenize; "
            "print(any(m in sys.modules for m in ('deid_core.pipeline', 'deid_core.detectors', 'keras')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_documented_example_runs(cfg) -> None:  # type: ignore[no-untyped-def]
    from deid_core import DeidPipeline, DocumentResult, Method, load_policy
    from deid_core.dictionaries.artifact import DictionaryArtifact

    artifact = DictionaryArtifact.load(cfg.dictionaries.artifact)
    pipe = DeidPipeline.build(cfg, load_policy("tags", cfg.replacement.policies_dir), None,
                              method=Method.rules, artifact=artifact)
    [result] = pipe.process(["Seen by Dr. Smith on 12-JAN-2014."], ["case-1"])
    assert isinstance(result, DocumentResult)
    assert "Smith" not in result.text and "[NAME]" in result.text
