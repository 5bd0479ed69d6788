"""The `deid` command line: detect, deidentify, evaluate, build dictionaries.

Output files are written atomically: a run that stops on bad input or an
error leaves no partial output behind. Messages name files, lines and
counts, never document text.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from tqdm import tqdm

from deid_core.categories import UNKNOWN_LABEL
from deid_core.config import ConfigError, DeidConfig, load_config
from deid_core.corpus.atomic import atomic_text_writer
from deid_core.corpus.document import Document
from deid_core.corpus.jsonl import CorpusFormatError, iter_jsonl
from deid_core.deep.manifest import ModelError
from deid_core.detectors import FailClosed, Method, build_detector
from deid_core.dictionaries.artifact import ArtifactError, DictionaryArtifact
from deid_core.evaluation.corpus import MissingPredictions, drug_names, evaluate_corpus
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Span
from deid_core.render import render_masked
from deid_core.results import MaskedToken, mask_everything

if TYPE_CHECKING:
    from deid_core.training.tuning import TokenScores

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True, soft_wrap=True)
out_console = Console()

#: Documents per call to the detector; bounded so memory stays flat.
BATCH = 64

ConfigOpt = Annotated[Optional[Path], typer.Option("--config", help="YAML config (default: $DEID_CONFIG or conf/deid.yaml)")]
MethodOpt = Annotated[Method, typer.Option("--method", help="de-identification method")]
DictOpt = Annotated[Optional[Path], typer.Option("--dictionaries", help="dictionary artifact (default: from config)")]
InOpt = Annotated[Path, typer.Option("--in", exists=True, dir_okay=False, readable=True, help="input JSONL")]
OutOpt = Annotated[Path, typer.Option("--out", dir_okay=False, help="output JSONL")]
ProgressOpt = Annotated[bool, typer.Option(help="progress bar on stderr")]
ModelOpt = Annotated[Optional[Path], typer.Option("--model", help="model directory (default: deep.model_dir in the config)")]


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit code 2."""


def _load(config: Path | None, dictionaries: Path | None) -> tuple[DeidConfig, DictionaryArtifact]:
    cfg = load_config(config)
    art = DictionaryArtifact.load(dictionaries or cfg.dictionaries.artifact)
    return cfg, art


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(buf.count(b"\n") for buf in iter(lambda: fh.read(1 << 20), b""))


