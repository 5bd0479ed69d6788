"""Training of the classical second stages: a linear-chain CRF and a calibrated linear SVM.

Why here: `jobs/train_model.py --family crf|svm` builds the same training
documents as for the network (corpora, surrogate copies, synthetic and
VAERS narratives), then hands them to `train_classic`, which runs the rules
on each, labels the tokens exactly as the network's token tables do
(`deid_core.training.data.labelled_analysis`), builds the lexicon with the
network vocabulary's PHI rule, fits the model, scores dev, and writes the
model directory (`deid_core.classic` reads it). Thresholds are tuned
afterwards by the job, on the model's own P(safe), like the network's.

The CRF is CRFsuite (L-BFGS, elastic net) over whole texts. The SVM is
scikit-learn's `LinearSVC` (LIBLINEAR, one-vs-rest), whose margins are
turned into probabilities by one Platt sigmoid per class fitted on
out-of-fold margins: the corpora are split into the same patient-level folds
as `jobs.oof_scores` uses for the network (`deid_core.training.folds`), and
the synthetic and VAERS documents train in every fold as they do there.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from deid_core.classic.crf import CRF_FILE
from deid_core.classic.features import UNKNOWN_WORD, Lexicon, WindowFeatures, affixes_of
from deid_core.classic.manifest import LEXICON_FILE, ClassicManifest
from deid_core.classic.svm import FEATURE_INDEX_FILE, WEIGHTS_FILE, SvmParameters
from deid_core.config import DeidConfig
from deid_core.corpus.atomic import atomic_text_writer
from deid_core.corpus.document import Document
from deid_core.deep.features import load_salutations
from deid_core.deep.vocabulary import Vocabulary, normalise_word
from deid_core.dictionaries.artifact import DictionaryArtifact
from deid_core.model_files import content_version, file_sha256
from deid_core.models import load_model
from deid_core.rules.deidentifier import RuleAnalysis, RuleDeidentifier
from deid_core.training.data import labelled_analysis, phi_only_words
from deid_core.training.folds import DEFAULT_FOLD_KEY, compile_key, fold_of

CLASSIC_FAMILIES = ("crf", "svm")
#: a class the SVM of one fold never saw gets this margin on the fold it scores ("certainly not")
_ABSENT_MARGIN = -10.0


@dataclass
class Example:
    """One training text: the rules' analysis, the class id per token, and its calibration fold (-1: every fold)."""

    analysis: RuleAnalysis
    labels: np.ndarray
    fold: int = -1


def examples_from(docs: Sequence[tuple[str, Document]], rules: RuleDeidentifier, cfg: DeidConfig, *,
                  fold_sources: frozenset[str] = frozenset(), folds: int = 0,
                  fold_key: str = DEFAULT_FOLD_KEY) -> list[Example]:
    """Label every document; those from `fold_sources` (the corpora and their surrogate copies) get a fold.

    A surrogate copy ("12-3#swap0") takes its original's fold, so no fold model trains on a copy of
    a text it scores.
    """
    tcfg = cfg.deep.training
    key = compile_key(fold_key)
    out: list[Example] = []
    for source, doc in docs:
        analysis, labels = labelled_analysis(doc, rules, cfg.deep.classes, dict(tcfg.label_map), tcfg.age_phi_min)
        fold = fold_of(doc.doc_id.split("#swap", 1)[0], folds, key) if folds and source in fold_sources else -1
        out.append(Example(analysis, labels, fold))
    return out


def build_lexicon(examples: Sequence[Example], cfg: DeidConfig) -> Lexicon:
    """Words and affixes seen `min_count` times and not mostly inside gold PHI (the network vocabulary's rule)."""
    vcfg = cfg.deep.vocabulary
    lengths = cfg.deep.classic.affix_lengths
    words: Counter[str] = Counter()
    words_phi: Counter[str] = Counter()
    affixes: Counter[str] = Counter()
    affixes_phi: Counter[str] = Counter()
    for ex in examples:
        for tok, label in zip(ex.analysis.tokens, ex.labels.tolist(), strict=True):
            w = normalise_word(tok.lower)
            words[w] += 1
            values = [v for _, v in affixes_of(w, lengths)]
            affixes.update(values)
            if label > 0:
                words_phi[w] += 1
                affixes_phi.update(values)

    def kept(counts: Counter[str], phi: Counter[str]) -> frozenset[str]:
        excluded = phi_only_words(counts, phi, vcfg.exclude_phi_share) if vcfg.exclude_phi else set()
        excluded.add(UNKNOWN_WORD)
        vocab = Vocabulary.from_counts(counts, Counter(), min_count=vcfg.min_count, max_size=vcfg.max_size,
                                       excluded=excluded)
        return frozenset(vocab.words[2:])  # without <pad>, <unk>

    return Lexicon(kept(words, words_phi), kept(affixes, affixes_phi))


