"""Train (or fine-tune) the deep de-identifier: corpora -> Spark -> Parquet -> petastorm -> tf.data -> Keras.

    python -m jobs.train_model                       # the default model from the open data
    python -m jobs.train_model --corpus site.jsonl --base-model models/default --out models/site --dev-only
    python -m jobs.train_model --family crf          # a CRF second stage (build/models/crf); --family svm: an SVM

Stages:
1. Spark reads the corpora (JSONL or folders of i2b2 XML) and the synthetic
   narratives, runs the rules on every document in `mapInPandas` and writes
   a token table (words, characters, features, labels) to Parquet.
2. The vocabulary is counted in Spark from the training token table; words
   seen inside gold PHI are left out. Fine-tuning keeps the base model's
   vocabulary, so its weights stay meaningful.
3. Spark cuts the tables into padded windows; petastorm materialises them
   and feeds tf.data; `model.fit` with Adam and early stopping on dev.
4. The model is exported with its manifest, the thresholds are tuned on
   dev plus the out-of-fold scores of `deep.training.tuning_oof` (see
   `deid tune-thresholds`, `jobs.oof_scores`; `--dev-only`: dev alone) and
   dev metrics are recorded.

`--family crf|svm` trains a classical feature model instead, on the same
documents (stage 1's corpora, surrogate copies, synthetic and VAERS
narratives, assembled by `training_documents`): the rules run in this
process, `deid_core.training.classic` fits and exports it, and its
thresholds are tuned on its own P(safe) as in step 4. The configured
out-of-fold scores are the network's, so a classical model pools only
`--oof` scores of its own family (`jobs.oof_scores --family`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Annotated, Optional

import typer

from deid_core.config import DeidConfig, load_config
from deid_core.corpus.document import Document
from deid_core.corpus.i2b2_xml import read_i2b2_dir
from deid_core.corpus.jsonl import read_jsonl
from deid_core.deep.manifest import VOCABULARY_FILE, WEIGHTS_FILE, ModelManifest
from deid_core.model_files import DEFAULT_FAMILY, FAMILIES, DataSource, ManifestBase, file_sha256
from udfs import training_rows

log = logging.getLogger("deid.train")
app = typer.Typer(add_completion=False, help=__doc__)



def say(msg: str) -> None:
    print(f"[train] {msg}", file=sys.stderr, flush=True)


def read_corpus(path: Path) -> list[Document]:
    """JSONL file or a folder of i2b2 XML files."""
    return list(read_i2b2_dir(path)) if path.is_dir() else read_jsonl(path)


def corpus_source(path: Path, docs: list[Document]) -> DataSource:
    if path.is_dir():
        import hashlib

        h = hashlib.sha256()
        for f in sorted(path.glob("*.xml")):
            h.update(f.name.encode())
            h.update(file_sha256(f).encode())
        digest = h.hexdigest()
    else:
        digest = file_sha256(path)
    return DataSource(name=path.name, sha256=digest, documents=len(docs))


def _docs_frame(spark, docs: list[tuple[str, Document]]):  # type: ignore[no-untyped-def]
    import pandas as pd

    rows = [
        {
            "doc_id": d.doc_id,
            "source": src,
            "text": d.text,
            "spans": json.dumps([[s.start, s.end, s.label] for s in d.spans]),
        }
        for src, d in docs
    ]
    n_parts = max(2, min(16, len(rows) // 200))
    return spark.createDataFrame(pd.DataFrame(rows, columns=["doc_id", "source", "text", "spans"])).repartition(n_parts)


def count_vocabulary(tokens_df, vcfg):  # type: ignore[no-untyped-def]
    """Word and character counts in Spark; PHI words collected for exclusion."""
    from pyspark.sql import functions as F

    from deid_core.deep.vocabulary import Vocabulary

    pairs = tokens_df.select(F.explode(F.arrays_zip("words", "labels")).alias("p")).select(
        F.col("p.words").alias("w"), F.col("p.labels").alias("l")
    )
    agg = (
        pairs.groupBy("w")
        .agg(F.count("*").alias("n"), F.sum(F.when(F.col("l") > 0, 1).otherwise(0)).alias("n_phi"))
        .collect()
    )
    from deid_core.training.data import phi_only_words

    word_counts = Counter({r["w"]: int(r["n"]) for r in agg})
    phi_counts = {r["w"]: int(r["n_phi"] or 0) for r in agg}
    phi_words = phi_only_words(word_counts, phi_counts, vcfg.exclude_phi_share) if vcfg.exclude_phi else set()
    chars = (
        tokens_df.select(F.explode("chars").alias("s"))
        .select(F.explode(F.split("s", "")).alias("c"))
        .where(F.length("c") == 1)
        .groupBy("c")
        .count()
        .collect()
    )
    char_counts = Counter({r["c"]: int(r["count"]) for r in chars})
    vocab = Vocabulary.from_counts(
        word_counts, char_counts, min_count=vcfg.min_count, max_size=vcfg.max_size, excluded=phi_words
    )
    return vocab, len(phi_words)


@app.command()
def main(
    config: Annotated[Optional[Path], typer.Option("--config")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="model directory (default: deep.model_dir)")] = None,
    corpus: Annotated[Optional[list[Path]], typer.Option("--corpus", help="training corpus (JSONL or i2b2 XML folder); repeatable")] = None,
    dev: Annotated[Optional[Path], typer.Option("--dev", help="dev corpus for early stopping and thresholds")] = None,
    synthetic_docs: Annotated[Optional[int], typer.Option(help="synthetic narratives added to training")] = None,
    base_model: Annotated[Optional[Path], typer.Option("--base-model", help="fine-tune this model")] = None,
    head: Annotated[Optional[str], typer.Option(help="softmax | crf | window")] = None,
    variant: Annotated[Optional[str], typer.Option(help="a | b | c | d")] = None,
    max_epochs: Annotated[Optional[int], typer.Option()] = None,
    target_recall: Annotated[Optional[float], typer.Option(help="recall target for the threshold search on dev (default: deep.training.threshold_target_recall)")] = None,
    master: Annotated[str, typer.Option(help="Spark master")] = "local[*]",
    oof: Annotated[Optional[Path], typer.Option("--oof", exists=True, file_okay=False, help="pool these out-of-fold scores (jobs.oof_scores) with dev in the threshold search (default: deep.training.tuning_oof)")] = None,
    dev_only: Annotated[bool, typer.Option("--dev-only", help="tune the thresholds on dev alone, without out-of-fold scores (a site fine-tune)")] = False,
    workdir: Annotated[Optional[Path], typer.Option(help="scratch folder (default: deep.training.workdir); give runs in parallel their own")] = None,
    family: Annotated[str, typer.Option("--family", help="bilstm | crf | svm: the network, or a classical feature model (default --out: build/models/<family>)")] = DEFAULT_FAMILY,
) -> None:
    """Train and export a model; prints one line per epoch and a summary."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # petastorm 0.13 on pyarrow 14 warns about deprecated pyarrow APIs on every read
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"petastorm\..*")
    warnings.filterwarnings("ignore", message=r".*shuffle=True.*", category=UserWarning)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    cfg = load_config(config)
    if workdir is not None:
        cfg = cfg.model_copy(update={"deep": cfg.deep.model_copy(update={
            "training": cfg.deep.training.model_copy(update={"workdir": workdir.resolve()})})})
    t_start = time.perf_counter()
    train_model(
        cfg,
        config_file=Path(config).resolve() if config else None,
        out=out or default_out(cfg, family),
        corpora=list(corpus) if corpus else list(cfg.deep.training.corpora),
        dev_path=dev if dev is not None else cfg.deep.training.dev,
        synthetic_docs=cfg.deep.training.synthetic_docs if synthetic_docs is None else synthetic_docs,
        base_model=base_model,
        head=head,
        variant=variant,
        max_epochs=max_epochs,
        target_recall=target_recall,
        master=master,
        oof=_tuning_oof(oof, dev_only, cfg, family),
        family=family,
    )
    say(f"done in {time.perf_counter() - t_start:.0f}s")


