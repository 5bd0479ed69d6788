"""The deep de-identifier at run time: a character + token BiLSTM over rule-annotated tokens.

Flow: `encoding` turns a `RuleAnalysis` into id and feature arrays (with
`vocabulary` and `features`), `model` builds the Keras 3 network, `predictor`
runs it in length-sorted batches and stitches windows back into documents,
and `manifest` records what a saved model was trained on. Training and
export live in `deid_core.training` (driven by `jobs/train_model.py`), the
model registry in `deid_core.model_refresh`.
"""