# -- CRF ------------------------------------------------------------------------------------------


def fit_crf(examples: Sequence[Example], features: WindowFeatures, classes: Sequence[str], cfg: DeidConfig,
            path: Path) -> dict[str, Any]:
    """Train CRFsuite on whole texts and write its model file to `path`; returns what the training did."""
    import pycrfsuite

    ccfg = cfg.deep.classic.crf
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    trainer.set_params({"c1": ccfg.c1, "c2": ccfg.c2, "max_iterations": ccfg.max_iterations,
                        "feature.possible_transitions": ccfg.all_possible_transitions})
    for ex in examples:
        if len(ex.labels):
            trainer.append(features.sequence(ex.analysis), [classes[i] for i in ex.labels.tolist()])
    trainer.train(str(path))
    last = trainer.logparser.last_iteration or {}
    return {"iterations": last.get("num"), "loss": last.get("loss"), "c1": ccfg.c1, "c2": ccfg.c2,
            "max_iterations": ccfg.max_iterations, "all_possible_transitions": ccfg.all_possible_transitions,
            "library": f"python-crfsuite {version('python-crfsuite')}"}


# -- SVM ------------------------------------------------------------------------------------------


def fit_platt(margins: np.ndarray, positive: np.ndarray) -> tuple[float, float]:
    """Platt's sigmoid P(positive | margin) = 1 / (1 + exp(a * margin + b)), with his smoothed targets.

    Why not scikit-learn's `CalibratedClassifierCV`: its cross-fitting needs folds
    that partition every row, while here the synthetic and VAERS documents
    train in every fold and are never scored (as in the network's out-of-fold
    job). The fit is the same as its "sigmoid" method: Platt's targets
    (n+ + 1) / (n+ + 2) and 1 / (n- + 2), L-BFGS from a = 0 and the prior's log-odds.
    """
    from scipy.optimize import minimize
    from scipy.special import expit

    f = np.asarray(margins, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    n1 = float(pos.sum())
    n0 = float(len(pos) - n1)
    target = np.where(pos, (n1 + 1.0) / (n1 + 2.0), 1.0 / (n0 + 2.0))

    def loss_grad(ab: np.ndarray) -> tuple[float, np.ndarray]:
        z = -(ab[0] * f + ab[1])
        loss = float(np.sum(np.logaddexp(0.0, z) - target * z))
        d = expit(z) - target  # dloss/dz
        return loss, np.array([-float(np.dot(d, f)), -float(d.sum())])

    start = np.array([0.0, float(np.log((n0 + 1.0) / (n1 + 1.0)))])
    res = minimize(loss_grad, start, method="L-BFGS-B", jac=True,
                   options={"gtol": 1e-6, "ftol": 64 * np.finfo(float).eps})
    return float(res.x[0]), float(res.x[1])


def encode_rows(examples: Sequence[Example], features: WindowFeatures) -> tuple[Any, np.ndarray, np.ndarray, list[str]]:
    """(X, y, fold per row, feature names): the binary CSR matrix of every token's window features."""
    from scipy import sparse

    index: dict[str, int] = {}
    cols: list[np.ndarray] = []
    indptr = [0]
    labels: list[np.ndarray] = []
    folds: list[np.ndarray] = []
    total = 0
    for ex in examples:
        for feats in features.sequence(ex.analysis):
            ids = sorted({index.setdefault(f, len(index)) for f in feats})
            cols.append(np.asarray(ids, dtype=np.int32))
            total += len(ids)
            indptr.append(total)
        labels.append(ex.labels.astype(np.int64))
        folds.append(np.full(len(ex.labels), ex.fold, dtype=np.int64))
    col = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int32)
    x = sparse.csr_matrix((np.ones(len(col), dtype=np.float64), col, np.asarray(indptr, dtype=np.int64)),
                          shape=(len(indptr) - 1, len(index)))
    names = [""] * len(index)
    for name, i in index.items():
        names[i] = name
    y = np.concatenate(labels) if labels else np.zeros(0, dtype=np.int64)
    fold = np.concatenate(folds) if folds else np.zeros(0, dtype=np.int64)
    return x, y, fold, names


