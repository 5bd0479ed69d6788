"""QA sample -> reviewers' marks -> rates with exact bounds -> gated publish, on local Spark and Delta.

The tests share one lake and run in file order: the tampered-review test
leaves an incomplete sample behind, which the gate must then ignore.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from deid_core.lakehouse import (
    GOLD,
    KIND_TEXT,
    PENDING,
    PUBLISH_LOG,
    QA_METRICS,
    QA_REVIEW_ITEMS,
    QA_SAMPLE_ITEMS,
    split_field_key,
)
from tests.spark.conftest import assert_layout, write_synthetic_e2b

pytestmark = pytest.mark.spark

RUN = "2026-11-26"


@pytest.fixture(scope="module")
def lake(spark, tmp_path_factory: pytest.TempPathFactory, key_file: Path):  # type: ignore[no-untyped-def]
    """Bronze and silver of 16 synthetic reports (rules method: the flow, not the model, is under test)."""
    from jobs.deidentify import prepare, run_batch
    from jobs.ingest_e2b import ingest
    from jobs.tables import Tables

    root = tmp_path_factory.mktemp("qa")
    write_synthetic_e2b(root / "in", 16, seed=11, files=4)
    tables = Tables(root / "lake")
    ingest(spark, str(root / "in"), tables)
    ctx = prepare(spark, config=None, policy="hipaa_safe_harbor", method="rules", key_file=key_file, model_dir=None)
    run_batch(spark, tables, ctx)
    return tables


def qa_config(tmp: Path, **gate: float):  # type: ignore[no-untyped-def]
    from deid_core.qa.config import load_qa_config

    cfg = load_qa_config()
    return cfg.model_copy(update={
        "qa_dir": tmp / "qa",
        "sample": cfg.sample.model_copy(update={"reports": 6}),
        "gate": cfg.gate.model_copy(update=gate),
    })


def review(sample_file: Path, inbox: Path, name: str, *, misses: int = 0, skip_last: bool = False) -> list[dict]:
    """What a reviewer does: mark every item reviewed, optionally calling released words missed PHI."""
    lines = [json.loads(x) for x in sample_file.read_text(encoding="utf-8").splitlines()]
    from deid_core.text.tokenize import tokenize

    left = misses
    for rec in lines[:-1] if skip_last else lines:
        rec["reviewed"], rec["reviewer"] = True, "QA1"
        if left:
            masked = [(m["start"], m["end"]) for m in rec["masked"]]
            for tok in tokenize(rec["original"]):
                if left and not any(s < tok.end and tok.start < e for s, e in masked):
                    rec["missed_phi"].append({"start": tok.start, "end": tok.end})
                    left -= 1
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    return lines


def test_tampered_or_unknown_review_lines_are_reported_without_text(spark, lake, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from jobs import qa_ingest_review, qa_sample

    cfg = qa_config(tmp_path, max_residual_phi_upper=0.05)
    sid, _ = qa_sample.run(spark, lake, cfg, "2026-11-20")
    assert sid is not None
    lines = review(cfg.samples_dir / sid / "review.jsonl", cfg.inbox_dir, "bad.jsonl")
    secret = lines[0]["original"][:40]
    lines[0]["original"] = "Jane Roe was here. " + lines[0]["original"]
    lines[1]["item_id"] = "r999-f99"
    (cfg.inbox_dir / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    metrics, problems = qa_ingest_review.run(spark, lake, cfg)
    errors = (cfg.inbox_dir / "bad.jsonl.errors.txt").read_text()
    assert len(errors.splitlines()) == 2 and "r999-f99" in errors
    assert "Jane Roe" not in errors and secret not in errors
    (m,) = [m for m in metrics if m["sample_id"] == sid]
    assert m["reviewed_items"] == len(lines) - 2 and not m["complete"]


def test_sample_review_gate_publish(spark, lake, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from scipy.stats import beta

    from jobs import publish, qa_ingest_review, qa_sample
    from jobs.pending import pending_reports

    cfg = qa_config(tmp_path, max_residual_phi_upper=0.05)
    n_reports = spark.read.format("delta").load(lake.bronze).count()

    # 1. the sample: stratified, private, complete, and never redrawn for the same batch
    sid, msg = qa_sample.run(spark, lake, cfg, RUN)
    assert sid is not None and sid.startswith(f"qa-{RUN}-"), msg
    folder = cfg.samples_dir / sid
    assert {p.name for p in folder.iterdir()} == {"report.html", "review.jsonl", "sample.json"}
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    manifest = json.loads((folder / "sample.json").read_text())
    assert manifest["sampled_reports"] == 6 and manifest["population_reports"] == n_reports
    lines = [json.loads(x) for x in (folder / "review.jsonl").read_text().splitlines()]
    items = spark.read.format("delta").load(lake.qa_sample_items).filter(f"sample_id = '{sid}'").collect()
    assert len(lines) == len(items) == manifest["items"] > 0
    assert len({(r.case_id, r.version) for r in items}) == 6
    assert {r["kind"] for r in lines} == {KIND_TEXT}  # structured values are not sampled by default
    # a redraw would change what reviewers are working on
    before = (folder / "review.jsonl").stat().st_mtime_ns
    again, msg = qa_sample.run(spark, lake, cfg, RUN)
    assert again == sid and "already drawn" in msg and (folder / "review.jsonl").stat().st_mtime_ns == before

    # 2. no review yet: the gate refuses and gold stays empty
    decision, published = publish.run(spark, lake, cfg, RUN)
    assert not decision.allowed and published == 0
    assert "no completely reviewed QA sample" in decision.summary()
    assert not os.path.exists(lake.published)

    # 3. a partial review does not count
    review(folder / "review.jsonl", cfg.inbox_dir, "partial.jsonl", skip_last=True)
    metrics = [m for m in qa_ingest_review.run(spark, lake, cfg)[0] if m["sample_id"] == sid]
    assert [m["complete"] for m in metrics] == [False]
    assert not publish.run(spark, lake, cfg, RUN)[0].allowed

    # 4. a complete review with 3 missed-PHI tokens: the exact bound, and a refusal at a tight limit
    os.remove(cfg.inbox_dir / "partial.jsonl")
    review(folder / "review.jsonl", cfg.inbox_dir, "full.jsonl", misses=3)
    (m,) = [m for m in qa_ingest_review.run(spark, lake, cfg)[0] if m["sample_id"] == sid]
    assert m["complete"] and m["missed_phi"] == 3 and m["tokens"] > 100
    assert m["residual_phi_upper"] == pytest.approx(beta.ppf(0.95, 4, m["tokens"] - 3))
    assert m["residual_phi_rate"] == pytest.approx(3 / m["tokens"])
    tight = qa_config(tmp_path, max_residual_phi_upper=m["residual_phi_upper"] / 2)
    decision, published = publish.run(spark, lake, tight, RUN)
    assert not decision.allowed and published == 0 and "residual-PHI upper bound" in decision.summary()

    # 5. a corrected file replaces the verdicts (newest wins): no misses, the gate passes, gold gets the batch
    os.utime(cfg.inbox_dir / "full.jsonl", (1, 1))
    review(folder / "review.jsonl", cfg.inbox_dir, "corrected.jsonl", misses=0)
    (m,) = [m for m in qa_ingest_review.run(spark, lake, cfg)[0] if m["sample_id"] == sid]
    assert m["missed_phi"] == 0 and m["residual_phi_upper"] == pytest.approx(1 - 0.05 ** (1 / m["tokens"]))
    decision, published = publish.run(spark, lake, cfg, RUN)
    assert decision.allowed and published == n_reports
    gold = spark.read.format("delta").load(lake.published)
    assert gold.count() == n_reports and gold.groupBy("case_id", "version").count().filter("count > 1").count() == 0
    # gold holds the de-identified text, exactly as silver has it
    silver = {(r.case_id, r.version, split_field_key(r.field)[1]): r.text_deid for r in
              spark.read.format("delta").load(lake.silver).filter(f"kind = '{KIND_TEXT}'").collect()}
    for row in gold.collect():
        for f in row.text_fields:
            assert f.text == silver[(row.case_id, row.version, f.path)]
    # 6. nothing is pending any more: a re-run publishes nothing and draws no new sample
    assert pending_reports(spark, lake).count() == 0
    assert_layout(spark, pending_reports(spark, lake), PENDING)
    assert publish.run(spark, lake, cfg, RUN) [1] == 0
    assert qa_sample.run(spark, lake, cfg, "2026-11-27")[0] is None
    log = spark.read.format("delta").load(lake.publish_log).collect()
    assert sorted((r.allowed, r.reports) for r in log) == [
        (False, n_reports)] * 3 + [(True, 0), (True, n_reports)]
    # the tables hold exactly the rows `deid_core.lakehouse` declares
    for path, layout in ((lake.published, GOLD), (lake.publish_log, PUBLISH_LOG),
                         (lake.qa_sample_items, QA_SAMPLE_ITEMS), (lake.qa_review_items, QA_REVIEW_ITEMS),
                         (lake.qa_metrics, QA_METRICS)):
        assert_layout(spark, spark.read.format("delta").load(path), layout)
