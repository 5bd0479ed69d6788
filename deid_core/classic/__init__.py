"""The classical feature models of the method papers at run time: a linear-chain CRF and a linear SVM.

Why they exist beside the BiLSTM: Sahlström's RegEx/SVM/CRF study on VigiBase
narratives and the Swedish CRF-vs-LSTM comparison evaluate feature models
that a user comparing methods expects side by side with the network, and a
CRF is a fast second stage for the hybrid where a BiLSTM is too slow.

`features` turns a rule analysis into window features (one definition for
training and inference), `crf` and `svm` load a model directory and give
P(class) per token in the configured class order, exactly what the
combiner reads from the network; `manifest` is their model manifest. They
never import Keras, JAX or the training code; `deid_core.models.load_model`
picks the family a model directory holds.
"""
