"""Accuracy of the methods on PhysioNet dev and test, and of the model variants.

Default: every method (rules, deep, hybrid with the default model) on dev and
test: token masking recall, precision (also under the i2b2 reading, where
masked ages and years count as PHI), F1, HIPAA recall, recall per gold
label, entity-level recall/precision, retention of non-PHI numbers and drug
names, and keep-span retention per keep label when the corpus has keep
spans (PhysioNet has none). Numbers only, never text.

With `--variants DIR`: one row per model directory under DIR (as written by
`make train-variants`: variants a-d, CRF and window heads) x method (deep,
hybrid), plus rules, on the test split.

With `--synthetic N`: every method on N synthetic narratives generated with
seed 777 (not the training seed, 101): recall, HIPAA recall, precision and
keep-span retention overall and per keep label.

With `--vaers`: every method on the hand-annotated VAERS set
(`bench/annotations/vaers_pv`, dev and test): PHI recall and keep-span
retention on real pharmacovigilance text.

With `--frontier`: the hybrid's precision-recall frontier on PhysioNet test
with thresholds chosen on dev only (PhysioNet dev plus the configured
stand-off tuning sets, as `make train` does): for each recall target, the
per-reason thresholds that are best on dev are applied to test; PhysioNet's deid.pl
(recall 0.964, precision 0.715 on test) is printed and plotted beside it.
Each point also carries a bound: the precision of the best per-reason
thresholds at the same test recall, searched on test itself. No choice
made on dev can beat it with this network, so when the bound at deid.pl's
recall lies below a target, the gap is the network's ranking of PHI against
safe tokens, not the threshold search's. It is a diagnosis: nothing is
chosen or stored from it. The curve is then read at deid.pl's recall: the
most precise dev-chosen point that reaches it, and the precision
interpolated between the two points around it (`read_at_recall`).

`--model DIR` scores another model directory instead of the default.

With `--rendered [POLICY]` (any of the modes above but `--frontier`): each
method is run through the whole pipeline and scored on what its output
changes under the policy (the configured one by default): entities the
policy keeps in clear (ages under 90, a year alone, a state or a country
under HIPAA Safe Harbor) count as unmasked, as a reader of the output sees
them. Without it the detector's mask is scored.

With `--models DIR [DIR ...]`: rules plus every given model directory, of
any family (BiLSTM, CRF, SVM: `deid_core.models`), alone (deep: its most
likely class) and as the hybrid's second stage, on `--split` (default dev)
or with `--vaers` on the annotated VAERS part(s); each row also has the
family, the training time its manifest records and tokens/s of detection
(one process, so per core where the model uses one).

    .venv/bin/python bench/accuracy.py [--json] [--model DIR]
    .venv/bin/python bench/accuracy.py --variants build/variants [--split test]
    .venv/bin/python bench/accuracy.py --models build/models/crf build/models/svm [--split dev] [--vaers]
    .venv/bin/python bench/accuracy.py --synthetic 300 [--json]
    .venv/bin/python bench/accuracy.py --vaers [--split test]
    .venv/bin/python bench/accuracy.py --frontier [--plot build/frontier.png] [--oof build/oof]
    .venv/bin/python bench/accuracy.py --models models/default --split test --rendered
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _common import PHYSIONET, REPO, SHARED, require

from deid_core.config import load_config
from deid_core.corpus.document import KEEP_LABELS, Document
from deid_core.corpus.jsonl import read_jsonl
from deid_core.detectors import Method, build_detector
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.evaluation.corpus import drug_names, evaluate_corpus
from deid_core.evaluation.hipaa import HipaaMap
from deid_core.evaluation.metrics import Counts
from deid_core.synthetic.narratives import generate_narratives

#: PhysioNet's own deid.pl on the test split (recall, precision), as measured in issue 14
DEIDPL_TEST = (0.964, 0.715)
#: the lowest test recall at which `--frontier` reports its bound (thresholds searched on test itself)
BOUND_MIN_RECALL = 0.85
#: recall targets on dev whose thresholds make the `--frontier` points on test
FRONTIER_TARGETS = (1.0, 0.998, 0.997, 0.995, 0.9925, 0.99, 0.9875, 0.985, 0.9825, 0.98, 0.9775, 0.975, 0.9725, 0.97,
                    0.965, 0.96, 0.95, 0.94, 0.92, 0.9)
VAERS_PV = REPO / "bench" / "annotations" / "vaers_pv"

#: Seed of the `--synthetic` corpus: not the model-refresh training seed (101),
#: so the model is scored on narratives it was not trained on.
SYNTHETIC_SEED = 777


def synthetic_docs(n: int) -> list[Document]:
    return [s.to_document() for s in generate_narratives(n, SYNTHETIC_SEED)]


def vaers_docs(split: str) -> list[Document]:
    from deid_core.corpus.standoff import read_standoff

    return read_standoff(require(VAERS_PV / f"{split}.jsonl"), require(SHARED))


def frontier(model_dir: Path | None, plot: Path | None, oof: Path | None = None,
             prior_strength: float | None = None) -> list[dict]:
    """Per-reason thresholds chosen on dev for each target, applied to test (never chosen on test).

    `oof`: also pool out-of-fold scores of the training corpus (`jobs.oof_scores`) into the tuning set.
    `prior_strength`: the search's smoothing (default: the configured `threshold_prior_strength`, chosen
    for the operating point; a frontier measured before may have used another, so say which).
    """
    from deid_core.hybrid.combiner import never_release_from
    from deid_core.training.reason_search import masked_by
    from deid_core.training.scoring import collect_scores, tune_by_reason, tuning_documents

    cfg = load_config()
    det = build_detector(Method.deep, cfg, model_dir=model_dir)
    never = never_release_from(cfg)
    tcfg = cfg.deep.training
    # the same tuning set as `make train`
    tuning, _ = tuning_documents(tcfg, read_jsonl(require(PHYSIONET / "dev.jsonl")), "dev.jsonl")
    dev = collect_scores(det.inner, tuning, never)  # type: ignore[arg-type]
    if oof is not None:
        from deid_core.training.out_of_fold import read_oof

        out_of_fold = read_oof(oof)
        out_of_fold.check_model(model_dir or cfg.deep.model_dir)
        dev, _ = out_of_fold.pooled_with(dev, "dev")
    test = collect_scores(det.inner, read_jsonl(require(PHYSIONET / "test.jsonl")), never)  # type: ignore[arg-type]
    policy = {"fixed": dict(cfg.deep.combiner.by_reason), "ceilings": dict(cfg.deep.combiner.by_reason_ceiling)}
    smoothing = tcfg.threshold_prior_strength if prior_strength is None else prior_strength
    _, search = tune_by_reason(dev, min(FRONTIER_TARGETS), min_recall=min(FRONTIER_TARGETS),
                               prior_strength=smoothing, **policy)
    # the bound: the same search run on test itself, without smoothing (a diagnosis, never stored or used)
    _, bound = tune_by_reason(test, BOUND_MIN_RECALL, min_recall=BOUND_MIN_RECALL, **policy)
    rows = []
    for target in FRONTIER_TARGETS:
        pt = search.best_at_recall(target)
        if pt is None:
            continue
        masked = masked_by(pt.thresholds, test.families, test.never_release, test.p_safe)  # type: ignore[arg-type]
        w = test.weights
        tp = int((w * (masked & test.gold_phi)).sum())
        gold = int((w * test.gold_phi).sum())
        n_masked = int((w * masked).sum())
        best = bound.best_at_recall(tp / gold) if tp / gold >= BOUND_MIN_RECALL else None
        rows.append({"dev_target": target, "dev_recall": round(pt.recall, 4), "dev_precision": round(pt.precision, 4),
                     "test_recall": round(tp / gold, 4), "test_precision": round(tp / n_masked if n_masked else 1.0, 4),
                     "test_masked": n_masked, "test_gold": gold,
                     "bound_precision": round(best.precision, 4) if best is not None else None, "version": det.version,
                     "prior_strength": smoothing})
    at_deidpl = bound.best_at_recall(DEIDPL_TEST[0])
    reading = read_at_recall(rows, DEIDPL_TEST[0])
    rows.append({"dev_target": None, "test_recall": DEIDPL_TEST[0], "test_precision": DEIDPL_TEST[1],
                 "bound_precision": round(at_deidpl.precision, 4) if at_deidpl is not None else None,
                 "version": "deid.pl", "ours_at_recall": reading})
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4.5))
        ours = [r for r in rows if r["dev_target"] is not None]
        ax.plot([r["test_recall"] for r in ours], [r["test_precision"] for r in ours], "o-",
                label="hybrid, per-reason thresholds chosen on dev")
        ax.plot([r["test_recall"] for r in ours if r["bound_precision"] is not None],
                [r["bound_precision"] for r in ours if r["bound_precision"] is not None], ":", color="grey",
                label="bound: thresholds searched on test itself")
        ax.plot([DEIDPL_TEST[0]], [DEIDPL_TEST[1]], "s", color="black", label="deid.pl")
        ax.set_xlabel("token recall (PhysioNet test)")
        ax.set_ylabel("token precision")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower left")
        plot.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(plot, dpi=120, bbox_inches="tight")
        plt.close(fig)
    return rows


def read_at_recall(points: list[dict], recall: float) -> dict | None:
    """The dev-chosen frontier read at a test recall (deid.pl's): the most precise point that reaches it,
    and the precision interpolated linearly between the two points around it. Points are only read here;
    every one of them was chosen on the tuning set."""
    ours = sorted((r for r in points if r["dev_target"] is not None), key=lambda r: r["test_recall"])
    reached = [r for r in ours if r["test_recall"] >= recall]
    if not reached:
        return None
    best = max(reached, key=lambda r: r["test_precision"])
    out = {"recall": recall, "best_reaching": {k: best[k] for k in ("dev_target", "test_recall", "test_precision")},
           "interpolated_precision": None}
    below = [r for r in ours if r["test_recall"] < recall]
    if below:
        lo, hi = below[-1], reached[0]
        w = (recall - lo["test_recall"]) / (hi["test_recall"] - lo["test_recall"])
        out["interpolated_precision"] = round(lo["test_precision"] + w * (hi["test_precision"] - lo["test_precision"]), 4)
    elif reached[0]["test_recall"] == recall:
        out["interpolated_precision"] = reached[0]["test_precision"]
    return out


def _print_frontier(rows: list[dict]) -> None:
    print(f"{'dev target':>10s} {'dev R':>7s} {'dev P':>7s} {'test R':>7s} {'test P':>7s} {'masked':>7s} {'bound P':>7s}")
    for r in rows:
        bound = f"{r['bound_precision']:7.4f}" if r["bound_precision"] is not None else f"{'-':>7s}"
        if r["dev_target"] is None:
            print(f"{r['version']:>10s} {'':7s} {'':7s} {r['test_recall']:7.4f} {r['test_precision']:7.4f} {'':7s} {bound}")
            continue
        print(f"{r['dev_target']:10.4f} {r['dev_recall']:7.4f} {r['dev_precision']:7.4f} "
              f"{r['test_recall']:7.4f} {r['test_precision']:7.4f} {r['test_masked']:7d} {bound}")
    for r in rows:
        reading = r.get("ours_at_recall")
        if reading is not None:
            b = reading["best_reaching"]
            interp = reading["interpolated_precision"]
            print(f"at deid.pl's recall {reading['recall']}: the most precise dev-chosen point reaching it is "
                  f"{b['test_recall']:.4f} / {b['test_precision']:.4f} (dev target {b['dev_target']}); "
                  f"interpolated at {reading['recall']}: {'-' if interp is None else f'{interp:.4f}'}")
    smoothing = {r["prior_strength"] for r in rows if r["dev_target"] is not None}
    print(f"threshold search smoothing (prior strength): {', '.join(f'{k:g}' for k in sorted(smoothing))}")
    print("bound P: the most precise per-reason thresholds at that test recall, searched on test itself "
          "(what no choice made on dev can beat with this network; a diagnosis, never used)")


def run(method: Method, split: str, model_dir: Path | None = None,
        docs: list[Document] | None = None, rendered: str | None = None) -> tuple[Counts, float, str]:
    """Score `method` on a PhysioNet split, or on `docs` when given.

    `rendered`: score the output under that policy ("" for the configured one) instead of the mask.
    """
    cfg = load_config()
    art = DictionaryArtifact.load(cfg.dictionaries.artifact)
    hipaa = HipaaMap.load(cfg.evaluation.label_map, cfg.evaluation.hipaa_age_threshold)
    det = build_detector(method, cfg, art, model_dir=model_dir)
    if rendered is not None:
        from deid_core.pipeline import RenderedSpans

        det = RenderedSpans.build(cfg, rendered or None, method=method, artifact=art, model_dir=model_dir)  # type: ignore[assignment]
    if docs is None:
        docs = read_jsonl(require(PHYSIONET / f"{split}.jsonl"))
    # one detector call for the whole split: the timing is the detector's alone
    res = evaluate_corpus(docs, hipaa, detector=det, is_drug=drug_names(art), batch_size=None)
    return res.counts, res.detect_seconds, det.version


def model_info(model_dir: Path | None) -> dict:
    """Family and training time of a model directory (the configured one when None), from its manifest."""
    from deid_core.models import read_manifest

    m = read_manifest(model_dir or load_config().deep.model_dir)
    t = m.training
    seconds = t.get("fit_seconds")
    return {"family": m.family, "model_version": m.model_version,
            "training_seconds": round(float(seconds), 1) if seconds is not None else None}


def evaluate(name: str, method: Method, split: str, model_dir: Path | None = None,
             docs: list[Document] | None = None, rendered: str | None = None) -> dict:
    """One result row: `run` plus the family, training time and detection speed (tokens/s)."""
    c, secs, version = run(method, split, model_dir, docs=docs, rendered=rendered)
    d = c.as_dict()
    d.update(name=name, method=method.value, split=split, version=version, detect_seconds=round(secs, 2),
             tokens_per_second=round(c.tokens / secs, 1) if secs > 0 else None)
    if method is not Method.rules:
        d.update(model_info(model_dir))
    return d


def _print_models(results: list[dict]) -> None:
    print(f"\n{'method':22s} {'split':5s} {'family':7s} {'train s':>8s} {'tokens/s':>9s}")
    for r in results:
        ts = r.get("training_seconds")
        train = f"{ts:8.0f}" if ts is not None else f"{'-':>8s}"
        print(f"{r['name']:22s} {r['split']:5s} {r.get('family', '-'):7s} {train} {r['tokens_per_second'] or 0:9.0f}")


def _row(name: str, r: dict) -> str:
    t, e, ret = r["token"], r["entity"], r["retention"]
    return (f"{name:22s} {r['split']:5s} {t['gold']:5d} {t['recall']:7.4f} {t['precision']:7.4f} "
            f"{t['precision_i2b2_reading']:9.4f} {t['f1']:7.4f} {t['hipaa_recall']:7.4f} "
            f"{e['overlap_recall']:8.4f} {e['exact_precision']:8.4f} "
            f"{ret['numeric_retention']:7.4f} {ret['drug_retention']:8.4f}")


HEAD = (f"{'method':22s} {'split':5s} {'gold':>5s} {'recall':>7s} {'prec.':>7s} {'prec.i2b2':>9s} {'F1':>7s} "
        f"{'HIPAA-R':>7s} {'ent.ov.R':>8s} {'ent.ex.P':>8s} {'num.ret':>7s} {'drug.ret':>8s}")


def _print(results: list[dict]) -> None:
    print(HEAD)
    for r in results:
        print(_row(r["name"], r))
    print("\nrecall per gold label (caught/gold)")
    for r in results:
        per = ", ".join(f"{k} {v['caught']}/{v['gold']} ({v['recall']:.3f})" for k, v in r["token"]["per_label"].items())
        print(f"{r['name']:22s} {r['split']:5s} {per}")
    if any(r["keep"]["tokens"] for r in results):
        _print_keep(results)


def _print_keep(results: list[dict], column: str = "split") -> None:
    """Keep-span retention per keep label (kept/tokens), one row per result."""
    print("\nkeep-span retention (keep-span tokens no masked span overlaps)")
    print(f"{'method':22s} {column:9s} {'all':>7s} " + " ".join(f"{lab:>8s}" for lab in KEEP_LABELS))
    for r in results:
        per = r["keep"]["per_label"]
        cells = " ".join(f"{per[lab]['retention']:8.4f}" if lab in per else f"{'-':>8s}" for lab in KEEP_LABELS)
        print(f"{r['name']:22s} {r['split']:9s} {r['keep']['retention']:7.4f} {cells}")
    print("\nkeep-span tokens per label (kept/tokens)")
    for r in results:
        per = ", ".join(f"{k} {v['kept']}/{v['tokens']}" for k, v in r["keep"]["per_label"].items())
        print(f"{r['name']:22s} {r['split']:9s} {per}")


def _print_synthetic(results: list[dict]) -> None:
    print(f"{'method':22s} {'corpus':9s} {'gold':>5s} {'recall':>7s} {'HIPAA-R':>7s} {'prec.':>7s}")
    for r in results:
        t = r["token"]
        print(f"{r['name']:22s} {r['split']:9s} {t['gold']:5d} {t['recall']:7.4f} "
              f"{t['hipaa_recall']:7.4f} {t['precision']:7.4f}")
    _print_keep(results, "corpus")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--variants", type=Path, help="folder of variant model directories")
    ap.add_argument("--split", action="append", help="split(s) to evaluate (default dev and test; test for variants)")
    ap.add_argument("--synthetic", type=int, metavar="N",
                    help=f"evaluate every method on N synthetic narratives (seed {SYNTHETIC_SEED}) instead")
    ap.add_argument("--vaers", action="store_true", help="evaluate on the annotated VAERS set instead")
    ap.add_argument("--frontier", action="store_true", help="precision-recall frontier on test, thresholds from dev")
    ap.add_argument("--plot", type=Path, help="PNG of the frontier (with --frontier)")
    ap.add_argument("--oof", type=Path, help="with --frontier: pool these out-of-fold scores (jobs.oof_scores) with dev")
    ap.add_argument("--prior-strength", type=float,
                    help="with --frontier: the threshold search's smoothing (default: the configured one)")
    ap.add_argument("--model", type=Path, help="model directory (default: the configured one)")
    ap.add_argument("--models", type=Path, nargs="+", metavar="DIR",
                    help="model directories of any family (BiLSTM, CRF, SVM): each alone and as the hybrid's second stage")
    ap.add_argument("--rendered", nargs="?", const="", metavar="POLICY",
                    help="score what the output changes under a policy (default: the configured one): ages "
                         "under 90, years alone, states and countries it keeps count as unmasked")
    args = ap.parse_args()
    results = []
    if args.models:
        parts = [(f"v-{s}", vaers_docs(s)) for s in (args.split or ["dev"])] if args.vaers else \
            [(s, None) for s in (args.split or ["dev"])]
        for split, docs in parts:
            results.append(evaluate("rules", Method.rules, split, docs=docs, rendered=args.rendered))
            for model_dir in args.models:
                for method in (Method.deep, Method.hybrid):
                    results.append(evaluate(f"{model_dir.name}/{method.value}", method, split, model_dir, docs,
                                            rendered=args.rendered))
        if args.json:
            print(json.dumps(results, indent=2))
        else:
            _print(results)
            _print_models(results)
        return
    if args.frontier:
        rows = frontier(args.model, args.plot, args.oof, args.prior_strength)
        print(json.dumps(rows, indent=2) if args.json else "", end="" if not args.json else "\n")
        if not args.json:
            _print_frontier(rows)
        return
    if args.vaers:
        for split in args.split or ["dev", "test"]:
            docs = vaers_docs(split)
            for m in Method:
                c, secs, version = run(m, f"vaers-{split}", args.model, docs=docs, rendered=args.rendered)
                d = c.as_dict()
                d.update(name=m.value, method=m.value, split=f"v-{split}", version=version,
                         detect_seconds=round(secs, 2))
                results.append(d)
        print(json.dumps(results, indent=2)) if args.json else _print(results)
        return
    if args.synthetic is not None:
        if args.synthetic < 1:
            ap.error("--synthetic needs a positive number of narratives")
        docs = synthetic_docs(args.synthetic)
        corpus = f"synth{args.synthetic}"
        for m in Method:
            c, secs, version = run(m, corpus, docs=docs, rendered=args.rendered)
            d = c.as_dict()
            d.update(name=m.value, method=m.value, split=corpus, seed=SYNTHETIC_SEED, version=version,
                     detect_seconds=round(secs, 2))
            results.append(d)
        if args.json:
            print(json.dumps(results, indent=2))
        else:
            _print_synthetic(results)
        return
    if args.variants:
        splits = args.split or ["test"]
        jobs: list[tuple[str, Method, Path | None]] = [("rules", Method.rules, None)]
        for model_dir in sorted(p for p in args.variants.iterdir() if (p / "manifest.json").exists()):
            for method in (Method.deep, Method.hybrid):
                jobs.append((f"{model_dir.name}/{method.value}", method, model_dir))
    else:
        splits = args.split or ["dev", "test"]
        jobs = [(m.value, m, args.model) for m in Method]
    for name, method, model_dir in jobs:
        for split in splits:
            c, secs, version = run(method, split, model_dir, rendered=args.rendered)
            d = c.as_dict()
            d.update(name=name, method=method.value, split=split, version=version, detect_seconds=round(secs, 2))
            results.append(d)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results)


if __name__ == "__main__":
    main()
