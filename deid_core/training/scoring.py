"""Per-token evidence for the threshold search, gathered from a gold corpus.

The search (`deid_core.training.tuning`) needs, per token: is it gold PHI, did
the rules mask it, is it never released, and the network's P(safe). A token
counts as gold PHI when it overlaps a gold span, which is how the
evaluation counts a partly covered token (it would leak characters).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from deid_core.config import TrainingConfig
from deid_core.corpus.document import Document
from deid_core.detectors import NetworkDetector
from deid_core.hybrid.combiner import NeverRelease, group_min
from deid_core.training.reason_search import ReasonPoint, ReasonSearch, reason_family, search
from deid_core.training.tuning import OperatingPoint, Sweep, TokenScores, plot_precision_recall, sweep

_BATCH = 64


def gold_mask(starts: np.ndarray, ends: np.ndarray, spans: Iterable[tuple[int, int]]) -> np.ndarray:
    out = np.zeros(starts.shape[0], dtype=bool)
    for s, e in spans:
        out |= (starts < e) & (ends > s)
    return out


def collect_scores(detector: NetworkDetector, docs: Sequence[Document], never: NeverRelease) -> TokenScores:
    parts: list[TokenScores] = []
    for i in range(0, len(docs), _BATCH):
        batch = docs[i : i + _BATCH]
        for doc, (analysis, probs) in zip(batch, detector.analyse([d.text for d in batch]), strict=True):
            toks = analysis.tokens
            starts = np.fromiter((t.start for t in toks), dtype=np.int64, count=len(toks))
            ends = np.fromiter((t.end for t in toks), dtype=np.int64, count=len(toks))
            parts.append(
                TokenScores(
                    gold_phi=gold_mask(starts, ends, ((s.start, s.end) for s in doc.spans)),
                    rules_unsafe=np.asarray(analysis.unsafe, dtype=bool),
                    never_release=never.mask(analysis),
                    p_safe=group_min(probs[:, 0], analysis.groups) if len(toks) else np.zeros(0),
                    families=np.array(
                        [reason_family(r, bool(u)) for r, u in zip(analysis.reasons, analysis.unsafe, strict=True)],
                        dtype=object,
                    ),
                )
            )
    return TokenScores.concatenate(parts)


def tune(
    scores: TokenScores, target_recall: float, plot_path: Path | None = None, *, title: str | None = None
) -> tuple[OperatingPoint | None, Sweep]:
    """Best-precision pair at the target recall, and the PR plot if asked."""
    result = sweep(scores)
    best = result.best_at_recall(target_recall)
    if plot_path is not None:
        kwargs = {"title": title} if title else {}
        plot_precision_recall(result, best, plot_path, target_recall=target_recall, **kwargs)
    return best, result


def tuning_documents(tcfg: TrainingConfig, dev_docs: Sequence[Document], dev_name: str) -> tuple[list[Document], str]:
    """The threshold-search set: the dev corpus plus the configured stand-off sets, and its name.

    One place, so `make train`, `bench/accuracy.py --frontier` and anyone
    else tune on the same documents.
    """
    docs, name = list(dev_docs), dev_name
    if tcfg.tuning_standoff and tcfg.shared_data is not None:
        from deid_core.corpus.standoff import read_standoff

        for path in tcfg.tuning_standoff:
            docs.extend(read_standoff(path, tcfg.shared_data))
            name += f"+{path.parent.name}/{path.name}"
    return docs, name


def tune_by_reason(
    scores: TokenScores, target_recall: float, *, min_recall: float = 0.9, fixed: dict[str, float] | None = None,
    ceilings: dict[str, float] | None = None, prior_strength: float = 0.0,
) -> tuple[ReasonPoint | None, ReasonSearch]:
    """Best precision at the target recall with one threshold per reason family, and the whole search.

    `fixed`: families whose threshold is policy; `ceilings`: families searched no higher than a value."""
    if scores.families is None:
        raise ValueError("these scores carry no rule reasons")
    result = search(scores.gold_phi, scores.families, scores.never_release, scores.p_safe, scores.weight,
                    min_recall=min(min_recall, target_recall), fixed=fixed, ceilings=ceilings,
                    prior_strength=prior_strength)
    return result.best_at_recall(target_recall), result


def record_reason_thresholds(model_dir: Path, best: ReasonPoint, target_recall: float, tuned_on: str) -> None:
    """Store a per-reason choice: `low`/`high` become the safe family's and the highest masked one's."""
    from deid_core.models import read_manifest
    from deid_core.thresholds import MASKED_REASONS, Thresholds

    by_reason = {k: round(v, 9) for k, v in sorted(best.thresholds.items())}
    masked = [v for k, v in by_reason.items() if k in MASKED_REASONS]
    manifest = read_manifest(model_dir)
    thresholds = Thresholds(
        low=by_reason.get("safe", 0.0), high=max(masked, default=1.0), by_reason=by_reason,
        target_recall=target_recall, tuned_on=tuned_on, recall=round(best.recall, 6), precision=round(best.precision, 6),
    )
    metrics = {**manifest.metrics, f"{tuned_on}_hybrid_token_recall": thresholds.recall,
               f"{tuned_on}_hybrid_token_precision": thresholds.precision}
    manifest.model_copy(update={"thresholds": thresholds, "metrics": metrics}).write(model_dir)


def record_thresholds(model_dir: Path, best: OperatingPoint, target_recall: float, tuned_on: str) -> None:
    """Store the chosen pair (and its dev recall/precision) in the model manifest."""
    from deid_core.models import read_manifest
    from deid_core.thresholds import Thresholds

    manifest = read_manifest(model_dir)
    thresholds = Thresholds(
        low=best.low, high=best.high, target_recall=target_recall, tuned_on=tuned_on,
        recall=round(best.recall, 6), precision=round(best.precision, 6),
    )
    metrics = {**manifest.metrics, f"{tuned_on}_hybrid_token_recall": thresholds.recall,
               f"{tuned_on}_hybrid_token_precision": thresholds.precision}
    manifest.model_copy(update={"thresholds": thresholds, "metrics": metrics}).write(model_dir)
