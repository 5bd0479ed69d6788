"""Out-of-fold network scores on the training corpora, for the threshold search.

    python -m jobs.oof_scores --folds 3 --out build/oof
    python -m jobs.oof_scores --folds 3 --out build/oof-crf --family crf   # a CRF's, for its own thresholds
    python -m jobs.oof_scores --family ensemble --member-oof build/oof --member-oof build/oof-crf \
        --out build/oof-ens                                                # an ensemble's, from its members' fold models

Why: the per-reason thresholds are searched on the dev set, which holds a
few hundred PHI tokens per family; which 2-3 of them a target lets go decides
each family's threshold, so thresholds tuned there move a lot on new
patients (docs/measurements.md). The training corpora hold several times more
PHI, but the model has seen them, so its scores there are overconfident.
Out-of-fold scores fix that: the corpora are split into patient-level folds
(`deid_core.training.folds`), one model per fold is trained by the same
training job on everything else (same synthetic and VAERS documents, same
settings, dev for early stopping) and scores the fold it did not see.

The fold models are a little weaker than the final model (they saw less
PhysioNet text), so thresholds from their scores err towards masking.

Output, in the `--out` folder: `fold-<k>.npz` (`TokenScores.save`) per fold
and `oof.json` with how they were made. `deid tune-thresholds --oof <folder>`
and `jobs.train_model --oof <folder>` pool them with the dev set's scores.
A fold whose scores exist for the same configuration and split is not
trained again, so an interrupted run resumes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from deid_core.config import DeidConfig, load_config
from deid_core.corpus.document import Document
from deid_core.corpus.jsonl import write_jsonl
from deid_core.training.folds import DEFAULT_FOLD_KEY, split_folds
from deid_core.training.out_of_fold import OOF_INDEX, OutOfFold, file_sha256, read_oof, write_index
from deid_core.training.tuning import TokenScores

app = typer.Typer(add_completion=False, help=__doc__)


def say(msg: str) -> None:
    print(f"[oof] {msg}", file=sys.stderr, flush=True)


#: training settings that do not change a fold model: where it runs, and how thresholds are tuned after it
_NOT_SETUP = frozenset({"workdir", "shared_data", "spark_conf", "tuning_oof", "tuning_standoff",
                        "threshold_prior_strength", "threshold_target_recall"})
#: training options added after fold models existed, with the value that trains as before they existed:
#: at that value they stay out of the key, so adding an option does not orphan the folds already made
#: (the committed folds predate all three; with them in the key `make train` would have trained the
#: folds again for nothing). The floor only acts under the cosine schedule.
_ADDED_OFF: dict[str, object] = {"average_from_epoch": None, "learning_rate_schedule": "constant"}


def _setup_key(cfg: DeidConfig, folds: int, fold_key: str, max_epochs: int | None, family: str = "bilstm") -> str:
    """What decides the fold models: training settings, data contents, architecture, split. A change retrains.

    Paths enter by file name and content hash, not by location, and the scratch folder not at all,
    so a checkout elsewhere (a git worktree, a CI runner) finds the same folds.
    """
    d = cfg.deep

    def portable(value: object) -> object:
        if isinstance(value, Path):
            return f"{value.name}:{file_sha256(value)}" if value.is_file() else value.name
        if isinstance(value, list):
            return [portable(v) for v in value]
        return value

    training = {k: portable(getattr(d.training, k)) for k in type(d.training).model_fields
                if k not in _NOT_SETUP}
    for k, off in _ADDED_OFF.items():
        if training.get(k) == off:
            training.pop(k)
    if "learning_rate_schedule" not in training:
        training.pop("learning_rate_floor", None)
    arch = d.architecture.model_dump(mode="json")
    if not arch.get("rule_categories"):  # a switch added later: off, it keeps the keys of folds made before it
        arch.pop("rule_categories", None)
    parts = [training, arch, d.sequence.model_dump(mode="json"),
             d.vocabulary.model_dump(mode="json"), folds, fold_key, max_epochs]
    if family != "bilstm":  # the network's key stays what it was, so its existing folds are kept
        parts += [family, d.classic.model_dump(mode="json")]
    payload = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _held_out(cfg: DeidConfig, folds: int, fold_key: str) -> tuple[dict[Path, list[Document]], dict[Path, list[list[Document]]]]:
    """The training corpora, and each one's documents split into the patient folds."""
    from jobs.train_model import read_corpus

    corpora = {path: read_corpus(path) for path in cfg.deep.training.corpora}
    return corpora, {path: split_folds(docs, folds, fold_key) for path, docs in corpora.items()}


