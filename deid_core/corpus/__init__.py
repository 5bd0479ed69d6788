"""Reading and writing annotated corpora (JSONL and i2b2 2014 XML)."""

from deid_core.corpus.document import Document, GoldSpan

__all__ = ["Document", "GoldSpan"]