def _batches(path: Path, progress: bool) -> Iterator[list[Document]]:
    total = _count_lines(path) if progress else None
    bar = tqdm(total=total, unit="doc", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    batch: list[Document] = []
    try:
        for _, doc in iter_jsonl(path):
            batch.append(doc)
            if len(batch) >= BATCH:
                yield batch
                bar.update(len(batch))
                batch = []
        if batch:
            yield batch
            bar.update(len(batch))
    finally:
        bar.close()


def _documents(path: Path, progress: bool) -> Iterator[Document]:
    for batch in _batches(path, progress):
        yield from batch


def _spans_json(masked: list[MaskedToken]) -> list[dict[str, object]]:
    return [{"start": m.start, "end": m.end, "label": m.label, "score": round(m.score, 4)} for m in masked]


@app.command()
def detect(
    in_path: InOpt,
    out_path: OutOpt,
    method: MethodOpt = Method.hybrid,
    config: ConfigOpt = None,
    dictionaries: DictOpt = None,
    model: ModelOpt = None,
    progress: ProgressOpt = True,
) -> None:
    """Mask PHI tokens: one output line per input document."""
    t0 = time.perf_counter()
    cfg, art = _load(config, dictionaries)
    detector = build_detector(method, cfg, art, model_dir=model)
    n_docs = n_masked = 0
    with atomic_text_writer(out_path) as fh:
        for batch in _batches(in_path, progress):
            results = detector.detect([d.text for d in batch])
            for doc, masked in zip(batch, results, strict=True):
                try:
                    text_deid = render_masked(doc.text, masked, cfg.output)
                except ValueError:  # inconsistent spans: fail closed for this document
                    detector.failures += 1
                    masked = mask_everything(doc.text)
                    text_deid = render_masked(doc.text, masked, cfg.output)
                line = {"doc_id": doc.doc_id, "spans": _spans_json(masked), "text_deid": text_deid}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                n_docs += 1
                n_masked += len(masked)
    _report_failures(detector)
    err.print(
        f"[green]{n_docs} documents[/green], {n_masked} tokens masked, "
        f"{time.perf_counter() - t0:.1f}s ({detector.version}) -> {escape(str(out_path))}"
    )


def _report_failures(detector: FailClosed) -> None:
    if detector.failures:
        err.print(f"[yellow]{detector.failures} documents could not be processed and were fully masked[/yellow]")


def _read_predictions(path: Path) -> dict[str, list[Span]]:
    preds: dict[str, list[Span]] = {}
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
                spans = [Span(int(s["start"]), int(s["end"]), str(s.get("label", UNKNOWN_LABEL))) for s in obj["spans"]]
                preds[str(obj["doc_id"])] = spans
            except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise CliError(f"{path.name}: line {line_no}: not a prediction line with doc_id and spans") from None
    return preds


@app.command("eval")
def evaluate(
    gold: Annotated[Path, typer.Option("--gold", exists=True, dir_okay=False, help="gold JSONL with spans")],
    method: MethodOpt = Method.hybrid,
    pred: Annotated[Optional[Path], typer.Option("--pred", help="score this prediction JSONL instead of running a method")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    config: ConfigOpt = None,
    dictionaries: DictOpt = None,
    model: ModelOpt = None,
    progress: ProgressOpt = True,
    rendered: Annotated[bool, typer.Option(
        "--rendered", help="score what the output changes under the policy (kept ages under 90, years, "
                           "states and countries count as unmasked), not the detector's mask")] = False,
    policy: Annotated[Optional[str], typer.Option(
        "--policy", help="with --rendered: policy name or YAML path (default: replacement.default_policy)")] = None,
) -> None:
    """Token masking recall/precision, per-label and HIPAA recall, entities, retention, keep-span retention."""
    cfg, art = _load(config, dictionaries)
    hipaa = HipaaMap.load(cfg.evaluation.label_map, cfg.evaluation.hipaa_age_threshold)
    if rendered and pred is not None:
        raise CliError("--rendered runs the pipeline: it cannot score a prediction file (--pred)")
    if policy is not None and not rendered:
        raise CliError("--policy only applies with --rendered")
    preds = _read_predictions(pred) if pred else None
    detector = None if preds is not None or rendered else build_detector(method, cfg, art, model_dir=model)
    scored: object = detector
    if rendered:
        from deid_core.pipeline import RenderedSpans

        spans = RenderedSpans.build(cfg, policy, method=method, artifact=art, model_dir=model)
        detector, scored = spans.pipeline.detector, spans
    try:
        res = evaluate_corpus(_documents(gold, progress), hipaa, detector=scored,  # type: ignore[arg-type]
                              predictions=preds, is_drug=drug_names(art), batch_size=BATCH)
    except MissingPredictions as exc:
        raise CliError(f"{pred}: no prediction for {len(exc.doc_ids)} gold documents (first: {exc.doc_ids[0]})") from None
    result = res.counts.as_dict()
    result["method"] = "predictions" if preds is not None else method.value + ("/rendered" if rendered else "")
    result["version"] = scored.version if scored is not None else str(pred)  # type: ignore[attr-defined]
    result["dictionaries"] = art.version
    result["seconds"] = round(res.seconds, 3)
    if detector is not None:
        _report_failures(detector)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        print_report(result, out_console)


def print_report(result: dict, console: Console) -> None:
    """Render an evaluation result (as produced by `Counts.as_dict`) as tables."""
    tok = result["token"]
    t = Table(title=f"Token masking — {result.get('method')} ({result.get('version')})", show_header=True)
    # "prec. i2b2": precision when masked ages and years count as PHI
    for col in ("gold", "caught", "false pos.", "recall", "precision", "prec. i2b2", "F1", "HIPAA recall"):
        t.add_column(col, justify="right")
    t.add_row(
        str(tok["gold"]), str(tok["caught"]), str(tok["false_positives"]),
        f"{tok['recall']:.4f}", f"{tok['precision']:.4f}", f"{tok['precision_i2b2_reading']:.4f}",
        f"{tok['f1']:.4f}", f"{tok['hipaa_recall']:.4f}",
    )
    console.print(t)
    pl = Table(title="Recall per gold label")
    for col in ("label", "caught", "gold", "recall"):
        pl.add_column(col, justify="right")
    for lab, v in tok["per_label"].items():
        pl.add_row(lab, str(v["caught"]), str(v["gold"]), f"{v['recall']:.4f}")
    console.print(pl)
    ent = result["entity"]
    et = Table(title="Entities (gold spans vs. runs of masked tokens)")
    for col in ("gold", "predicted", "exact recall", "exact precision", "overlap recall", "overlap precision"):
        et.add_column(col, justify="right")
    et.add_row(str(ent["gold"]), str(ent["predicted"]), f"{ent['exact_recall']:.4f}",
               f"{ent['exact_precision']:.4f}", f"{ent['overlap_recall']:.4f}", f"{ent['overlap_precision']:.4f}")
    console.print(et)
    ret = result["retention"]
    rt = Table(title="Retention of clinical content (non-PHI tokens left unmasked)")
    for col in ("numeric kept", "numeric retention", "drug names kept", "drug retention"):
        rt.add_column(col, justify="right")
    rt.add_row(f"{ret['numeric_kept']}/{ret['numeric_total']}", f"{ret['numeric_retention']:.4f}",
               f"{ret['drug_kept']}/{ret['drug_total']}", f"{ret['drug_retention']:.4f}")
    console.print(rt)
    keep = result.get("keep") or {}
    if keep.get("tokens"):
        kt = Table(title="Keep-span retention (keep-span tokens no masked span overlaps)")
        for col in ("label", "kept", "tokens", "retention"):
            kt.add_column(col, justify="right")
        for lab, v in keep["per_label"].items():
            kt.add_row(lab, str(v["kept"]), str(v["tokens"]), f"{v['retention']:.4f}")
        kt.add_row("all", str(keep["kept"]), str(keep["tokens"]), f"{keep['retention']:.4f}")
        console.print(kt)
    console.print(f"{result['docs']} documents, {result['tokens']} tokens, {result['predicted_tokens']} masked; "
                  f"dictionaries {result.get('dictionaries')}; {result.get('seconds')}s")


def _print_threshold_cv(det, docs: list[Document], never, folds: int, fold_key: str, strength: float,  # type: ignore[no-untyped-def]
                        target: float, fixed: dict[str, float], extra: Sequence[TokenScores] = (),
                        ceilings: dict[str, float] | None = None) -> None:
    """Cross-validated recall and precision of per-reason thresholds, folds kept apart by `fold_key`.

    `extra` are further folds already split by patient (out-of-fold scores of the training corpora).
    """
    from deid_core.training.folds import split_folds
    from deid_core.training.reason_search import cross_validate
    from deid_core.training.scoring import collect_scores

    try:
        by_fold = split_folds(docs, folds, fold_key)
    except ValueError as exc:
        raise CliError(f"--fold-key: {exc}") from None
    parts = []
    for fold_docs in by_fold:
        if fold_docs:
            s = collect_scores(det.inner, fold_docs, never)
            parts.append((s.gold_phi, s.families, s.never_release, s.p_safe))
    parts.extend((s.gold_phi, s.families, s.never_release, s.p_safe) for s in extra)
    strengths = sorted({0.0, 5.0, 20.0, 50.0, 200.0, strength})
    targets = sorted({0.999, 0.998, 0.997, 0.996, 0.995, 0.99, 0.98, target}, reverse=True)
    t = Table(title=f"{len(parts)}-fold cross-validation (thresholds from the other folds)")
    for col in ("smoothing", "target", "CV recall", "CV precision", "PHI missed"):
        t.add_column(col, justify="right")
    for r in cross_validate(parts, strengths, targets, fixed=fixed, ceilings=ceilings):
        t.add_row(f"{r.prior_strength:g}", f"{r.target:.3f}", f"{r.recall:.4f}", f"{r.precision:.4f}", str(r.missed))
    out_console.print(t)


@app.command("tune-thresholds")
def tune_thresholds(
    gold: Annotated[list[Path], typer.Option("--gold", exists=True, dir_okay=False, help="annotated dev JSONL (repeatable: the sets are pooled)")],
    target_recall: Annotated[Optional[float], typer.Option("--target-recall", min=0.0, max=1.0, help="recall to reach on the dev set(s) (default: deep.training.threshold_target_recall); see --cv-folds for what it gives on held-out patients")] = None,
    by_reason: Annotated[bool, typer.Option("--by-reason/--pair", help="one threshold per rule reason, or the thesis's (low, high) pair")] = True,
    prior_strength: Annotated[Optional[float], typer.Option("--prior-strength", min=0.0, help="smoothing of small reason families (default: deep.training.threshold_prior_strength)")] = None,
    cv_folds: Annotated[int, typer.Option("--cv-folds", min=0, help="also print a cross-validated table of smoothing x target (0: no)")] = 0,
    fold_key: Annotated[str, typer.Option("--fold-key", help="regex whose first match in doc_id keeps documents together in CV (PhysioNet patients: '^[^-]+')")] = r"^[^#]+",
    oof: Annotated[Optional[Path], typer.Option("--oof", exists=True, file_okay=False, help="also pool out-of-fold scores of the training corpora (a folder written by `python -m jobs.oof_scores`)")] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="PNG path (default: in the model directory, unless --dry-run)")] = None,
    write: Annotated[bool, typer.Option("--write/--dry-run", help="store the chosen thresholds in the model manifest")] = True,
    config: ConfigOpt = None,
    dictionaries: DictOpt = None,
    model: ModelOpt = None,
) -> None:
    """Search thresholds on a dev set: best precision at the target recall; prints the table and the frontier."""
    import numpy as np

    from deid_core.hybrid.combiner import never_release_from
    from deid_core.training.scoring import (
        collect_scores,
        record_reason_thresholds,
        record_thresholds,
        tune,
        tune_by_reason,
    )
    from deid_core.training.tuning import TokenScores

    cfg, art = _load(config, dictionaries)
    if target_recall is None:
        target_recall = cfg.deep.training.threshold_target_recall
    model_dir = model or cfg.deep.model_dir
    det = build_detector(Method.deep, cfg, art, model_dir=model_dir)
    docs = [d for g in gold for _, d in iter_jsonl(g)]
    name = "+".join(g.name for g in gold)
    never = never_release_from(cfg)
    scores = collect_scores(det.inner, docs, never)  # type: ignore[arg-type]
    oof_folds: list[TokenScores] = []
    if oof is not None:
        from deid_core.training.out_of_fold import read_oof

        try:
            out_of_fold = read_oof(oof)
            out_of_fold.check_model(model_dir)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        oof_folds = out_of_fold.folds
        scores, name = out_of_fold.pooled_with(scores, name)
    # a dry run leaves the model directory as it is: its plot belongs to the thresholds it stores
    plot_path = plot or (model_dir / f"precision_recall_{gold[0].stem}.png" if write else None)
    best, result = tune(scores, target_recall, plot_path)
    if plot_path is not None:
        err.print(f"precision-recall plot (pair) -> {escape(str(plot_path))}")
    if by_reason:
        strength = cfg.deep.training.threshold_prior_strength if prior_strength is None else prior_strength
        if cv_folds > 1:
            _print_threshold_cv(det, docs, never, cv_folds, fold_key, strength, target_recall,
                                dict(cfg.deep.combiner.by_reason), oof_folds, dict(cfg.deep.combiner.by_reason_ceiling))
        # families the configuration sets (clinical values: always kept) are a policy, not tuned;
        # families with a ceiling are tuned below it
        rbest, rsearch = tune_by_reason(scores, target_recall, prior_strength=strength,
                                        fixed=dict(cfg.deep.combiner.by_reason),
                                        ceilings=dict(cfg.deep.combiner.by_reason_ceiling))
        t = Table(title=f"Per-reason thresholds on {name}: {len(scores)} tokens, {rsearch.gold} gold PHI")
        for col in ("reason", "tokens", "gold PHI", "threshold", "masked", "PHI missed", "false alarms"):
            t.add_column(col, justify="right")
        for k, c in enumerate(rsearch.curves):
            if rbest is None:
                break
            j = int(np.searchsorted(c.thresholds, rbest.thresholds[c.family]))
            j = min(j, len(c.thresholds) - 1)
            t.add_row(c.family, str(c.tokens), str(c.gold), f"{rbest.thresholds[c.family]:.6f}", str(c.masked[j]),
                      str(c.missed[j]), str(c.false_alarms[j]))
        if rsearch.constant_masked:
            t.add_row("never released", str(rsearch.constant_masked), str(rsearch.constant_gold), "-",
                      str(rsearch.constant_masked), "0", str(rsearch.constant_masked - rsearch.constant_gold))
        out_console.print(t)
        f = Table(title="Frontier (per-reason thresholds, best precision at each recall)")
        for col in ("recall", "precision", "masked", "PHI missed"):
            f.add_column(col, justify="right")
        for p in rsearch.frontier():
            if p.recall >= target_recall - 0.03:
                f.add_row(f"{p.recall:.4f}", f"{p.precision:.4f}", str(p.masked), str(p.missed))
        out_console.print(f)
        if rbest is None:
            raise CliError(f"no thresholds reach recall {target_recall} on {name}")
        pair = f"pair: precision {best.precision:.4f}" if best is not None else "pair: unreachable"
        out_console.print(f"best at recall >= {target_recall}: recall {rbest.recall:.4f}, "
                          f"precision {rbest.precision:.4f} ({pair})")
        if write:
            record_reason_thresholds(model_dir, rbest, target_recall, name)
            err.print(f"[green]thresholds stored in {escape(str(model_dir / 'manifest.json'))}[/green]")
        return
    t = Table(title=f"Threshold search on {name}: {len(scores)} tokens, {result.gold} gold PHI")
    for col in ("low", "high", "recall", "precision", "masked"):
        t.add_column(col, justify="right")
    for p in result.frontier():
        if p.recall >= target_recall - 0.01:
            t.add_row(f"{p.low:.4f}", f"{p.high:.4f}", f"{p.recall:.4f}", f"{p.precision:.4f}", str(p.masked))
    out_console.print(t)
    if best is None:
        raise CliError(f"no threshold pair reaches recall {target_recall} on {name}")
    out_console.print(
        f"best at recall >= {target_recall}: low {best.low:.4f}, high {best.high:.4f}: "
        f"recall {best.recall:.4f}, precision {best.precision:.4f}"
    )
    if write:
        record_thresholds(model_dir, best, target_recall, name)
        err.print(f"[green]thresholds stored in {escape(str(model_dir / 'manifest.json'))}[/green]")


