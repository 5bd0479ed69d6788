"""The de-identification UDF body, without Spark: outputs and every fail-closed path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from deid_core.lakehouse import FIELD_ROWS, KIND_STRUCTURED, KIND_TEXT, SILVER, field_key
from udfs import runtime
from udfs.deidentify_fields import deidentify_batches
from udfs.runtime import PipelineSpec

REPO = Path(__file__).resolve().parents[2]
KEY = b"udf-test-key-0123456789abcdef"
SECRET = "Quackenbush"
NARRATIVE = field_key(KIND_TEXT, "narrative")
BIRTH_DATE = field_key(KIND_STRUCTURED, "patient.birth_date")
FAMILY_NAME = field_key(KIND_STRUCTURED, "reporter[0].family_name")


@dataclass
class FakeBroadcast:
    value: object


@pytest.fixture()
def bcs(cfg) -> tuple[FakeBroadcast, FakeBroadcast]:  # type: ignore[no-untyped-def]
    return FakeBroadcast(Path(cfg.dictionaries.artifact).read_bytes()), FakeBroadcast(KEY)


def _frame() -> pd.DataFrame:
    rows = [
        ("C1", "1", NARRATIVE, KIND_TEXT, None, f"Seen by Dr. {SECRET} on 12-JAN-2014; ibuprofen 400 mg.", "x"),
        ("C1", "1", BIRTH_DATE, KIND_STRUCTURED, "DATE", "19480112", "x"),
        ("C1", "1", FAMILY_NAME, KIND_STRUCTURED, "NAME", SECRET, "x"),
        ("C2", "1", NARRATIVE, KIND_TEXT, None, "", "x"),
    ]
    return pd.DataFrame(rows, columns=list(FIELD_ROWS.names))


def _run(spec: PipelineSpec, bcs, frame: pd.DataFrame) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    out = list(deidentify_batches(spec, *bcs)(iter([frame])))
    assert len(out) == 1 and tuple(out[0].columns) == SILVER.names  # silver's row, as the job declares it
    return out[0].set_index(["case_id", "field"])


def test_rows_are_deidentified_with_versions(bcs) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("rules", "hipaa_safe_harbor", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    out = _run(spec, bcs, _frame())
    assert set(out["status"]) == {"ok"}
    assert SECRET not in " ".join(out["text_deid"])
    assert out.loc[("C1", BIRTH_DATE), "text_deid"].isdigit()
    assert out.loc[("C1", BIRTH_DATE), "text_deid"] != "19480112"
    assert out["policy_version"].str.startswith("hipaa_safe_harbor-").all()
    spans = out.loc[("C1", NARRATIVE), "spans"]
    assert spans and {"start", "end", "label", "replacement"} <= set(spans[0])


def test_unloadable_pipeline_masks_everything(bcs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("hybrid", "hipaa_safe_harbor", conf_dir=str(REPO / "conf"), model_dir=str(tmp_path))
    out = _run(spec, bcs, _frame())
    assert set(out["status"]) == {"failed"} and set(out["error_code"]) == {"E_LOAD"}
    assert out.loc[("C1", NARRATIVE), "text_deid"].replace("[PHI]", "").strip(" .;-") == ""
    assert out.loc[("C1", FAMILY_NAME), "text_deid"] == "[NAME]"


def test_a_failing_chunk_is_fully_masked(bcs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    pipe = runtime.pipeline_for(spec, bcs[0].value, KEY)

    def boom(*_a, **_k):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated")

    monkeypatch.setattr(pipe, "process", boom)
    out = _run(spec, bcs, _frame())
    texts = out[out["kind"] == KIND_TEXT]
    assert set(texts["error_code"]) == {"E_CHUNK"} and set(texts["status"]) == {"failed"}
    assert set(out[out["kind"] != KIND_TEXT]["status"]) == {"ok"}  # values are a chunk of their own
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
    assert out.loc[("C1", NARRATIVE), "error_code"] == "E_DETECT"
    assert SECRET not in out.loc[("C1", NARRATIVE), "text_deid"]


def test_a_failed_load_carries_the_versions_the_driver_checked(bcs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    versions = (("dictionary", "dict-x"), ("model", "model-x"), ("policy", "hipaa_safe_harbor-x"))
    spec = PipelineSpec("hybrid", "hipaa_safe_harbor", conf_dir=str(REPO / "conf"), model_dir=str(tmp_path),
                        versions=versions)
    out = _run(spec, bcs, _frame())
    assert set(out["error_code"]) == {"E_LOAD"}
    assert set(out["model_version"]) == {"model-x"} and set(out["dictionary_version"]) == {"dict-x"}


def test_a_worker_that_built_another_pipeline_than_the_driver_refuses_it(bcs) -> None:  # type: ignore[no-untyped-def]
    good = PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    actual = runtime.pipeline_for(good, bcs[0].value, KEY).versions()
    other = {**actual, "dictionary": "dict-some-other-release"}
    spec = PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"),
                        versions=tuple(sorted(other.items())))
    out = _run(spec, bcs, _frame())
    assert set(out["status"]) == {"failed"} and set(out["error_code"]) == {"E_LOAD"}
    assert SECRET not in " ".join(out["text_deid"])
    ok = _run(PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"),
                           versions=tuple(sorted(actual.items()))), bcs, _frame())
    assert set(ok["status"]) == {"ok"}


def test_processing_time_is_the_rows_own(bcs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each text row carries the seconds the pipeline spent on that text, not a chunk average."""
    spec = PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    pipe = runtime.pipeline_for(spec, bcs[0].value, KEY)
    real = pipe.process

    def with_known_times(texts, case_ids):  # type: ignore[no-untyped-def]
        results = real(texts, case_ids)
        for i, r in enumerate(results):
            r.seconds = 0.001 * (i + 1) * (100 if texts[i].startswith("Seen") else 1)
        return results

    monkeypatch.setattr(pipe, "process", with_known_times)
    out = _run(spec, bcs, _frame())
    # texts are sorted by length in a chunk: "" first (1 ms), the narrative second (200 ms)
    assert out.loc[("C2", NARRATIVE), "processing_ms"] == pytest.approx(1.0)
    assert out.loc[("C1", NARRATIVE), "processing_ms"] == pytest.approx(200.0)


