"""Model refresh: build a training set, train a candidate, evaluate it against the current model, promote or not.

    python -m jobs.model_refresh build-training-set --run-id RUN [--config conf/model_refresh.yaml]
    python -m jobs.model_refresh train    --run-id RUN
    python -m jobs.model_refresh evaluate --run-id RUN
    python -m jobs.model_refresh promote  --run-id RUN
    python -m jobs.model_refresh rollback [--to VERSION] [--run-id RUN]
    python -m jobs.model_refresh current
    python -m jobs.model_refresh history

The steps run one after another (an Airflow DAG calls them through bash);
each writes into `<work_dir>/<run_id>/` and is idempotent for a run id:
re-running a finished step with unchanged inputs does nothing and says so,
and `promote` records one decision per run. The gate (deid_core.model_refresh.promotion)
compares hybrid token recall and precision of candidate and current model,
each at its own tuned thresholds, on frozen evaluation sets whose hashes are
pinned in the config. A rejected candidate is a result, not an error: the
step exits 0 and prints the decision.

Exit codes: 0 done (or nothing to do), 2 a configuration error, a missing
input, an invalid inbox file or a hash mismatch (one line on stderr, never
document text), 1 anything unexpected.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import click
import typer

from deid_core.config import ConfigError, DeidConfig, load_config
from deid_core.corpus.atomic import atomic_text_writer
from deid_core.corpus.document import Document
from deid_core.corpus.jsonl import CorpusFormatError, parse_line, read_jsonl
from deid_core.deep.manifest import ModelError, ModelManifest, file_sha256
from deid_core.model_refresh.promotion import Decision, EvalResult, decide
from deid_core.model_refresh.config import RefreshConfig, load_refresh_config
from deid_core.model_refresh.registry import ModelRegistry, RegistryError, utc_now

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)

TRAINING_SET_FILE = "training_set.json"
EVALUATION_FILE = "evaluation.json"
DECISION_FILE = "decision.json"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+@-]{0,199}$")

RunIdOpt = Annotated[str, typer.Option("--run-id", help="the workflow run (e.g. the Airflow run id)")]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", help="refresh config (default: $DEID_MODEL_REFRESH_CONFIG or conf/model_refresh.yaml)"),
]


class RefreshError(Exception):
    """A user-facing error (bad config, missing input, hash mismatch): one line on stderr, exit code 2."""


def say(msg: str) -> None:
    print(f"[model_refresh] {msg}", file=sys.stderr, flush=True)


F = TypeVar("F", bound=Callable[..., Any])


def _user_errors(step: str) -> Callable[[F], F]:
    """Turn expected failures into one stderr line and exit code 2; anything else stays a traceback (exit 1)."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except (RefreshError, ConfigError, RegistryError, CorpusFormatError, ModelError,
                    click.BadParameter) as exc:
                msg = exc.format_message() if isinstance(exc, click.ClickException) else str(exc)
                print(f"model_refresh {step}: error: {' | '.join(msg.split(chr(10)))}", file=sys.stderr, flush=True)
                raise typer.Exit(2) from None

        return run  # type: ignore[return-value]

    return wrap


# ---- the run folder ---------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    rc: RefreshConfig
    run_id: str
    dir: Path

    @property
    def training_set_dir(self) -> Path:
        return self.dir / "training_set"

    @property
    def training_set_file(self) -> Path:
        return self.dir / TRAINING_SET_FILE

    @property
    def candidate_dir(self) -> Path:
        return self.dir / "candidate"

    @property
    def evaluation_file(self) -> Path:
        return self.dir / EVALUATION_FILE

    @property
    def decision_file(self) -> Path:
        return self.dir / DECISION_FILE


def _open_run(config: Path | None, run_id: str) -> Run:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        raise RefreshError(f"run id {run_id!r}: use letters, digits and . _ : + @ - (no '/', no '..')")
    rc = load_refresh_config(config)
    return Run(rc, run_id, rc.work_dir / run_id)


def _registry(rc: RefreshConfig, cfg: DeidConfig | None = None) -> ModelRegistry:
    cfg = cfg or load_config(rc.deid_config)
    return ModelRegistry(rc.registry_dir, cfg.deep.model_dir)