@app.command()
def deidentify(
    in_path: InOpt,
    out_path: OutOpt,
    policy: Annotated[Optional[str], typer.Option("--policy", help="profile name in conf/policies or a YAML path")] = None,
    case_field: Annotated[Optional[str], typer.Option("--case-field", help="input field holding the case id (default: each document is its own case)")] = None,
    key_file: Annotated[Optional[Path], typer.Option("--key-file", dir_okay=False, help="secret key file (default: $DEID_SECRET_KEY)")] = None,
    method: MethodOpt = Method.hybrid,
    config: ConfigOpt = None,
    dictionaries: DictOpt = None,
    model: ModelOpt = None,
    progress: ProgressOpt = True,
) -> None:
    """Detect PHI and replace it as the policy says (shifted dates, pseudonyms, tags)."""
    from collections import Counter

    from deid_core.pipeline import DeidPipeline
    from deid_core.replace.keys import MissingKeyError, load_key
    from deid_core.replace.policy import load_policy

    t0 = time.perf_counter()
    cfg, art = _load(config, dictionaries)
    prof = load_policy(policy or cfg.replacement.default_policy, cfg.replacement.policies_dir)
    try:
        key = load_key(key_file) if prof.needs_key or key_file is not None else None
        pipe = DeidPipeline.build(cfg, prof, key, method=method, artifact=art, model_dir=model)
    except MissingKeyError as exc:
        raise CliError(f"{exc} (policy {prof.name!r}; the 'tags' policy needs no key)") from None
    n_docs = 0
    labels: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    missing_case = 0
    with atomic_text_writer(out_path) as fh:
        for batch in _batches(in_path, progress):
            case_ids = []
            for d in batch:
                value = d.meta.get(case_field) if case_field else d.doc_id
                if value is None or value == "":
                    # no case id: the document is its own case (consistent within it only)
                    missing_case += 1
                    value = d.doc_id
                case_ids.append(str(value))
            results = pipe.process([d.text for d in batch], case_ids)
            for doc, res in zip(batch, results, strict=True):
                line = {"doc_id": doc.doc_id, "text_deid": res.text, "spans": [r.to_json() for r in res.replacements]}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                labels.update(r.label for r in res.replacements)
                kept.update(res.kept)
                n_docs += 1
    if pipe.failures:
        err.print(f"[yellow]{pipe.failures} texts or entities could not be processed and were tagged (fail closed)[/yellow]")
    if missing_case:
        err.print(f"[yellow]{missing_case} documents had no {case_field!r}: each was treated as its own case[/yellow]")
    by_label = ", ".join(f"{k} {v}" for k, v in sorted(labels.items())) or "none"
    kept_txt = ", ".join(f"{k} {v}" for k, v in sorted(kept.items())) or "none"
    err.print(
        f"[green]{n_docs} documents[/green]; replaced: {by_label}; kept by policy: {kept_txt}; "
        f"{time.perf_counter() - t0:.1f}s ({escape(pipe.version)}) -> {escape(str(out_path))}"
    )