def test_pipeline_times_each_text(bcs) -> None:  # type: ignore[no-untyped-def]
    spec = PipelineSpec("rules", "strict", conf_dir=str(REPO / "conf"), model_dir=str(REPO / "models/default"))
    pipe = runtime.pipeline_for(spec, bcs[0].value, KEY)
    long_text = "Seen by Dr. Quackenbush on 12-JAN-2014 at Mercy Hospital; ibuprofen 400 mg. " * 400
    results = pipe.process(["ok.", long_text, "fine."], ["C1", "C2", "C3"])
    seconds = [r.seconds for r in results]
    assert all(s > 0 for s in seconds)
    assert seconds[1] > 20 * max(seconds[0], seconds[2])  # the long text shows as the slow row


def test_mask_columns_gives_every_value_the_fail_closed_form() -> None:
    """A failed narrative-table row: each declared column as a failed field would be, NULL kept, others untouched."""
    from deid_core.results import mask_everything
    from udfs.deidentify_fields import fully_masked, mask_columns

    text = "Jane Roe (MRN 12345) took 40 mg atorvastatin; ALT 120 U/L on 03/27/2021."
    batch = pd.DataFrame({"key": ["a", "b"], "narrative": [text, None], "onset": ["2021-03-27", "x"],
                          "region": ["EU", "US"]})
    run = mask_columns({"narrative": (KIND_TEXT, None), "onset": (KIND_STRUCTURED, "DATE")})
    (out,) = list(run(iter([batch.copy()])))
    assert out["narrative"][0] == fully_masked(KIND_TEXT, None, text)[0]
    assert out["narrative"][1] is None
    assert list(out["onset"]) == ["[DATE]", "[DATE]"] and list(out["region"]) == ["EU", "US"]
    # nothing of the text survives: only separators between the masked tokens
    masked = out["narrative"][0]
    assert len(mask_everything(text)) == masked.count("[PHI]") and not any(ch.isalnum() for ch in
                                                                              masked.replace("[PHI]", ""))
