"""The hybrid combiner at run time: rules and network probabilities to one decision per token.

`combiner` applies the adaptive (low, high) thresholds to the network's
P(safe) of each token the rules masked; `categories` names the category of
what stays masked. Threshold search and scoring are offline and live in
`deid_core.training`.
"""