def default_out(cfg: DeidConfig, family: str) -> Path:
    """Where a model goes without --out: the configured model for the network, build/models/<family> otherwise.

    A classical model never lands on the configured default by accident.
    """
    if family == DEFAULT_FAMILY:
        return cfg.deep.model_dir
    return cfg.deep.training.workdir.parent / "models" / family


def _tuning_oof(oof: Path | None, dev_only: bool, cfg: DeidConfig, family: str = DEFAULT_FAMILY) -> Path | None:
    """The out-of-fold scores the threshold search pools: `--oof`, else the config's, none with `--dev-only`.

    The configured scores are the network's: a classical model pools only those given with `--oof`.
    """
    if dev_only:
        if oof is not None:
            raise typer.BadParameter("--oof and --dev-only exclude each other")
        return None
    if oof is not None:
        return oof
    return cfg.deep.training.tuning_oof if family == DEFAULT_FAMILY else None


def training_documents(cfg: DeidConfig, corpora: list[Path], synthetic_docs: int) -> tuple[list[tuple[str, Document]], list[DataSource]]:
    """Every training document as (source name, document), and the sources with their hashes for the manifest.

    The corpora, their surrogate copies (source: the corpus's name), the synthetic narratives and the
    injected VAERS reports of `deep.training`: one assembly for every model family and the fold models.
    """
    from deid_core.synthetic import generate_narratives

    tcfg = cfg.deep.training
    sources: list[DataSource] = []
    train_docs: list[tuple[str, Document]] = []
    for path in corpora:
        docs = read_corpus(path)
        sources.append(corpus_source(path, docs))
        train_docs.extend((path.name, d) for d in docs)
        if tcfg.surrogate_copies:
            from deid_core.training.augment import surrogate_copies

            swapped = list(surrogate_copies(docs, tcfg.surrogate_copies, tcfg.surrogate_seed))
            train_docs.extend((path.name, d) for d in swapped)
            sources.append(DataSource(
                name=f"{path.name}(surrogates: copies={tcfg.surrogate_copies},seed={tcfg.surrogate_seed})",
                sha256=_docs_hash(swapped), documents=len(swapped), kind="augmented",
            ))
    if synthetic_docs:
        synth = [n.to_document() for n in generate_narratives(synthetic_docs, tcfg.synthetic_seed)]
        train_docs.extend(("synthetic", d) for d in synth)
        from deid_core.synthetic.narratives import GENERATOR_VERSION

        sources.append(
            DataSource(
                name=f"synthetic(seed={tcfg.synthetic_seed},generator_version={GENERATOR_VERSION})",
                sha256=_docs_hash(synth),
                documents=len(synth),
                kind="synthetic",
            )
        )
    if tcfg.vaers_docs:
        from deid_core.synthetic.inject import INJECT_VERSION, vaers_training_documents

        missing = [p for p in tcfg.vaers_sources if not p.exists()]
        if missing or not tcfg.vaers_sources:
            raise typer.BadParameter(f"VAERS sources not found: {', '.join(map(str, missing)) or 'none given'}")
        held_out = _annotated_ids(tcfg.vaers_exclude)
        vaers = vaers_training_documents(tcfg.vaers_sources, tcfg.vaers_docs, tcfg.vaers_seed, lots="keep",
                                         exclude=held_out)
        train_docs.extend(("vaers", d) for d in vaers)
        sources.append(DataSource(
            name=f"vaers-injected(seed={tcfg.vaers_seed},inject_version={INJECT_VERSION},"
                 f"held_out_reports={len(held_out)})",
            sha256=_docs_hash(vaers), documents=len(vaers), kind="injected",
        ))
    return train_docs, sources


