"""The README's call chain names functions that exist, and its links to docs/ resolve.

The flow section is the map a newcomer follows from an E2B file to a silver
row; a rename that leaves it pointing at nothing would make it a fiction.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
REF = re.compile(r"\b((?:deid_core|jobs|udfs|bench|airflow_dags)/[\w/]+\.py):([A-Za-z_][\w.]*)")


def _defined(path: Path) -> set[str]:
    """Qualified names of the classes, functions and methods a module defines."""
    names: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(prefix + child.name)
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return names


def test_the_flow_section_names_a_real_chain() -> None:
    refs = REF.findall(README)
    assert len(refs) >= 25, "the flow section lost its call chain"
    missing = [f"{f}:{n}" for f, n in refs if not (ROOT / f).is_file() or n not in _defined(ROOT / f)]
    assert missing == []


def test_the_checker_rejects_a_stale_name(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("class A:\n    def run(self):\n        pass\ndef f():\n    pass\n")
    assert _defined(module) == {"A", "A.run", "f"}


def test_links_to_docs_resolve() -> None:
    links = re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]+)?\)", README)
    assert links and all((ROOT / link).is_file() for link in links)
    for page in (ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([\w.-]+\.md)(?:#[\w-]+)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).is_file(), f"{page.name} links to a missing {link}"
