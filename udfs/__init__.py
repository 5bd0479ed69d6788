"""Spark pandas UDFs that wrap `deid_core` for executors.

`parse_e2b` turns E2B file paths into report rows (ingest); `deidentify_fields`
turns field rows into de-identified rows (the de-identification job);
`runtime` builds the pipeline once per Python worker from shipped archives
and broadcasts. They call the same `deid_core` code the CLI uses.
"""
