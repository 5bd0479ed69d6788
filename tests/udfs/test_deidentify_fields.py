"""The de-identification UDF body, without Spark: outputs and every fail-closed path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from udfs import runtime
from udfs.deidentify_fields import OUTPUT_COLUMNS, deidentify_batches
from udfs.runtime import PipelineSpec

REPO = Path(__file__).resolve().parents[2]
KEY = b"udf-test-key-0123456789abcdef"
SECRET = "Quackenbush"


@dataclass
class FakeBroadcast:
    value: object


@pytest.fixture()
def bcs(cfg) -> tuple[FakeBroadcast, FakeBroadcast]:  # type: ignore[no-untyped-def]
    return FakeBroadcast(Path(cfg.dictionaries.artifact).read_bytes()), FakeBroadcast(KEY)


def _frame() -> pd.DataFrame:
    rows = [
        ("C1", "1", "text:narrative", "text", None, f"Seen by Dr. {SECRET} on 12-JAN-2014; ibuprofen 400 mg."),
        ("C1", "1", "structured:patient.birth_date", "structured", "DATE", "19480112"),
        ("C1", "1", "structured:reporter[0].family_name", "structured", "NAME", SECRET),
        ("C2", "1", "text:narrative", "text", None, ""),
    ]
    df = pd.DataFrame(rows, columns=["case_id", "version", "field", "kind", "label", "text"])
    return df.assign(input_sha256="x")


def _run(spec: PipelineSpec, bcs, frame: pd.DataFrame) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    out = list(deidentify_batches(spec, *bcs)(iter([frame])))
    assert len(out) == 1 and list(out[0].columns) == list(OUTPUT_COLUMNS)
    return out[0].set_index(["case_id", "field"])


def test_rows_are_deidentified_with_versions(bcs) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("rules", "hipaa_safe_harbor", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    out = _run(spec, bcs, _frame())
    assert set(out["status"]) == {"ok"}
    assert SECRET not in " ".join(out["text_deid"])
    assert out.loc[("C1", "structured:patient.birth_date"), "text_deid"].isdigit()
    assert out.loc[("C1", "structured:patient.birth_date"), "text_deid"] != "19480112"
    assert out["policy_version"].str.startswith("hipaa_safe_harbor-").all()
    spans = out.loc[("C1", "text:narrative"), "spans"]
    assert spans and {"start", "end", "label", "replacement"} <= set(spans[0])


def test_unloadable_pipeline_masks_everything(bcs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("hybrid", "hipaa_safe_harbor", conf_dir=str(REPO / "conf"), model_dir=str(tmp_path))
    out = _run(spec, bcs, _frame())
    assert set(out["status"]) == {"failed"} and set(out["error_code"]) == {"E_LOAD"}
    assert out.loc[("C1", "text:narrative"), "text_deid"].replace("[PHI]", "").strip(" .;-") == ""
    assert out.loc[("C1", "structured:reporter[0].family_name"), "text_deid"] == "[NAME]"


def test_a_failing_chunk_is_fully_masked(bcs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    pipe = runtime.pipeline_for(spec, bcs[0].value, KEY)

    def boom(*_a, **_k):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated")

    monkeypatch.setattr(pipe, "process", boom)
    out = _run(spec, bcs, _frame())
    texts = out[out["kind"] == "text"]
    assert set(texts["error_code"]) == {"E_CHUNK"} and set(texts["status"]) == {"failed"}
    assert set(out[out["kind"] != "text"]["status"]) == {"ok"}  # values are a chunk of their own
    assert SECRET not in " ".join(out["text_deid"])


def test_a_text_the_detector_cannot_process_is_flagged(bcs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("rules", "tags", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    pipe = runtime.pipeline_for(spec, bcs[0].value, KEY)
    inner = pipe.detector.inner
    real = inner.detect

    def flaky(texts):  # type: ignore[no-untyped-def]
        if any(SECRET in t for t in texts):
            raise ValueError("simulated")
        return real(texts)

    monkeypatch.setattr(inner, "detect", flaky)
    out = _run(spec, bcs, _frame())
    assert out.loc[("C1", "text:narrative"), "error_code"] == "E_DETECT"
    assert SECRET not in out.loc[("C1", "text:narrative"), "text_deid"]
