"""Word and character vocabularies of the deep model.

Token ids use the lower-cased word with every digit replaced by 0: numbers
are told apart by shape and context, not by value, and the vocabulary never
stores an actual date or phone number. Words seen mostly inside gold PHI are
left out (see `VocabularyConfig.exclude_phi`), so a model file cannot list a
training patient's name; such words reach the network through their
characters only.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import regex

PAD_ID = 0
UNK_ID = 1
_SPECIALS = ("<pad>", "<unk>")
_DIGIT = regex.compile(r"\p{Nd}")


def normalise_word(lower: str) -> str:
    """Vocabulary key of a lower-cased token."""
    return _DIGIT.sub("0", lower)


@dataclass
class Vocabulary:
    """Index 0 is padding, 1 is unknown, for words and characters alike."""

    words: list[str]
    chars: list[str]
    _word_index: dict[str, int] = field(init=False, repr=False)
    _char_index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if tuple(self.words[:2]) != _SPECIALS or tuple(self.chars[:2]) != _SPECIALS:
            raise ValueError("vocabularies must start with <pad>, <unk>")
        self._word_index = {w: i for i, w in enumerate(self.words)}
        self._char_index = {c: i for i, c in enumerate(self.chars)}

    @property
    def n_words(self) -> int:
        return len(self.words)

    @property
    def n_chars(self) -> int:
        return len(self.chars)

    def word_id(self, lower: str) -> int:
        return self._word_index.get(normalise_word(lower), UNK_ID)

    def char_id(self, ch: str) -> int:
        return self._char_index.get(ch, UNK_ID)

    @property
    def sha256(self) -> str:
        """Content hash recorded in the model manifest: ids must match the weights."""
        blob = json.dumps({"words": self.words, "chars": self.chars}, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()

    def to_json(self) -> str:
        return json.dumps({"words": self.words, "chars": self.chars}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Vocabulary:
        data = json.loads(text)
        return cls(words=list(data["words"]), chars=list(data["chars"]))

    @classmethod
    def from_counts(
        cls,
        word_counts: Counter[str],
        char_counts: Counter[str],
        *,
        min_count: int,
        max_size: int,
        excluded: Iterable[str] = (),
    ) -> Vocabulary:
        """Most frequent words first; ties by spelling so the build is reproducible."""
        banned = set(excluded)
        ranked = sorted(
            ((w, c) for w, c in word_counts.items() if c >= min_count and w not in banned and w not in _SPECIALS),
            key=lambda wc: (-wc[1], wc[0]),
        )
        words = list(_SPECIALS) + [w for w, _ in ranked[: max(0, max_size - len(_SPECIALS))]]
        chars = list(_SPECIALS) + sorted(c for c in char_counts if c not in _SPECIALS)
        return cls(words=words, chars=chars)

    def extended(self, extra: Iterable[str]) -> Vocabulary:
        """This vocabulary followed by the words of `extra` it lacks (in their order).

        Used for the frequent words of pretrained vectors: they come after
        the words training saw, whose ids (and trained vectors) stay as they are.
        """
        have = set(self.words)
        added: list[str] = []
        for w in extra:
            if w not in have:
                have.add(w)
                added.append(w)
        return Vocabulary(words=[*self.words, *added], chars=list(self.chars))
