"""Read reviewers' marks back and compute the QA rates the release gate uses.

    python -m jobs.qa_ingest_review --tables build/lakehouse [--qa-config conf/qa.yaml]

Reviewers put their filled-in `review.jsonl` files (any name, `*.jsonl`) in
`<qa_dir>/inbox/`. Every run reads them all again (a corrected file simply
replaces its earlier verdicts; the newest file wins for an item), so the
job is idempotent. A line is accepted only if its sample and item exist and
its original text is byte for byte the one the sample showed (sha256); the
problems of a file are written next to it as `<file>.errors.txt`, naming
lines and items, never text. Then, per sample and model version, the
residual-PHI rate (missed PHI tokens per token reviewed) and the
over-masking rate (masked clinical tokens per masked token) are computed
with exact one-sided Clopper-Pearson upper bounds into `qa_metrics`; a
sample counts for the gate only once every one of its items is reviewed.
Each run records one row in the run log (`jobs.run_log`): review files
in, reviewed items accepted out, and the number of problems.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer
from pyspark.sql import SparkSession

from deid_core.lakehouse import QA_METRICS, QA_REVIEW_ITEMS
from deid_core.qa.config import QaConfig, load_qa_config
from deid_core.qa.review import ItemCounts, aggregate, count_item, read_review_jsonl
from jobs.run_log import JobRunLog, job_run
from jobs.tables import Tables, exists, merge

app = typer.Typer(add_completion=False, help=__doc__)

#: the run log's name of this job
JOB = "qa_ingest_review"


def read_inbox(inbox: Path, expected: dict[tuple[str, str], dict[str, Any]]) -> tuple[dict, dict[Path, list[str]]]:
    """Accepted reviewed lines by item (newest file wins) and each file's problems."""
    accepted: dict[tuple[str, str], dict[str, Any]] = {}
    problems: dict[Path, list[str]] = {}
    files = sorted(inbox.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name)) if inbox.is_dir() else []
    for path in files:
        records, errors = read_review_jsonl(path)
        errors = list(errors)
        for rec in records:
            key = (rec.sample_id, rec.item_id)
            want = expected.get(key)
            if want is None:
                errors.append(f"{path.name}: {rec.item_id}: no such item in sample {rec.sample_id}")
                continue
            if rec.original_sha256 != want["original_sha256"] or rec.model_version != want["model_version"]:
                errors.append(f"{path.name}: {rec.item_id}: original text or model version differs from the sample")
                continue
            if not rec.reviewed:
                continue
            c = count_item(rec)
            accepted[key] = {
                "sample_id": rec.sample_id, "item_id": rec.item_id, "model_version": rec.model_version,
                "reviewer": rec.reviewer, "tokens": c.tokens, "released": c.released, "masked": c.masked,
                "missed_phi": c.missed_phi, "over_masked": c.over_masked, "source_file": path.name,
            }
        problems[path] = errors
    return accepted, problems


def write_problem_files(problems: dict[Path, list[str]]) -> None:
    for path, errors in problems.items():
        report = path.with_name(path.name + ".errors.txt")
        if errors:
            report.write_text("\n".join(errors) + "\n", encoding="utf-8")
            os.chmod(report, 0o600)
        elif report.exists():
            report.unlink()