def _canonical_sha(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _write_json(path: Path, obj: object) -> None:
    with atomic_text_writer(path) as fh:
        fh.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def _read_json(path: Path, missing: str) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RefreshError(missing) from None
    except json.JSONDecodeError:
        raise RefreshError(f"{path} is not valid JSON") from None


def _require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise RefreshError(f"{what} not found: {path}")
    return path


# ---- build-training-set ---------------------------------------------------------


def validate_annotations(path: Path, labels: set[str], seen_ids: dict[str, str]) -> list[Document]:
    """Every line of an inbox file, strictly: annotated training data must be complete.

    Raises RefreshError naming file, line and what is wrong (never the text
    or the doc_id, which may be a case identifier). `seen_ids` maps doc ids
    already read (across files) to their "file:line", so duplicates are caught.
    """
    docs: list[Document] = []
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            where = f"{path.name}: line {line_no}"
            try:
                doc = parse_line(raw, path, line_no)  # UTF-8, JSON, text, span types, 0 <= start < end <= len
            except CorpusFormatError as exc:
                raise RefreshError(str(exc)) from None
            if doc is None:
                continue
            obj = json.loads(raw.decode("utf-8"))
            if not isinstance(obj.get("doc_id"), str) or not obj["doc_id"]:
                raise RefreshError(f"{where}: needs a non-empty string 'doc_id'")
            if not isinstance(obj.get("spans"), list):
                raise RefreshError(f"{where}: needs a 'spans' list (empty when the text holds no PHI)")
            for i, span in enumerate(doc.spans):
                if span.label not in labels:
                    shown = span.label if len(span.label) <= 24 else span.label[:24] + "..."
                    raise RefreshError(f"{where}: span {i} has label {shown!r}, not one of {sorted(labels)}")
            if doc.doc_id in seen_ids:
                raise RefreshError(f"{where}: doc_id repeats the one at {seen_ids[doc.doc_id]}")
            seen_ids[doc.doc_id] = where
            docs.append(doc)
    return docs


def _inbox_files(inbox: Path) -> list[Path]:
    if not inbox.is_dir():
        raise RefreshError(f"annotations inbox not found: {inbox}")
    # hidden files are uploads in progress by convention
    return sorted(p for p in inbox.glob("*.jsonl") if p.is_file() and not p.name.startswith("."))


def _build_inputs(rc: RefreshConfig, inbox_files: Sequence[Path]) -> dict[str, Any]:
    """Everything the training set is made from, by content hash."""
    from deid_core.synthetic.narratives import GENERATOR_VERSION

    for path in rc.base_corpora:
        _require_file(path, "base corpus")
    if rc.dev is not None:
        _require_file(rc.dev, "dev corpus")
    return {
        "inbox": [{"name": p.name, "sha256": file_sha256(p)} for p in inbox_files],
        "base_corpora": [{"path": str(p), "sha256": file_sha256(p)} for p in rc.base_corpora],
        "dev": {"path": str(rc.dev), "sha256": file_sha256(rc.dev)} if rc.dev else None,
        "synthetic": {"documents": rc.synthetic_docs, "seed": rc.synthetic_seed,
                      "generator_version": GENERATOR_VERSION},
    }


@app.command("build-training-set")
@_user_errors("build-training-set")
def build_training_set(run_id: RunIdOpt, config: ConfigOpt = None) -> None:
    """Validate the inbox, copy it and write the synthetic narratives into <run>/training_set/."""
    from deid_core.corpus.jsonl import write_jsonl
    from deid_core.synthetic import generate_narratives

    run = _open_run(config, run_id)
    rc = run.rc
    cfg = rc.deid()
    files = _inbox_files(rc.annotations_inbox)
    inputs = _build_inputs(rc, files)
    inputs_sha = _canonical_sha(inputs)
    if run.training_set_file.exists():
        done = _read_json(run.training_set_file, "")
        if done.get("inputs_sha256") == inputs_sha:
            say(f"training set of run {run_id} already built from these inputs: nothing to do")
            return
        raise RefreshError(f"run {run_id} already has a training set built from other inputs "
                           "(inbox, corpora or synthetic settings changed); start a new run id")

    labels = set(cfg.deep.training.label_map)
    errors: list[str] = []
    inbox_docs: dict[str, list[Document]] = {}
    seen: dict[str, str] = {}
    for path in files:
        try:
            inbox_docs[path.name] = validate_annotations(path, labels, seen)
        except RefreshError as exc:
            errors.append(str(exc))
    if errors:
        for e in errors:
            say(f"invalid: {e}")
        raise RefreshError(f"{len(errors)} of {len(files)} inbox files are invalid ({errors[0]}); nothing was built")

    tmp = run.dir / ".training_set.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "inbox").mkdir(parents=True)
    entries: list[dict[str, Any]] = []
    for path in files:
        shutil.copy2(path, tmp / "inbox" / path.name)
        entries.append({"path": f"training_set/inbox/{path.name}", "role": "inbox",
                        "sha256": file_sha256(tmp / "inbox" / path.name),
                        "documents": len(inbox_docs[path.name])})
    if rc.synthetic_docs:
        name = f"synthetic_seed{rc.synthetic_seed}_n{rc.synthetic_docs}.jsonl"
        n = write_jsonl((s.to_document() for s in generate_narratives(rc.synthetic_docs, rc.synthetic_seed)),
                        tmp / name)
        entries.append({"path": f"training_set/{name}", "role": "synthetic", "sha256": file_sha256(tmp / name),
                        "documents": n})
    if run.training_set_dir.exists():  # left by an attempt that failed before recording it
        shutil.rmtree(run.training_set_dir)
    os.replace(tmp, run.training_set_dir)

    base = [{**b, "documents": len(read_jsonl(Path(b["path"])))} for b in inputs["base_corpora"]]
    dev = {**inputs["dev"], "documents": len(read_jsonl(rc.dev))} if rc.dev else None
    content = {"files": entries, "base_corpora": base, "dev": dev}
    record = {
        "run_id": run_id,
        "built_at": utc_now(),
        "inputs_sha256": inputs_sha,
        "sha256": _canonical_sha(content),
        **content,
        "synthetic": inputs["synthetic"],
    }
    _write_json(run.training_set_file, record)
    n_inbox = sum(e["documents"] for e in entries if e["role"] == "inbox")
    say(f"training set of run {run_id}: {len(files)} inbox files ({n_inbox} documents), "
        f"{rc.synthetic_docs} synthetic, {sum(b['documents'] for b in base)} base documents "
        f"-> {run.training_set_dir}")


# ---- train -------------------------------------------------------------------------


def _training_set(run: Run) -> dict[str, Any]:
    """The recorded training set, with every file checked against its hash."""
    ts = _read_json(run.training_set_file, f"run {run.run_id} has no training set; run build-training-set first")
    for entry in ts["files"]:
        path = run.dir / entry["path"]
        if not path.is_file() or file_sha256(path) != entry["sha256"]:
            raise RefreshError(f"training set file {entry['path']} of run {run.run_id} is missing or changed")
    for entry in [*ts["base_corpora"], *([ts["dev"]] if ts["dev"] else [])]:
        path = Path(entry["path"])
        if not path.is_file() or file_sha256(path) != entry["sha256"]:
            raise RefreshError(f"corpus {path} changed since the training set of run {run.run_id} was built")
    return ts


def _candidate_training_set(model_dir: Path) -> str | None:
    if not (model_dir / "manifest.json").is_file():
        return None
    refresh = ModelManifest.read(model_dir).training.get("refresh") or {}
    return refresh.get("training_set_sha256")


@app.command()
@_user_errors("train")
def train(run_id: RunIdOpt, config: ConfigOpt = None) -> None:
    """Train the candidate into <run>/candidate/ (thresholds tuned on dev for target_recall)."""
    from jobs.train_model import train_model

    run = _open_run(config, run_id)
    rc = run.rc
    ts = _training_set(run)
    trained_on = _candidate_training_set(run.candidate_dir)
    if trained_on == ts["sha256"]:
        say(f"candidate of run {run_id} already trained on this training set: nothing to do")
        return
    if trained_on is not None:
        say(f"the candidate of run {run_id} was trained on another training set: training again")

    warnings.filterwarnings("ignore", category=FutureWarning, module=r"petastorm\..*")
    warnings.filterwarnings("ignore", message=r".*shuffle=True.*", category=UserWarning)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    cfg = rc.deid()
    workdir = run.dir / "train_work"
    cfg = cfg.model_copy(update={"deep": cfg.deep.model_copy(update={
        "training": cfg.deep.training.model_copy(update={"workdir": workdir})})})
    base_model = _registry(rc, cfg).current_model_dir() if rc.fine_tune_from_current else None
    corpora = [Path(b["path"]) for b in ts["base_corpora"]] + [run.dir / e["path"] for e in ts["files"]]
    target = cfg.deep.training.threshold_target_recall if rc.target_recall is None else rc.target_recall
    partial = run.dir / "candidate.partial"
    shutil.rmtree(partial, ignore_errors=True)
    say(f"training the candidate of run {run_id} on {len(corpora)} corpora"
        + (f", fine-tuning {base_model}" if base_model else ""))
    try:
        manifest = train_model(
            cfg, config_file=rc.deid_config, out=partial, corpora=corpora, dev_path=rc.dev, synthetic_docs=0,
            base_model=base_model, max_epochs=rc.max_epochs, target_recall=target,
        )
    except click.BadParameter as exc:
        raise RefreshError(exc.format_message()) from None
    if manifest.thresholds is None:
        say(f"target recall {target} not reached on dev: the candidate will use the config thresholds")
    training = {**manifest.training, "refresh": {"run_id": run_id, "training_set_sha256": ts["sha256"]}}
    manifest.model_copy(update={"training": training}).write(partial)
    if run.candidate_dir.exists():
        shutil.rmtree(run.candidate_dir)
    os.replace(partial, run.candidate_dir)
    shutil.rmtree(workdir, ignore_errors=True)
    say(f"candidate {manifest.model_version} -> {run.candidate_dir}")


# ---- evaluate ----------------------------------------------------------------------


def _model_thresholds(cfg: DeidConfig, manifest: ModelManifest) -> dict[str, Any]:
    """The operating point the jobs would run the model at: its tuned pair and per-reason
    thresholds where it has them (`deid_core.detectors.thresholds_for`), the config's otherwise.

    The gate must judge a model where production uses it: the pair alone, without the
    per-reason table, is another operating point with other recall and precision.
    """
    from deid_core.detectors import thresholds_for

    t = thresholds_for(cfg, manifest.thresholds)
    source = "manifest" if manifest.thresholds is not None and cfg.deep.combiner.prefer_manifest_thresholds else "config"
    return {"low": t.low, "high": t.high, "by_reason": dict(sorted(t.by_reason.items())), "source": source}


def _verified_sets(rc: RefreshConfig) -> list[dict[str, Any]]:
    out = []
    for s in rc.eval_sets:
        _require_file(s.path, f"eval set {s.name}")
        actual = file_sha256(s.path)
        if actual != s.sha256:
            raise RefreshError(f"eval set {s.name}: {s.path} has sha256 {actual}, the config pins {s.sha256}; "
                               "a frozen evaluation set must not change (add a new set instead)")
        out.append({"name": s.name, "path": str(s.path), "sha256": s.sha256})
    return out


def evaluate_model(cfg: DeidConfig, model_dir: Path, thresholds: dict[str, Any],
                   sets: dict[str, list[Document]]) -> dict[str, dict[str, Any]]:
    """Hybrid token metrics of one model on each set: {name: {"result": EvalResult, "counts": Counts}}."""
    from deid_core.detectors import Method, build_detector
    from deid_core.dictionaries.artifact import DictionaryArtifact
    from deid_core.evaluation.corpus import drug_names, evaluate_corpus
    from deid_core.evaluation.hipaa import HipaaMap
    from deid_core.thresholds import Thresholds

    art = DictionaryArtifact.load(cfg.dictionaries.artifact)
    hipaa = HipaaMap.load(cfg.evaluation.label_map, cfg.evaluation.hipaa_age_threshold)
    det = build_detector(Method.hybrid, cfg, art, model_dir=model_dir,
                         thresholds=Thresholds(float(thresholds["low"]), float(thresholds["high"]),
                                               by_reason=thresholds.get("by_reason") or {}))
    out: dict[str, dict[str, Any]] = {}
    for name, docs in sets.items():
        failures_before = det.failures
        total = evaluate_corpus(docs, hipaa, detector=det, is_drug=drug_names(art)).counts
        result = EvalResult(recall=total.recall, precision=total.precision, gold_tokens=total.gold_tokens,
                            caught=total.caught, false_positives=total.false_positives, documents=total.docs,
                            failures=det.failures - failures_before)
        out[name] = {"result": result.as_dict(), "counts": total.as_dict()}
    return out


def _model_info(cfg: DeidConfig, model_dir: Path, **extra: Any) -> dict[str, Any]:
    manifest = ModelManifest.read(model_dir)
    return {"model_version": manifest.model_version, "model_dir": str(model_dir),
            "thresholds": _model_thresholds(cfg, manifest), **extra}


@app.command()
@_user_errors("evaluate")
def evaluate(run_id: RunIdOpt, config: ConfigOpt = None) -> None:
    """Hybrid token recall/precision of candidate and current model on every frozen set -> evaluation.json."""
    run = _open_run(config, run_id)
    rc = run.rc
    if not (run.candidate_dir / "manifest.json").is_file():
        raise RefreshError(f"run {run_id} has no candidate model; run train first")
    sets = _verified_sets(rc)
    cfg = load_config(rc.deid_config)
    registry = _registry(rc, cfg)
    source = "registry" if registry.current() is not None else "fallback"
    candidate = _model_info(cfg, run.candidate_dir)
    current = _model_info(cfg, registry.current_model_dir(), source=source)
    inputs = {"candidate": candidate, "current": current, "sets": sets}
    inputs_sha = _canonical_sha(inputs)
    if run.evaluation_file.exists() and _read_json(run.evaluation_file, "").get("inputs_sha256") == inputs_sha:
        say(f"run {run_id} already evaluated {candidate['model_version']} against "
            f"{current['model_version']} on these sets: nothing to do")
        return

    docs = {s["name"]: read_jsonl(Path(s["path"])) for s in sets}
    say(f"evaluating candidate {candidate['model_version']} and current {current['model_version']} "
        f"on {', '.join(f'{k} ({len(v)} documents)' for k, v in docs.items())}")
    by_model = {
        "candidate": evaluate_model(cfg, run.candidate_dir, candidate["thresholds"], docs),
        "current": evaluate_model(cfg, Path(current["model_dir"]), current["thresholds"], docs),
    }
    record = {
        "run_id": run_id,
        "evaluated_at": utc_now(),
        "inputs_sha256": inputs_sha,
        "candidate": candidate,
        "current": current,
        "sets": {
            s["name"]: {**s, "documents": len(docs[s["name"]]),
                        "candidate": by_model["candidate"][s["name"]], "current": by_model["current"][s["name"]]}
            for s in sets
        },
    }
    _write_json(run.evaluation_file, record)
    for name, s in record["sets"].items():
        c, k = s["candidate"]["result"], s["current"]["result"]
        say(f"{name}: candidate recall {c['recall']:.4f} precision {c['precision']:.4f} | "
            f"current recall {k['recall']:.4f} precision {k['precision']:.4f}")


# ---- promote -----------------------------------------------------------------------


def _print_decision(entry: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(entry, indent=2, sort_keys=True) + "\n")
    verdict = "PROMOTED" if entry["decision"] == "promoted" else "REJECTED"
    say(f"{verdict} candidate {entry['candidate']} (current was {entry['current']}), run {entry['run_id']}")
    for r in entry["reasons"]:
        say(f"  {r}")


@app.command()
@_user_errors("promote")
def promote(run_id: RunIdOpt, config: ConfigOpt = None) -> None:
    """Decide on the evaluation; record it; make the candidate current if it passes. Exit 0 either way."""
    run = _open_run(config, run_id)
    rc = run.rc
    registry = _registry(rc)
    prior = registry.decision_for(run_id)
    if prior is not None:
        say(f"run {run_id} was already decided ({prior['decision']}): nothing to do")
        if not run.decision_file.exists():
            _write_json(run.decision_file, prior)
        _print_decision(prior)
        return
    ev = _read_json(run.evaluation_file, f"run {run_id} has no evaluation; run evaluate first")
    cand_manifest = ModelManifest.read(run.candidate_dir)
    if cand_manifest.model_version != ev["candidate"]["model_version"]:
        raise RefreshError(f"the candidate of run {run_id} changed since it was evaluated; run evaluate again")
    current_version = ModelManifest.read(registry.current_model_dir()).model_version
    if current_version != ev["current"]["model_version"]:
        raise RefreshError(f"the current model changed since the evaluation ({ev['current']['model_version']} -> "
                           f"{current_version}); run evaluate again")
    pinned = {s.name: s.sha256 for s in rc.eval_sets}
    evaluated = {name: s["sha256"] for name, s in ev["sets"].items()}
    if pinned != evaluated:
        raise RefreshError(f"the configured eval sets differ from those run {run_id} was evaluated on; "
                           "run evaluate again")

    cand = {name: EvalResult.from_dict(s["candidate"]["result"]) for name, s in ev["sets"].items()}
    cur = {name: EvalResult.from_dict(s["current"]["result"]) for name, s in ev["sets"].items()}
    decision = decide(cand, cur, rc.promotion.recall_tolerance, rc.promotion.max_precision_drop)
    if cand_manifest.model_version == current_version:
        decision = Decision(False, [f"the candidate {current_version} is already the current model",
                                    *decision.reasons])
    entry = {
        "run_id": run_id,
        "decision": "promoted" if decision.promote else "rejected",
        "candidate": cand_manifest.model_version,
        "current": current_version,
        "reasons": decision.reasons,
        "metrics": {name: {"candidate": cand[name].as_dict(), "current": cur[name].as_dict(),
                           "sha256": ev["sets"][name]["sha256"]} for name in sorted(cand)},
        "thresholds": {"candidate": ev["candidate"]["thresholds"], "current": ev["current"]["thresholds"]},
        "promotion": rc.promotion.model_dump(),
        "decided_at": utc_now(),
    }
    if decision.promote:
        version = registry.register(run.candidate_dir)
        registry.promote(version, run_id=run_id, entry=entry)
    else:
        registry.record(entry)
    _write_json(run.decision_file, entry)
    _print_decision(entry)


# ---- operations --------------------------------------------------------------------


@app.command()
@_user_errors("rollback")
def rollback(
    to: Annotated[Optional[str], typer.Option("--to", help="a registered version (default: the previous one)")] = None,
    run_id: Annotated[Optional[str], typer.Option("--run-id", help="recorded with the rollback")] = None,
    reason: Annotated[str, typer.Option(help="recorded in the history")] = "",
    config: ConfigOpt = None,
) -> None:
    """Make the previous (or the named) version current again; recorded in the history."""
    if run_id is not None and (not _RUN_ID.match(run_id) or ".." in run_id):
        raise RefreshError(f"run id {run_id!r}: use letters, digits and . _ : + @ - (no '/', no '..')")
    rc = load_refresh_config(config)
    registry = _registry(rc)
    before = registry.current()
    pointer = registry.rollback(to, run_id=run_id, reason=reason)
    say(f"rolled back from {before['model_version'] if before else '?'} to {pointer['model_version']}")
    print(registry.current_model_dir())


@app.command()
@_user_errors("current")
def current(config: ConfigOpt = None) -> None:
    """Print the folder of the model in use (the promoted one, else deep.model_dir)."""
    rc = load_refresh_config(config)
    print(_registry(rc).current_model_dir())


@app.command()
@_user_errors("history")
def history(
    run_id: Annotated[Optional[str], typer.Option("--run-id", help="only this run's entries")] = None,
    config: ConfigOpt = None,
) -> None:
    """Print the recorded decisions and rollbacks, one JSON object per line, oldest first."""
    rc = load_refresh_config(config)
    for entry in _registry(rc).history():
        if run_id is None or entry.get("run_id") == run_id:
            print(json.dumps(entry, sort_keys=True))


if __name__ == "__main__":
    app()
