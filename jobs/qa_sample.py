"""Draw a stratified QA sample of the batch awaiting publication, for human review.

    python -m jobs.qa_sample --tables build/lakehouse --run-id 2026-11-26 [--qa-config conf/qa.yaml]

Strata are sender x country x narrative length x model version
(`deid_core.qa.sampling`); reports inside a stratum are drawn in the order
of a seeded hash, so a re-run for the same date and batch draws the same
reports and finds the sample already there (it never overwrites a sample
reviewers may be working on). Per sample, under `<qa_dir>/samples/<id>/`:
`report.html` (original with masked spans highlighted beside the
de-identified text), `review.jsonl` (one line per field for reviewers'
marks) and `sample.json` (sizes and versions, no text; written last, it
marks the sample complete). The `qa_sample_items` table records what the
sample holds (ids and hashes, never text) for the review ingest and the gate.
The page also shows the run log of the batch (`jobs.run_log`): the
`job_runs` rows of this run (ingest, de-identification), or the latest run
of each job when this run has none, and the job records its own row.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import typer
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deid_core.lakehouse import KIND_STRUCTURED, KIND_TEXT, PENDING, QA_SAMPLE_ITEMS
from deid_core.qa.config import QaConfig, load_qa_config
from deid_core.qa.html_report import write_sample_html
from deid_core.qa.items import MaskedSpan, ReviewItem, SampleInfo
from deid_core.qa.review import write_review_jsonl
from deid_core.qa.sampling import allocate, length_bucket, sample_id as make_sample_id
from deid_core.runs import JobRun, resolve_run_id
from jobs.pending import pending_reports, population_digest
from jobs.run_log import JobRunLog, batch_runs, job_run
from jobs.tables import Tables, field_key_column, merge

app = typer.Typer(add_completion=False, help=__doc__)

#: the run log's name of this job
JOB = "qa_sample"
#: jobs the page's run log leaves out: the QA loop's own, which do not make the batch
_NOT_BATCH_JOBS = (JOB, "qa_ingest_review", "publish")

STRATA = ("sender", "country", "length_bucket", "model_version")


def _bucket_expr(col: F.Column, bounds: list[int]) -> F.Column:
    expr = F.lit(length_bucket(bounds[-1], bounds)) if bounds else F.lit("all")
    for b in reversed(bounds):
        expr = F.when(col < b, F.lit(length_bucket(b - 1, bounds))).otherwise(expr)
    return expr


def with_strata(pending: DataFrame, bounds: list[int]) -> DataFrame:
    narrative = F.filter("text_fields", lambda f: f["path"] == "narrative")
    length = F.coalesce(F.length(F.element_at(narrative, 1)["text"]), F.lit(0))
    return pending.select(
        *PENDING.key, "content_sha256",
        F.coalesce("sender", F.lit("unknown")).alias("sender"),
        F.coalesce("country", F.lit("unknown")).alias("country"),
        _bucket_expr(length, bounds).alias("length_bucket"),
        F.concat_ws("+", "model_versions").alias("model_version"),
    )


def draw(spark: SparkSession, population: DataFrame, n: int, seed: str) -> tuple[list[dict], int, int]:
    """The drawn reports (key, strata, weight), the population size and the number of strata."""
    counts = {tuple(r[c] for c in STRATA): int(r["count"]) for r in population.groupBy(*STRATA).count().collect()}
    quotas = allocate(counts, n, seed)
    if not quotas:
        return [], sum(counts.values()), len(counts)
    quota_df = spark.createDataFrame([(*s, q, counts[s]) for s, q in quotas.items()],
                                     [*STRATA, "quota", "stratum_size"])
    from pyspark.sql import Window

    order = F.sha2(F.concat_ws("\u0000", F.lit(seed), "case_id", "version"), 256)
    w = Window.partitionBy(*STRATA).orderBy(order)
    drawn = (population.join(F.broadcast(quota_df), list(STRATA))
             .withColumn("_rank", F.row_number().over(w)).filter("_rank <= quota")
             .withColumn("_order", order).orderBy(*STRATA, "_order").collect())
    rows = [{**{k: r[k] for k in (*PENDING.key, *STRATA)}, "weight": r["stratum_size"] / r["quota"]} for r in drawn]
    return rows, sum(counts.values()), len(counts)


def fetch_items(spark: SparkSession, tables: Tables, drawn: list[dict], sid: str,
                include_structured: bool) -> list[ReviewItem]:
    """Original and de-identified text of every field of the drawn reports."""
    keys = spark.createDataFrame([(d["case_id"], d["version"]) for d in drawn], list(PENDING.key))
    silver = spark.read.format("delta").load(tables.silver).join(F.broadcast(keys), list(PENDING.key))
    if not include_structured:
        silver = silver.filter(F.col("kind") == KIND_TEXT)
    bronze = spark.read.format("delta").load(tables.bronze).join(F.broadcast(keys), list(PENDING.key))
    originals = bronze.select(*PENDING.key, F.explode("text_fields").alias("f")).select(
        *PENDING.key, field_key_column(KIND_TEXT, "f.path").alias("field"), F.col("f.text").alias("original"),
    ).unionByName(bronze.select(*PENDING.key, F.explode("structured_fields").alias("f")).select(
        *PENDING.key, field_key_column(KIND_STRUCTURED, "f.path").alias("field"), F.col("f.value").alias("original"),
    ))
    rows = silver.join(originals, [*PENDING.key, "field"], "left").collect()
    by_report: dict[tuple[str, str], list] = {}
    for r in rows:
        by_report.setdefault((r["case_id"], r["version"]), []).append(r)
    items: list[ReviewItem] = []
    for no, d in enumerate(drawn, start=1):
        fields = sorted(by_report.get((d["case_id"], d["version"]), []),
                        key=lambda r: (r["kind"] != KIND_TEXT, r["field"]))
        for j, r in enumerate(fields, start=1):
            spans = tuple(sorted((MaskedSpan(s["start"], s["end"], s["label"], s["replacement"]) for s in r["spans"] or []),
                                 key=lambda s: (s.start, s.end)))
            items.append(ReviewItem(
                sample_id=sid, item_id=f"r{no:03d}-f{j:02d}", report_no=no, case_id=d["case_id"], version=d["version"],
                field=r["field"], kind=r["kind"], label=r["label"], model_version=r["model_version"] or "",
                policy_version=r["policy_version"] or "", original=r["original"] or "", deidentified=r["text_deid"] or "",
                spans=spans, strata={k: str(d[k]) for k in STRATA}, weight=float(d["weight"]),
            ))
    return items


def record_items(spark: SparkSession, tables: Tables, info: SampleInfo, items: list[ReviewItem]) -> None:
    rows = [(i.sample_id, i.item_id, info.run_id, info.created_at, i.report_no, i.case_id, i.version, i.field,
             i.kind, i.model_version, i.policy_version, hashlib.sha256(i.original.encode("utf-8")).hexdigest(),
             i.strata.get("sender"), i.strata.get("country"), i.strata.get("length_bucket"), i.weight)
            for i in items]
    merge(spark, spark.createDataFrame(rows, QA_SAMPLE_ITEMS.schema), tables.qa_sample_items, QA_SAMPLE_ITEMS.key)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def _batch_runs(spark: SparkSession, tables: Tables, run_id: str) -> tuple[list[JobRun] | None, bool]:
    """The page's run log rows; None (no card) when the run log cannot be read: it never stops a sample."""
    try:
        return batch_runs(spark, tables, run_id, exclude_jobs=_NOT_BATCH_JOBS)
    except Exception as exc:  # noqa: BLE001 - the run log is best effort, the sample is not
        typer.echo(f"warning: run log not shown on the QA page ({type(exc).__name__})", err=True)
        return None, True