def _score_fold(cfg: DeidConfig, model_dir: Path, docs: list[Document], never: object, path: Path) -> TokenScores:
    """Score the held-out documents with a fold's model and save them to `path`."""
    from deid_core.detectors import Method, build_detector
    from deid_core.training.scoring import collect_scores

    det = build_detector(Method.deep, cfg, model_dir=model_dir)
    scores = collect_scores(det.inner, docs, never)  # type: ignore[arg-type]
    scores.save(path)
    return scores


def out_of_fold_scores(cfg: DeidConfig, out: Path, *, folds: int, fold_key: str = DEFAULT_FOLD_KEY,
                       config_file: Path | None = None, max_epochs: int | None = None,
                       master: str = "local[*]", rescore: bool = False, family: str = "bilstm") -> OutOfFold:
    """Train one model per fold of the training corpora and keep its scores on the fold it did not see.

    `rescore`: keep the fold models and score their folds again (the rules changed, the models did
    not); refuses when a fold model of this setup is missing.
    """
    from deid_core.hybrid.combiner import never_release_from
    from jobs.train_model import train_model

    if folds < 2:
        raise typer.BadParameter("--folds must be at least 2")
    tcfg = cfg.deep.training
    if not tcfg.corpora:
        raise typer.BadParameter("deep.training.corpora is empty: nothing to split into folds")
    corpora, held_out = _held_out(cfg, folds, fold_key)
    setup = _setup_key(cfg, folds, fold_key, max_epochs, family)
    out.mkdir(parents=True, exist_ok=True)
    index_path = out / OOF_INDEX
    previous = json.loads(index_path.read_text(encoding="utf-8")) if index_path.exists() else {}
    done = {f["fold"]: f for f in previous.get("folds", [])} if previous.get("setup") == setup else {}
    never = never_release_from(cfg)
    entries = []
    for k in range(folds):
        scores_path = out / f"fold-{k}.npz"
        test_docs: list[Document] = [d for path in corpora for d in held_out[path][k]]
        fold_dir = out / f"fold-{k}"
        if rescore:
            if k not in done or not (fold_dir / "model" / "manifest.json").exists():
                raise typer.BadParameter(f"no fold model {k} of this setup in {out}: run without --rescore first")
            t0 = time.perf_counter()
            scores = _score_fold(cfg, fold_dir / "model", test_docs, never, scores_path)
            entries.append({**done[k], "sha256": file_sha256(scores_path), "tokens": len(scores),
                            "gold_phi": int(scores.gold_phi.sum()), "rescored": True})
            _record(out, setup, cfg, folds, fold_key, entries + [e for j, e in done.items() if j > k], family)
            say(f"fold {k}: scored again, {len(scores)} tokens ({time.perf_counter() - t0:.0f}s)")
            continue
        if k in done and scores_path.exists() and file_sha256(scores_path) == done[k]["sha256"]:
            say(f"fold {k}: scores exist for this setup, kept")
            entries.append(done[k])
            continue
        t0 = time.perf_counter()
        fold_corpora = []
        for path, docs in corpora.items():
            ids = {d.doc_id for d in held_out[path][k]}
            p = fold_dir / "corpora" / (path.name if path.suffix == ".jsonl" else f"{path.name}.jsonl")
            p.parent.mkdir(parents=True, exist_ok=True)
            write_jsonl([d for d in docs if d.doc_id not in ids], p)
            fold_corpora.append(p)
        fold_cfg = cfg.model_copy(update={"deep": cfg.deep.model_copy(update={
            "training": tcfg.model_copy(update={"workdir": fold_dir / "work"})})})
        say(f"fold {k}: training on {sum(len(v) - len(held_out[p][k]) for p, v in corpora.items())} documents, "
            f"{len(test_docs)} held out")
        manifest = train_model(
            fold_cfg, config_file=config_file, out=fold_dir / "model", corpora=fold_corpora,
            dev_path=tcfg.dev, synthetic_docs=tcfg.synthetic_docs, max_epochs=max_epochs, master=master,
            tune_thresholds=False, family=family,
        )
        scores = _score_fold(fold_cfg, fold_dir / "model", test_docs, never, scores_path)
        entries.append({
            "fold": k, "scores": scores_path.name, "sha256": file_sha256(scores_path),
            "model_version": manifest.model_version, "documents": len(test_docs), "tokens": len(scores),
            "gold_phi": int(scores.gold_phi.sum()), "seconds": round(time.perf_counter() - t0, 1),
        })
        _record(out, setup, cfg, folds, fold_key, entries, family)
        say(f"fold {k}: {len(scores)} tokens, {int(scores.gold_phi.sum())} PHI "
            f"({time.perf_counter() - t0:.0f}s)")
    _record(out, setup, cfg, folds, fold_key, entries, family)
    return read_oof(out)