def _svc(cfg: DeidConfig):  # type: ignore[no-untyped-def]
    from sklearn.svm import LinearSVC

    scfg = cfg.deep.classic.svm
    return LinearSVC(C=scfg.C, max_iter=scfg.max_iter, dual="auto", random_state=cfg.deep.training.seed)


def _margins(svc: Any, x: Any, classes: np.ndarray) -> np.ndarray:
    """Margins of `svc` on `x`, one column per class of `classes` (the final model's), absent ones very low."""
    dec = np.asarray(svc.decision_function(x), dtype=np.float64)
    if len(classes) == 2:  # one margin, the second class's
        if list(svc.classes_) != list(classes):
            raise ValueError("a fold model saw only one class: too few documents for the calibration folds")
        return dec.reshape(-1, 1)
    if dec.ndim == 1:  # a fold that saw two classes only
        dec = np.stack([-dec, dec], axis=1)
    out = np.full((x.shape[0], len(classes)), _ABSENT_MARGIN)
    where = {c: j for j, c in enumerate(classes)}
    for k, c in enumerate(svc.classes_):
        out[:, where[c]] = dec[:, k]
    return out


def fit_svm(x: Any, y: np.ndarray, fold: np.ndarray, cfg: DeidConfig, say: Callable[[str], None]) -> tuple[SvmParameters, dict[str, Any]]:
    """One `LinearSVC` on every row, and per class a Platt sigmoid on the out-of-fold margins of the corpora."""
    folds = cfg.deep.classic.svm.calibration_folds
    t0 = time.perf_counter()
    final = _svc(cfg).fit(x, y)
    classes = np.asarray(final.classes_)
    if len(classes) < 2:
        raise ValueError("the training data hold one class only")
    say(f"SVM fitted on {x.shape[0]} tokens, {x.shape[1]} features ({time.perf_counter() - t0:.0f}s)")
    scored = fold >= 0
    if not scored.any():
        raise ValueError("no corpus document to calibrate on: the SVM's sigmoids need the corpora's folds")
    cal = np.zeros((int(scored.sum()), classes.shape[0] if len(classes) > 2 else 1))
    cal_rows = np.flatnonzero(scored)
    for k in range(folds):
        held = fold[cal_rows] == k
        if not held.any():
            continue
        t1 = time.perf_counter()
        train = fold != k
        model = _svc(cfg).fit(x[train], y[train])
        cal[held] = _margins(model, x[cal_rows[held]], classes)
        say(f"calibration fold {k}: {int(held.sum())} tokens scored ({time.perf_counter() - t1:.0f}s)")
    y_cal = y[cal_rows]
    if len(classes) == 2:
        a, b = fit_platt(cal[:, 0], y_cal == classes[1])
        platt_a, platt_b = np.array([a]), np.array([b])
    else:
        ab = [fit_platt(cal[:, j], y_cal == c) for j, c in enumerate(classes)]
        platt_a = np.array([p[0] for p in ab])
        platt_b = np.array([p[1] for p in ab])
    params = SvmParameters(coef=np.asarray(final.coef_, dtype=np.float32),
                           intercept=np.asarray(final.intercept_, dtype=np.float64),
                           platt_a=platt_a, platt_b=platt_b, columns=classes.astype(np.int64))
    info = {"C": cfg.deep.classic.svm.C, "max_iter": cfg.deep.classic.svm.max_iter, "calibration_folds": folds,
            "calibration_tokens": int(scored.sum()), "n_iter": int(np.max(final.n_iter_)),
            "classes_seen": [int(c) for c in classes], "library": f"scikit-learn {version('scikit-learn')}"}
    return params, info


# -- the whole job --------------------------------------------------------------------------------


def _write_text(path: Path, text: str) -> None:
    with atomic_text_writer(path) as fh:
        fh.write(text)