@app.command("build-ensemble")
def build_ensemble(
    member: Annotated[list[str], typer.Option("--member", help="model directory, optionally DIR:WEIGHT (repeatable)")],
    out: Annotated[Path, typer.Option("--out", help="the ensemble's directory (only its manifest.json is written)")],
) -> None:
    """Combine model directories of any family into one second stage (the weighted mean of their probabilities).

    Tune its thresholds next: `deid tune-thresholds --model OUT --gold ...`.
    """
    from deid_core.ensemble import parse_weighted, write_ensemble

    members: list[tuple[Path, float]] = []
    for m in member:
        try:
            path, weight = parse_weighted(m)
        except ValueError as exc:
            raise CliError(f"--member {exc}") from None
        if not (path / "manifest.json").exists():
            raise CliError(f"--member {str(path)!r} holds no model manifest")
        members.append((path, weight))
    man = write_ensemble(out, members)
    err.print(f"[green]ensemble {man.model_version}[/green] of {len(members)} models -> {escape(str(out))}; "
              f"no thresholds yet: run `deid tune-thresholds --model {escape(str(out))} --gold ...`")


@app.command("build-dictionaries")
def build_dictionaries(
    config: ConfigOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="artifact path (default: from config)")] = None,
) -> None:
    """Compile the safe/unsafe lists into the versioned dictionary artifact."""
    from deid_core.dictionaries.build import build_artifact

    cfg = load_config(config)
    t0 = time.perf_counter()
    art = build_artifact(cfg, out)
    counts = art.metadata["counts"]
    err.print(
        f"[green]dictionary artifact {art.version}[/green]: {counts['words']} words, "
        f"{counts['phrases']} phrases, {time.perf_counter() - t0:.1f}s -> {out or cfg.dictionaries.artifact}"
    )


@app.command("dictionaries-info")
def dictionaries_info(config: ConfigOpt = None, dictionaries: DictOpt = None,
                      verify: Annotated[bool, typer.Option(help="recompute the content hash")] = False) -> None:
    """Print the artifact's version, sources and counts (JSON)."""
    cfg = load_config(config)
    art = DictionaryArtifact.load(dictionaries or cfg.dictionaries.artifact, verify=verify)
    sys.stdout.write(json.dumps(art.metadata, indent=2, ensure_ascii=False) + "\n")


def main() -> None:
    """Entry point: turn expected failures into one-line messages and exit code 2."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        app(standalone_mode=False)
    except (CorpusFormatError, ConfigError, ArtifactError, ModelError, CliError) as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("[red]aborted[/red]")
        sys.exit(130)
    except Exception as exc:  # click usage errors and the unexpected
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        err.print(f"[red]error:[/red] unexpected {type(exc).__name__}; no output was written")
        sys.exit(1)


if __name__ == "__main__":
    main()