def train_model(
    cfg: DeidConfig,
    *,
    config_file: Path | None,
    out: Path,
    corpora: list[Path],
    dev_path: Path | None,
    synthetic_docs: int,
    base_model: Path | None = None,
    head: str | None = None,
    variant: str | None = None,
    max_epochs: int | None = None,
    target_recall: float | None = None,
    master: str = "local[*]",
    tune_thresholds: bool = True,
    oof: Path | None = None,
    family: str = DEFAULT_FAMILY,
) -> ManifestBase:
    """Train one model of `family` on the corpora (+ configured extra documents), export it, tune its thresholds."""
    from deid_core.config import config_path
    from deid_core.deep.encoding import char_width
    from deid_core.deep.features import arch_feature_names
    from deid_core.deep.vocabulary import Vocabulary
    from deid_core.dictionaries.artifact import DictionaryArtifact
    from jobs.spark_session import delta_session

    tcfg = cfg.deep.training
    if family not in FAMILIES:
        raise typer.BadParameter(f"unknown model family {family!r} (known: {', '.join(FAMILIES)})")
    if family != DEFAULT_FAMILY and (base_model is not None or head or variant):
        raise typer.BadParameter(f"--base-model, --head and --variant are the network's: not with --family {family}")
    base_manifest = ModelManifest.read(base_model) if base_model else None
    if base_manifest is not None:
        arch = base_manifest.architecture
        seq = base_manifest.sequence
        if list(base_manifest.classes) != list(cfg.deep.classes):
            raise typer.BadParameter("the base model has other classes than the config")
    else:
        updates = {k: v for k, v in (("head", head), ("variant", variant)) if v}
        arch = cfg.deep.architecture.model_copy(update=updates)
        arch = type(arch).model_validate(arch.model_dump())
        seq = cfg.deep.sequence
    artifact = DictionaryArtifact.load(cfg.dictionaries.artifact)

    # -- corpora -------------------------------------------------------
    for path in [*corpora, *([dev_path] if dev_path else [])]:
        if not path.exists():
            raise typer.BadParameter(f"corpus not found: {path} (the open training data lives in ../shared/data)")
    train_docs, sources = training_documents(cfg, corpora, synthetic_docs)
    if not train_docs:
        raise typer.BadParameter("no training documents: give --corpus or synthetic documents")
    dev_docs = read_corpus(dev_path) if dev_path else []
    say(f"{len(train_docs)} training documents, {len(dev_docs)} dev documents")
    if family != DEFAULT_FAMILY:
        # no Spark and no scratch folder: the rules run in this process, the fit is CRFsuite's or LIBLINEAR's
        return _train_classic(cfg, family, out, train_docs, sources, dev_docs, dev_path, artifact, corpora,
                              target_recall=target_recall, tune_thresholds=tune_thresholds, oof=oof)

    work = tcfg.workdir
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)

    spark = delta_session("deid-train-model", master=master, extra_conf=dict(tcfg.spark_conf))
    spark.conf.set("petastorm.spark.converter.parentCacheDirUrl", (work / "petastorm").resolve().as_uri())
    try:
        cfg_file = str(config_file or config_path(None))
        annotate = training_rows.annotate(cfg_file, str(cfg.dictionaries.artifact), arch.model_dump_json())
        t0 = time.perf_counter()
        _docs_frame(spark, train_docs).mapInPandas(annotate, training_rows.TOKEN_SCHEMA).write.parquet(str(work / "tokens_train"))
        if dev_docs:
            _docs_frame(spark, [("dev", d) for d in dev_docs]).mapInPandas(annotate, training_rows.TOKEN_SCHEMA).write.parquet(
                str(work / "tokens_dev")
            )
        tokens_train = spark.read.parquet(str(work / "tokens_train"))
        say(f"token tables written ({time.perf_counter() - t0:.0f}s)")

        if base_model is not None:
            vocab = Vocabulary.from_json((base_model / VOCABULARY_FILE).read_text(encoding="utf-8"))
            n_phi_words = 0
        else:
            vocab, n_phi_words = count_vocabulary(tokens_train, cfg.deep.vocabulary)
        say(f"vocabulary: {vocab.n_words} words ({n_phi_words} PHI words left out), {vocab.n_chars} characters")
        pretrained = None
        if tcfg.pretrained_vectors and base_model is None:
            from deid_core.training.embeddings import frequent_words, pretrained_rows, read_vectors, reduce_dim

            names = [tcfg.pretrained_vectors] if isinstance(tcfg.pretrained_vectors, str) else tcfg.pretrained_vectors
            tables = [reduce_dim(read_vectors(n), tcfg.pretrained_reduce.get(n, 10**9)) for n in names]
            trained = vocab.n_words
            # the extra words come from the first source (GloVe: most frequent first)
            vocab = vocab.extended(frequent_words(tables[0], tcfg.pretrained_extra_words))
            pretrained, found = pretrained_rows(tables, vocab.words)
            dim = int(pretrained.shape[1])
            arch = arch.model_copy(update={"pretrained_dim": dim, "trained_words": trained})
            say(f"pretrained vectors ({' + '.join(t.name for t in tables)}, {dim}-d) for {found} of {vocab.n_words} words; "
                f"{vocab.n_words - trained} words from the vectors only")

        windows = training_rows.windows(vocab.to_json(), arch.model_dump_json(), seq.model_dump_json())
        train_windows = tokens_train.mapInPandas(windows, training_rows.WINDOW_SCHEMA)
        train_windows.write.parquet(str(work / "windows_train"))
        train_windows = spark.read.parquet(str(work / "windows_train"))
        n_train = train_windows.count()
        dev_data = None
        width = char_width(arch)
        n_feat = len(arch_feature_names(arch))
        from deid_core.training.loop import arrays_to_inputs, fit, make_batch_transform

        if dev_docs:
            dev_pdf = spark.read.parquet(str(work / "tokens_dev")).mapInPandas(windows, training_rows.WINDOW_SCHEMA).toPandas()
            dev_data = arrays_to_inputs(dev_pdf, seq.window_tokens, width, n_feat, tcfg)
        say(f"{n_train} training windows of {seq.window_tokens} tokens")

        manifest, fit_result = _fit_and_export(
            train_windows, n_train, dev_data, vocab, arch, seq, cfg, out, width, n_feat,
            base_model, max_epochs, pretrained,
            make_batch_transform(seq.window_tokens, width, n_feat, tcfg, train=True), fit, artifact,
        )
    finally:
        spark.stop()

    manifest = manifest.model_copy(
        update={
            "training_data": sources,
            "base_model": base_manifest.model_version if base_manifest else None,
            "training": {
                "epochs": fit_result.epochs,
                "best_epoch": fit_result.best_epoch,
                "fit_seconds": round(fit_result.seconds, 1),
                "train_windows": n_train,
                "history": fit_result.history,
                "batch_size": tcfg.batch_size,
                "learning_rate": tcfg.learning_rate,
                "learning_rate_schedule": tcfg.learning_rate_schedule,
                "phi_class_weight": tcfg.phi_class_weight,
                "word_dropout": tcfg.word_dropout,
                "seed": tcfg.seed,
            },
        }
    )
    manifest.write(out)
    if dev_docs and tune_thresholds:
        from deid_core.training.scoring import tuning_documents

        tuning_docs, tuning_name = tuning_documents(tcfg, dev_docs, dev_path.name if dev_path else "dev")
        target = cfg.deep.training.threshold_target_recall if target_recall is None else target_recall
        manifest = tune_and_record(cfg, out, tuning_docs, tuning_name, target, oof=oof)
    say(f"model {manifest.model_version} -> {out}")
    return manifest


