"""Evaluation as the method defines it: token masking recall/precision, entity
matching, HIPAA-only recall and retention of clinical content, and the one loop
(`corpus.evaluate_corpus`) that scores a detector on a gold-annotated corpus."""