def compute_metrics(expected: dict[tuple[str, str], dict[str, Any]], reviewed: dict[tuple[str, str], dict[str, Any]],
                    confidence: float) -> list[dict[str, Any]]:
    """One row per (sample, model version) from the expected items and the reviewed ones."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for key, item in expected.items():
        groups[(item["sample_id"], item["model_version"])].append(key)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    rows = []
    for (sid, mv), keys in sorted(groups.items()):
        done = [reviewed[k] for k in keys if k in reviewed]
        counts = [ItemCounts(r["tokens"], r["released"], r["masked"], r["missed_phi"], r["over_masked"]) for r in done]
        m = aggregate(counts, items=len(keys), reviewed_items=len(done), confidence=confidence)
        first = expected[keys[0]]
        rows.append({
            "sample_id": sid, "model_version": mv, "sample_created_at": first["sample_created_at"],
            "run_id": first["run_id"], "items": m.items, "reviewed_items": m.reviewed_items, "complete": m.complete,
            "tokens": m.tokens, "released": m.released, "masked": m.masked, "missed_phi": m.missed_phi,
            "over_masked": m.over_masked, "residual_phi_rate": m.residual_phi_rate,
            "residual_phi_upper": m.residual_phi_upper, "over_masking_rate": m.over_masking_rate,
            "over_masking_upper": m.over_masking_upper, "confidence": m.confidence, "computed_at": now,
        })
    return rows


def run(spark: SparkSession, tables: Tables, cfg: QaConfig,
        log: JobRunLog | None = None) -> tuple[list[dict[str, Any]], dict[Path, list[str]]]:
    """Read the inbox, MERGE the accepted verdicts, recompute `qa_metrics`; `log` gets the counts when given."""
    if not exists(spark, tables.qa_sample_items):
        if log is not None:
            log.input_count, log.output_count = 0, 0
        return [], {}
    expected = {(r["sample_id"], r["item_id"]): r.asDict() for r in spark.read.format("delta").load(
        tables.qa_sample_items).select("sample_id", "item_id", "model_version", "original_sha256",
                                       "sample_created_at", "run_id").collect()}
    accepted, problems = read_inbox(cfg.inbox_dir, expected)
    write_problem_files(problems)
    if log is not None:
        log.input_count, log.output_count = len(problems), len(accepted)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if accepted:
        rows = [{**r, "ingested_at": now} for r in accepted.values()]
        df = spark.createDataFrame([tuple(r[c] for c in QA_REVIEW_ITEMS.names) for r in rows], QA_REVIEW_ITEMS.schema)
        merge(spark, df, tables.qa_review_items, QA_REVIEW_ITEMS.key,
              changed=["reviewer", "tokens", "released", "masked", "missed_phi", "over_masked", "source_file"])
    reviewed: dict[tuple[str, str], dict[str, Any]] = {}
    if exists(spark, tables.qa_review_items):
        for r in spark.read.format("delta").load(tables.qa_review_items).collect():
            reviewed[(r["sample_id"], r["item_id"])] = r.asDict()
    metrics = compute_metrics(expected, reviewed, cfg.review.confidence)
    df = spark.createDataFrame([tuple(m[c] for c in QA_METRICS.names) for m in metrics], QA_METRICS.schema)
    # small and fully recomputed from the two item tables: an overwrite is the idempotent write
    df.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(tables.qa_metrics)
    return metrics, problems


@app.command()
def main(
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    qa_config: Path = typer.Option(None, "--qa-config", help="QA config (default: conf/qa.yaml)"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
) -> None:
    from jobs.spark_session import session_or_exit

    cfg = load_qa_config(qa_config)
    t0 = time.perf_counter()
    spark = session_or_exit("deid-qa-ingest-review", master=master)
    t = Tables(tables.resolve())
    with job_run(spark, t, job=JOB) as log:
        metrics, problems = run(spark, t, cfg, log)
        bad = {p.name: len(e) for p, e in problems.items() if e}
        # in: review files, out: reviewed items accepted; reviewers' typos are theirs to fix
        # (the .errors.txt files), not failed rows of the job
        log.detail.update(problems=str(sum(bad.values())), samples=str(len({m["sample_id"] for m in metrics})),
                          complete_samples=str(len({m["sample_id"] for m in metrics if m["complete"]})))
        _echo_result(cfg, metrics, problems, bad, t0)


def _echo_result(cfg: QaConfig, metrics: list[dict[str, Any]], problems: dict[Path, list[str]],
                 bad: dict[str, int], t0: float) -> None:
    typer.echo(f"qa review: {len(problems)} review files read, {sum(bad.values())} problems"
               + (f" (see {', '.join(n + '.errors.txt' for n in sorted(bad))} in {cfg.inbox_dir})" if bad else ""))
    for m in metrics:
        typer.echo(
            f"  {m['sample_id']} {m['model_version']}: {m['reviewed_items']}/{m['items']} items reviewed"
            f"{'' if m['complete'] else ' (incomplete: not used by the gate)'}; {m['tokens']} tokens, "
            f"{m['missed_phi']} missed PHI -> residual-PHI rate {m['residual_phi_rate']:.5f}, "
            f"upper {m['residual_phi_upper']:.5f}; over-masking {m['over_masking_rate']:.4f} "
            f"(upper {m['over_masking_upper']:.4f}) at {m['confidence']:.0%}")
    typer.echo(f"({time.perf_counter() - t0:.1f}s)")


if __name__ == "__main__":
    app()
