"""Rule-based inverse de-identifier: dictionaries, pattern and context detectors."""