def run(spark: SparkSession, tables: Tables, cfg: QaConfig, run_id: str,
        log: JobRunLog | None = None) -> tuple[str | None, str]:
    """Draw (or find) the sample of this run; returns (sample id or None, what happened).

    `log`, when given, gets the counts (reports awaiting publication in,
    reports sampled out) and the stages' times for the run log.
    """
    log = log or JobRunLog(job=JOB, mode="batch", run_id=resolve_run_id(run_id))
    pending = with_strata(pending_reports(spark, tables), cfg.sample.length_buckets).persist()
    try:
        with log.stage("population"):
            digest = population_digest(pending)
        if digest.startswith("0-"):
            log.input_count, log.output_count = 0, 0
            return None, "nothing awaits publication: no sample drawn"
        seed = f"{cfg.sample.seed}\u0000{run_id}"
        sid = make_sample_id(run_id, cfg.sample.seed, digest)
        log.detail["sample_id"] = sid
        folder = cfg.samples_dir / sid
        if (folder / "sample.json").exists():
            log.output_count = 0
            log.detail["sample"] = "already drawn"
            return sid, f"sample {sid} already drawn for this batch: left as it is"
        with log.stage("draw"):
            drawn, population, n_strata = draw(spark, pending, cfg.sample.reports, seed)
    finally:
        pending.unpersist()
    log.input_count, log.output_count = population, len(drawn)
    with log.stage("fetch"):
        items = fetch_items(spark, tables, drawn, sid, cfg.sample.include_structured)
    info = SampleInfo(
        sample_id=sid, run_id=run_id, created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        population_reports=population, sampled_reports=len(drawn), strata=n_strata,
        model_versions=tuple(sorted({i.model_version for i in items})),
        policy_versions=tuple(sorted({i.policy_version for i in items})), seed=cfg.sample.seed,
    )
    log.detail["items"] = str(len(items))
    log.versions.update(model=("+".join(info.model_versions) or "none")[:120],
                        policy=("+".join(info.policy_versions) or "none")[:120])
    record_items(spark, tables, info, items)
    runs, own = _batch_runs(spark, tables, log.run_id)
    _private_dir(cfg.qa_dir)
    _private_dir(cfg.samples_dir)
    _private_dir(cfg.inbox_dir)
    _private_dir(folder)
    write_sample_html(info, items, folder / "report.html", runs=runs, runs_of_this_run=own)
    write_review_jsonl(items, folder / "review.jsonl")
    manifest = {**info.__dict__, "model_versions": list(info.model_versions),
                "policy_versions": list(info.policy_versions), "items": len(items),
                "strata_drawn": sorted({"|".join(i.strata.get(k, "") for k in STRATA) for i in items})}
    tmp = folder / "sample.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, folder / "sample.json")
    return sid, (f"sample {sid}: {len(drawn)} of {population} reports from {n_strata} strata, {len(items)} fields "
                 f"-> {folder}")


@app.command()
def main(
    tables: Path = typer.Option(Path("build/lakehouse"), "--tables", help="root folder of the Delta tables"),
    run_id: str = typer.Option(..., "--run-id", help="the scheduled date or run this sample belongs to"),
    qa_config: Path = typer.Option(None, "--qa-config", help="QA config (default: conf/qa.yaml)"),
    master: str = typer.Option("local[*]", "--master", help="Spark master (ignored under spark-submit)"),
) -> None:
    from jobs.spark_session import session_or_exit

    cfg = load_qa_config(qa_config)
    t0 = time.perf_counter()
    spark = session_or_exit("deid-qa-sample", master=master)
    t = Tables(tables.resolve())
    with job_run(spark, t, job=JOB, run_id=run_id) as log:
        _, message = run(spark, t, cfg, run_id, log)
        typer.echo(f"qa sample: {message} ({time.perf_counter() - t0:.1f}s)")


if __name__ == "__main__":
    app()