def ensemble_out_of_fold(cfg: DeidConfig, out: Path, members: list[tuple[Path, float]]) -> OutOfFold:
    """An ensemble's out-of-fold scores from its members' fold models, fold by fold.

    Fold k's ensemble is the weighted mean of the members' fold-k models (each
    trained without fold k), scored on fold k: exactly what the final
    ensemble would give on patients it never saw. Averaging the members' stored
    P(safe) instead would be wrong: a token group's P(safe) is the minimum over
    its tokens, and the minimum of a mean is not the mean of the minima. The
    members' folders must come from the same folds of the same corpora.
    """
    from deid_core.ensemble import write_ensemble
    from deid_core.hybrid.combiner import never_release_from

    if len(members) < 2:
        raise typer.BadParameter("an ensemble's out-of-fold scores need at least two --member-oof folders")
    parts = []
    for folder, weight in members:
        try:
            oof = read_oof(folder)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        if oof.family == "ensemble":
            raise typer.BadParameter(f"{folder} holds an ensemble's scores; give its members' folders")
        parts.append((folder, weight, oof))
    first = parts[0][2].index
    for folder, _, oof in parts[1:]:
        for key in ("folds_total", "fold_key", "corpora"):
            if oof.index.get(key) != first.get(key):
                raise typer.BadParameter(f"{folder} was made with another {key} than {parts[0][0]}: "
                                         "the members' folds must be the same")
    folds, fold_key = int(first["folds_total"]), str(first["fold_key"])
    corpora, held_out = _held_out(cfg, folds, fold_key)
    never = never_release_from(cfg)
    spec = [{"family": oof.family, "weight": weight, "setup": oof.index["setup"], "sha256": oof.index["sha256"]}
            for _, weight, oof in parts]
    setup = hashlib.sha256(json.dumps(spec, sort_keys=True).encode("utf-8")).hexdigest()
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for k in range(folds):
        t0 = time.perf_counter()
        test_docs: list[Document] = [d for path in corpora for d in held_out[path][k]]
        fold_models = []
        for folder, weight, oof in parts:
            entry = next((f for f in oof.index["folds"] if f["fold"] == k), None)
            model_dir = folder / f"fold-{k}" / "model"
            if entry is None or not (model_dir / "manifest.json").exists():
                raise typer.BadParameter(f"{folder} has no fold model {k}: its fold models are needed")
            if entry.get("documents") not in (None, len(test_docs)):
                raise typer.BadParameter(f"{folder} held out {entry['documents']} documents in fold {k}, "
                                         f"the corpora give {len(test_docs)}: the corpora changed since")
            fold_models.append((model_dir, weight))
        ens_dir = out / f"fold-{k}" / "model"
        manifest = write_ensemble(ens_dir, fold_models)
        scores_path = out / f"fold-{k}.npz"
        scores = _score_fold(cfg, ens_dir, test_docs, never, scores_path)
        entries.append({"fold": k, "scores": scores_path.name, "sha256": file_sha256(scores_path),
                        "model_version": manifest.model_version, "documents": len(test_docs),
                        "tokens": len(scores), "gold_phi": int(scores.gold_phi.sum()),
                        "seconds": round(time.perf_counter() - t0, 1)})
        say(f"fold {k}: ensemble of {len(fold_models)} fold models, {len(scores)} tokens "
            f"({time.perf_counter() - t0:.0f}s)")
    write_index(out, setup=setup, folds_total=folds, fold_key=fold_key, corpora=str(first["corpora"]),
                entries=entries, family="ensemble", members=spec)
    return read_oof(out)


