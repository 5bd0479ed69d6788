"""Inverse, hybrid de-identification of pharmacovigilance case narratives.

`deid_core` is pure Python on purpose: it never imports Spark, so the same
code runs in the CLI, in unit tests and inside Spark's Python workers.
"""

__version__ = "0.1.0"
