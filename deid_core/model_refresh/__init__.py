"""Model lifecycle: the registry of trained models, promotion and rollback.

`config` validates the refresh configuration, `registry` stores versioned
model directories and the pointer to the one in production, `promotion`
decides whether a candidate may replace it. Used by `jobs/model_refresh.py`
and, to resolve the production model, by `jobs/deidentify.py`; nothing that
runs per report imports it.
"""
