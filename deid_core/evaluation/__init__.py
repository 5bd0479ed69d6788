"""Evaluation as the method defines it: token masking recall/precision, entity
matching, HIPAA-only recall and retention of clinical content."""