def _train_classic(cfg: DeidConfig, family: str, out: Path, train_docs: list[tuple[str, Document]],
                   sources: list[DataSource], dev_docs: list[Document], dev_path: Path | None, artifact,  # type: ignore[no-untyped-def]
                   corpora: list[Path], *, target_recall: float | None, tune_thresholds: bool,
                   oof: Path | None) -> ManifestBase:
    """A CRF or SVM on the same documents, exported, its thresholds tuned on its own P(safe) like the network's."""
    from deid_core.training.classic import train_classic

    manifest = train_classic(cfg, family, train_docs, dev_docs, out, artifact,
                             fold_sources=frozenset(p.name for p in corpora), say=say)
    manifest = manifest.model_copy(update={"training_data": sources})
    manifest.write(out)
    if dev_docs and tune_thresholds:
        from deid_core.training.scoring import tuning_documents

        tuning_docs, tuning_name = tuning_documents(cfg.deep.training, dev_docs, dev_path.name if dev_path else "dev")
        target = cfg.deep.training.threshold_target_recall if target_recall is None else target_recall
        manifest = tune_and_record(cfg, out, tuning_docs, tuning_name, target, oof=oof)
    say(f"model {manifest.model_version} -> {out}")
    return manifest


def _annotated_ids(paths: list[Path]) -> set[str]:
    """Report ids of stand-off annotation files: evaluation reports that must not train."""
    ids: set[str] = set()
    for path in paths:
        if not path.exists():
            raise typer.BadParameter(f"held-out annotation file not found: {path}")
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                ids.add(str(json.loads(line)["doc_id"]))
    return ids