def _record(out: Path, setup: str, cfg: DeidConfig, folds: int, fold_key: str, entries: list[dict],
            family: str = "bilstm") -> None:
    from deid_core.deep.features import arch_feature_names

    write_index(out, setup=setup, folds_total=folds, fold_key=fold_key,
                corpora="+".join(p.name for p in cfg.deep.training.corpora), entries=entries, family=family,
                feature_names=arch_feature_names(cfg.deep.architecture) if family == "bilstm" else None)


@app.command()
def main(
    out: Annotated[Path, typer.Option("--out", help="folder for the fold scores (and the fold models)")],
    folds: Annotated[int, typer.Option("--folds", min=2, help="patient-level folds")] = 3,
    fold_key: Annotated[str, typer.Option("--fold-key", help="regex whose first match in doc_id is the patient")] = DEFAULT_FOLD_KEY,
    config: Annotated[Optional[Path], typer.Option("--config")] = None,
    max_epochs: Annotated[Optional[int], typer.Option()] = None,
    master: Annotated[str, typer.Option(help="Spark master")] = "local[*]",
    rescore: Annotated[bool, typer.Option("--rescore", help="score the folds again with the existing fold models (after a rules change)")] = False,
    family: Annotated[str, typer.Option("--family", help="bilstm | crf | svm | ensemble: whose fold models and scores")] = "bilstm",
    member_oof: Annotated[Optional[list[str]], typer.Option("--member-oof", help="with --family ensemble: a member's out-of-fold folder, optionally DIR:WEIGHT, in the ensemble's member order (repeatable)")] = None,
) -> None:
    """Train a model per fold and write its scores on the held-out fold."""
    import os
    import warnings

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"petastorm\..*")
    cfg = load_config(config)
    t0 = time.perf_counter()
    if family == "ensemble" or member_oof:
        if family != "ensemble":
            raise typer.BadParameter("--member-oof goes with --family ensemble")
        from deid_core.ensemble import parse_weighted

        try:
            members = [parse_weighted(m) for m in member_oof or []]
        except ValueError as exc:
            raise typer.BadParameter(f"--member-oof {exc}") from None
        oof = ensemble_out_of_fold(cfg, out, members)
        say(f"{oof.name}: {len(oof.pooled)} tokens, {time.perf_counter() - t0:.0f}s")
        return
    oof = out_of_fold_scores(cfg, out, folds=folds, fold_key=fold_key,
                             config_file=Path(config).resolve() if config else None,
                             max_epochs=max_epochs, master=master, rescore=rescore, family=family)
    pooled = oof.pooled
    say(f"{oof.name}: {len(pooled)} tokens, {int(pooled.gold_phi.sum())} PHI, {time.perf_counter() - t0:.0f}s")


if __name__ == "__main__":
    app()
