"""The deep de-identifier: a character + token BiLSTM over rule-annotated tokens.

Flow: `encoding` turns a `RuleAnalysis` into id and feature arrays (with
`vocabulary` and `features`), `model` builds the Keras 3 network, `predictor`
runs it in length-sorted batches and stitches windows back into documents,
and `manifest` records what a saved model was trained on. Training lives in
`deid_core.deep.training` and `jobs/train_model.py`.
"""