def _docs_hash(docs: list[Document]) -> str:
    import hashlib

    h = hashlib.sha256()
    for d in docs:
        h.update(d.text.encode("utf-8"))
        h.update(json.dumps([[s.start, s.end, s.label] for s in d.spans]).encode())
    return h.hexdigest()


def _fit_and_export(train_windows, n_train, dev_data, vocab, arch, seq, cfg, out, width, n_feat,  # type: ignore[no-untyped-def]
                    base_model, max_epochs, pretrained, transform, fit, artifact):
    import keras
    from petastorm.spark import make_spark_converter

    from deid_core.deep.model import build_network

    tcfg = cfg.deep.training
    keras.utils.set_random_seed(tcfg.seed)
    network = build_network(
        arch, n_words=vocab.n_words, n_chars=vocab.n_chars, char_width=width, n_features=n_feat,
        n_classes=len(cfg.deep.classes), pretrained=pretrained,
    )
    if base_model is not None:
        network.tagger.load_weights(base_model / WEIGHTS_FILE)
    converter = make_spark_converter(train_windows)
    steps = max(1, -(-n_train // tcfg.batch_size))
    try:
        with converter.make_tf_dataset(
            batch_size=tcfg.batch_size, num_epochs=None, workers_count=1, shuffling_queue_capacity=2048,
            seed=tcfg.seed,
        ) as ds:
            ds = ds.map(transform)
            result = fit(network, ds, steps, dev_data, tcfg, max_epochs=max_epochs, printer=say)
    finally:
        converter.delete()
    from deid_core.training.export import save_model

    manifest = save_model(
        network, vocab, arch, seq, cfg.deep.classes, out,
        dictionary_version=artifact.version, dictionary_sha256=artifact.content_hash,
    )
    if dev_data is not None and network.crf is None:
        import numpy as np

        from deid_core.training.calibration import fit_temperature

        logits = np.asarray(network.tagger.predict(dev_data.x, batch_size=tcfg.batch_size, verbose=0))
        valid = dev_data.x["words"] > 0
        cal = fit_temperature(logits[valid], dev_data.labels[valid])
        say(f"temperature {cal.temperature:.3f} on dev: NLL {cal.nll_before:.4f} -> {cal.nll_after:.4f}, "
            f"ECE {cal.ece_before:.4f} -> {cal.ece_after:.4f}")
        metrics = {**manifest.metrics, "dev_nll_uncalibrated": cal.nll_before, "dev_nll": cal.nll_after,
                   "dev_ece_uncalibrated": cal.ece_before, "dev_ece": cal.ece_after}
        manifest = manifest.model_copy(update={"temperature": cal.temperature, "metrics": metrics})
        manifest.write(out)
    return manifest, result


def tune_and_record(cfg: DeidConfig, model_dir: Path, dev_docs: list[Document], dev_name: str,
                    target_recall: float, *, oof: Path | None = None) -> ManifestBase:
    """Tune per-reason thresholds on dev (and out-of-fold scores if given), write the PR plot, record them."""
    from deid_core.hybrid.combiner import never_release_from
    from deid_core.detectors import Method, build_detector
    from deid_core.models import read_manifest
    from deid_core.training.scoring import collect_scores, record_reason_thresholds, tune, tune_by_reason

    det = build_detector(Method.deep, cfg, model_dir=model_dir)
    never = never_release_from(cfg)
    scores = collect_scores(det.inner, dev_docs, never)  # type: ignore[arg-type]
    if oof is not None:
        from deid_core.training.out_of_fold import read_oof

        try:
            out_of_fold = read_oof(oof)
        except ValueError as exc:
            raise typer.BadParameter(f"{exc} (deep.training.tuning_oof names it; `make oof-scores` makes it)") from None
        try:
            out_of_fold.check_model(model_dir)
        except ValueError as exc:
            raise typer.BadParameter(f"{oof}: {exc}") from None
        scores, dev_name = out_of_fold.pooled_with(scores, dev_name)
    tune(scores, target_recall, model_dir / "precision_recall_dev.png")
    # families the configuration sets (clinical values: always kept) are a policy, not tuned
    best, _ = tune_by_reason(scores, target_recall, prior_strength=cfg.deep.training.threshold_prior_strength,
                             fixed=dict(cfg.deep.combiner.by_reason),
                             ceilings=dict(cfg.deep.combiner.by_reason_ceiling))
    manifest = read_manifest(model_dir)
    if best is None:
        say(f"target recall {target_recall} not reachable on {dev_name}; keeping config thresholds")
        return manifest
    say(f"per-reason thresholds on {dev_name}: recall {best.recall:.4f}, precision {best.precision:.4f}")
    record_reason_thresholds(model_dir, best, target_recall, dev_name)
    return read_manifest(model_dir)


if __name__ == "__main__":
    app()