def train_classic(cfg: DeidConfig, family: str, train_docs: Sequence[tuple[str, Document]],
                  dev_docs: Sequence[Document], out: Path, artifact: DictionaryArtifact, *,
                  fold_sources: frozenset[str] = frozenset(), fold_key: str = DEFAULT_FOLD_KEY,
                  say: Callable[[str], None] = print) -> ClassicManifest:
    """Fit a CRF or SVM on `train_docs`, write its model directory, and return its manifest (no thresholds yet)."""
    import json

    if family not in CLASSIC_FAMILIES:
        raise ValueError(f"unknown classical family {family!r} (known: {', '.join(CLASSIC_FAMILIES)})")
    ccfg = cfg.deep.classic
    classes = list(cfg.deep.classes)
    rules = RuleDeidentifier(artifact, cfg.rules)
    t_start = time.perf_counter()
    folds = ccfg.svm.calibration_folds if family == "svm" else 0
    examples = examples_from(train_docs, rules, cfg, fold_sources=fold_sources, folds=folds, fold_key=fold_key)
    n_tokens = sum(len(ex.labels) for ex in examples)
    lexicon = build_lexicon(examples, cfg)
    features = WindowFeatures(lexicon, load_salutations(cfg), radius=ccfg.window_radius,
                              affix_lengths=ccfg.affix_lengths)
    say(f"{len(examples)} texts, {n_tokens} tokens labelled; lexicon {len(lexicon.words)} words, "
        f"{len(lexicon.affixes)} affixes ({time.perf_counter() - t_start:.0f}s)")
    out.mkdir(parents=True, exist_ok=True)
    _write_text(out / LEXICON_FILE, lexicon.to_json())
    t_fit = time.perf_counter()
    if family == "crf":
        import pycrfsuite  # noqa: F401 - fail before the long part when it is missing

        tmp = out / f".{CRF_FILE}.tmp"
        info = fit_crf(examples, features, classes, cfg, tmp)
        os.replace(tmp, out / CRF_FILE)
        model_files = [LEXICON_FILE, CRF_FILE]
        library = info.pop("library", "")
    else:
        x, y, fold, names = encode_rows(examples, features)
        say(f"window features: {x.shape[1]} distinct, {x.nnz / max(1, x.shape[0]):.1f} per token "
            f"({time.perf_counter() - t_fit:.0f}s)")
        params, info = fit_svm(x, y, fold, cfg, say)
        del x
        _write_text(out / FEATURE_INDEX_FILE, json.dumps(names, ensure_ascii=False))
        tmp = out / f".{WEIGHTS_FILE}.tmp"
        params.save(tmp)
        os.replace(tmp, out / WEIGHTS_FILE)
        model_files = [LEXICON_FILE, FEATURE_INDEX_FILE, WEIGHTS_FILE]
        library = info.pop("library", "")
    fit_seconds = time.perf_counter() - t_fit
    files = {name: file_sha256(out / name) for name in model_files}
    manifest = ClassicManifest(
        family=family,  # type: ignore[arg-type]
        model_version=content_version(family, *(files[n] for n in model_files)),
        created=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        classes=classes,
        feature_names=features.names,
        dictionary_version=artifact.version,
        dictionary_sha256=artifact.content_hash,
        window_radius=ccfg.window_radius,
        affix_lengths=list(ccfg.affix_lengths),
        lexicon_sha256=lexicon.sha256,
        files=files,
        library_version=library,
        training={**info, "fit_seconds": round(fit_seconds, 1),
                  "seconds": round(time.perf_counter() - t_start, 1), "texts": len(examples),
                  "tokens": n_tokens, "lexicon_words": len(lexicon.words), "lexicon_affixes": len(lexicon.affixes),
                  "window_radius": ccfg.window_radius},
    )
    manifest.write(out)
    say(f"{family} fitted in {fit_seconds:.0f}s")
    if dev_docs:
        metrics = dev_metrics(out, cfg, rules, dev_docs)
        manifest = manifest.model_copy(update={"metrics": {**manifest.metrics, **metrics}})
        manifest.write(out)
        say(f"dev, the model alone: token recall {metrics['dev_model_token_recall']:.4f}, "
            f"precision {metrics['dev_model_token_precision']:.4f}, "
            f"{metrics['dev_tokens_per_second']:.0f} tokens/s (model only)")
    return manifest


def dev_metrics(model_dir: Path, cfg: DeidConfig, rules: RuleDeidentifier, dev_docs: Sequence[Document]) -> dict[str, float]:
    """The saved model alone on dev: token-level PHI recall and precision of its best class, and its speed."""
    model = load_model(model_dir, cfg)
    tcfg = cfg.deep.training
    pairs = [labelled_analysis(d, rules, cfg.deep.classes, dict(tcfg.label_map), tcfg.age_phi_min) for d in dev_docs]
    t0 = time.perf_counter()
    probs = model.predict([a for a, _ in pairs])
    seconds = time.perf_counter() - t0
    gold = np.concatenate([y for _, y in pairs]) > 0
    masked = np.concatenate([p.argmax(axis=1) for p in probs]) > 0
    tp = int((gold & masked).sum())
    return {"dev_model_token_recall": round(tp / max(1, int(gold.sum())), 6),
            "dev_model_token_precision": round(tp / max(1, int(masked.sum())), 6),
            "dev_tokens_per_second": round(len(gold) / max(seconds, 1e-9), 1)}
