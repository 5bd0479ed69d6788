"""Text handling shared by every de-identifier: tokenisation and token shape."""

from deid_core.text.tokenize import Token, tokenize, token_shape

__all__ = ["Token", "tokenize", "token_shape"]
