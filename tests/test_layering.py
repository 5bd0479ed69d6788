"""Imports point downwards only: the layering the README promises, checked on the source.

What runs per report (tokenizer, rules, network inference, combiner,
replacement, the executor UDFs of the de-identification job) must never
import training, threshold search, the model lifecycle, evaluation or
benchmarks; the network (`deep`) and the combiner (`hybrid`) must not
import each other; the Spark-free core never imports Spark or the entry
points. Every import statement counts, including those inside functions,
because a lazy import is still a dependency the executors must carry.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("deid_core", "udfs", "jobs", "bench", "airflow_dags")

#: Modules (or packages, by prefix) that run per report.
RUNTIME = (
    "deid_core.config",
    "deid_core.results",
    "deid_core.categories",
    "deid_core.thresholds",
    "deid_core.text",
    "deid_core.rules",
    "deid_core.deep",
    "deid_core.classic",
    "deid_core.model_files",
    "deid_core.models",
    "deid_core.ensemble",
    "deid_core.hybrid",
    "deid_core.replace",
    "deid_core.detectors",
    "deid_core.pipeline",
    "deid_core.corpus.document",
    "deid_core.dictionaries.artifact",
    "deid_core.lakehouse",
    "deid_core.e2b.parse",
    "deid_core.e2b.r2",
    "deid_core.e2b.r3",
    "udfs.deidentify_fields",
    "udfs.parse_e2b",
    "udfs.runtime",
)
#: What runtime code may never import.
OFFLINE = (
    "deid_core.training",
    "deid_core.model_refresh",
    "deid_core.evaluation",
    "deid_core.cli",
    "deid_core.synthetic",
    "deid_core.qa",
    "jobs",
    "bench",
    "airflow_dags",
)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def module_imports(source: str) -> set[str]:
    """Every absolute module named by an import statement anywhere in `source`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            graph[name] = {m for m in module_imports(path.read_text(encoding="utf-8")) if m.split(".")[0] in PACKAGES + ("pyspark",)}
    return graph


GRAPH = import_graph()


def _violations(sources: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{mod} -> {imp}"
        for mod, imps in GRAPH.items()
        if any(_within(mod, s) for s in sources)
        for imp in imps
        if any(_within(imp, t) for t in targets)
    )


def test_the_checker_sees_lazy_and_from_imports() -> None:
    src = "import os\nfrom deid_core.deep import manifest\ndef f():\n    from jobs.tables import Tables\n"
    assert {"deid_core.deep", "deid_core.deep.manifest", "jobs.tables"} <= module_imports(src)


@pytest.mark.parametrize("prefix", RUNTIME)
def test_every_runtime_prefix_names_real_modules(prefix: str) -> None:
    assert any(_within(mod, prefix) for mod in GRAPH), f"{prefix} matches no module: update RUNTIME"


def test_runtime_never_imports_offline_code() -> None:
    assert _violations(RUNTIME, OFFLINE) == []


def test_network_and_combiner_do_not_import_each_other() -> None:
    assert _violations(("deid_core.deep",), ("deid_core.hybrid",)) == []
    assert _violations(("deid_core.hybrid",), ("deid_core.deep",)) == []


#: the network's modules that import Keras (directly or through each other)
KERAS_MODULES = ("deid_core.deep.model", "deid_core.deep.layers", "deid_core.deep.crf", "deid_core.deep.predictor",
                 "deid_core.deep.backend")


def test_classical_models_stand_beside_the_network_and_the_combiner() -> None:
    """A CRF or SVM loads without Keras: `classic` reads only the network's feature helpers, never its model
    code, and neither the network nor the combiner imports `classic`; the shared model core imports neither."""
    assert _violations(("deid_core.classic",), KERAS_MODULES + ("deid_core.hybrid", "deid_core.detectors")) == []
    assert _violations(("deid_core.deep", "deid_core.hybrid"), ("deid_core.classic", "deid_core.models",
                                                               "deid_core.ensemble")) == []
    assert _violations(("deid_core.model_files",), ("deid_core.deep", "deid_core.classic", "deid_core.models")) == []


def test_core_is_spark_free_and_never_imports_entry_points() -> None:
    assert _violations(("deid_core",), ("pyspark", "jobs", "udfs", "bench", "airflow_dags")) == []


def test_evaluation_never_imports_training_lifecycle_or_entry_points() -> None:
    """The one evaluation loop (deid_core.evaluation.corpus) is called by the CLI, jobs and benchmarks, never the reverse."""
    targets = ("deid_core.training", "deid_core.model_refresh", "deid_core.cli", "jobs", "bench", "airflow_dags")
    assert _violations(("deid_core.evaluation",), targets) == []


def test_executor_code_never_imports_entry_points() -> None:
    assert _violations(("udfs",), ("jobs", "bench", "airflow_dags")) == []


def _resolves(name: str) -> bool:
    """`name` is a project module or package, or a name defined in one (`from m import name`)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return cut >= len(parts) - 1
    return False


def test_every_project_import_names_an_existing_module() -> None:
    # bench scripts and lazy imports are not exercised by every test run: a
    # module moved without updating them would only fail in production
    stale = sorted(f"{mod} -> {imp}" for mod, imps in GRAPH.items() for imp in imps
                   if imp.split(".")[0] in PACKAGES and not _resolves(imp))
    assert stale == []


def test_table_layouts_are_a_bottom_module() -> None:
    """`deid_core.lakehouse` is imported by `udfs` and `jobs` alike: it imports nothing of the project, nor Spark."""
    assert GRAPH["deid_core.lakehouse"] == set()
