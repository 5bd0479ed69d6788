"""The release gate: fail closed per model version, latest complete sample decides."""

from __future__ import annotations

from deid_core.qa.gate import decide


def row(sample: str, model: str, created: str, upper: float, complete: bool = True, over: float = 0.1) -> dict:
    return {"sample_id": sample, "model_version": model, "sample_created_at": created, "complete": complete,
            "tokens": 5000, "missed_phi": 1, "residual_phi_upper": upper, "over_masking_upper": over}


def test_no_reviewed_sample_refuses() -> None:
    d = decide({"m1"}, [row("s1", "m1", "2026-11-01", 0.0001, complete=False)], max_residual_phi_upper=0.001)
    assert not d.allowed and "no completely reviewed" in d.summary()


def test_the_latest_complete_sample_decides_not_the_best_one() -> None:
    rows = [row("old", "m1", "2026-11-01", 0.0002), row("new", "m1", "2026-11-20", 0.004),
            row("newest-unfinished", "m1", "2026-11-25", 0.0001, complete=False)]
    d = decide({"m1"}, rows, max_residual_phi_upper=0.001)
    assert not d.allowed and d.verdicts[0].sample_id == "new"
    assert decide({"m1"}, rows, max_residual_phi_upper=0.005).allowed


def test_every_model_version_of_the_batch_must_pass() -> None:
    rows = [row("s1", "m1", "2026-11-01", 0.0002)]
    d = decide({"m1", "m2"}, rows, max_residual_phi_upper=0.001)
    assert not d.allowed and [v.allowed for v in d.verdicts] == [True, False]
    assert decide(set(), rows, max_residual_phi_upper=0.001).allowed  # nothing to publish


def test_optional_over_masking_limit() -> None:
    rows = [row("s1", "m1", "2026-11-01", 0.0002, over=0.6)]
    assert decide({"m1"}, rows, max_residual_phi_upper=0.001).allowed
    d = decide({"m1"}, rows, max_residual_phi_upper=0.001, max_over_masking_upper=0.5)
    assert not d.allowed and "over-masking" in d.summary()


def test_the_limit_is_inclusive() -> None:
    assert decide({"m1"}, [row("s1", "m1", "2026-11-01", 0.001)], max_residual_phi_upper=0.001).allowed
