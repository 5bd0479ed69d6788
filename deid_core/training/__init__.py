"""Offline learning: what builds a model and its thresholds, never run per report.

`data` turns annotated documents into token tables and padded windows,
`loop` fits the Keras network, `embeddings` loads pretrained vectors at
build time, `export` writes a model directory with its manifest, `tuning`
searches the combiner's thresholds and `scoring` collects the out-of-sample
probabilities it searches over. The runtime packages (`deep`, `hybrid`,
`rules`, `replace`) never import this package; it imports them.
"""
