"""Window features of the classical models (CRF and SVM): one definition for training and inference.

Why: the method papers' feature models describe a token by itself and its
neighbours (Sahlström: the token and three tokens either side; the Swedish
CRF: a window of five): the word in lower case, its shape, capitalisation,
numeric type and length, prefixes and suffixes, gazetteer hits and regular
expression hits. Here the gazetteers are the project's dictionary flags, the
regular expressions are the rules' pattern and context detectors, and the
rules' 15 features and their verdict join in exactly as the network reads
them (`deid_core.deep.features.extra_features`), so the three model families
see the same evidence.

A token's features are strings ("w=aspirin", "sh=Xxxxx", "-1|why=pattern:DATE");
CRFsuite reads them as they are, the SVM maps them to columns with its index.

Words and affixes appear only when the model's `Lexicon` has them: seen at
least `deep.vocabulary.min_count` times in training and not mostly inside
gold PHI (the network vocabulary's rule), so that a model file lists no
patient's name; any other word reads "w=<unk>". Digits are folded to 0, so
no number is stored either.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from deid_core.deep.features import extra_features
from deid_core.deep.features import feature_names as network_feature_names
from deid_core.deep.vocabulary import normalise_word
from deid_core.dictionaries.flags import Lex
from deid_core.rules.deidentifier import RuleAnalysis
from deid_core.text.tokenize import token_shape
from deid_core.thresholds import reason_family

#: bump when a template's meaning changes: a model trained on another layout is refused at load
LAYOUT_VERSION = 1
UNKNOWN_WORD = "<unk>"
#: the network's extra inputs: case, after a salutation, the rules' 15 features and their verdict
_RULE_INPUTS: tuple[str, ...] = network_feature_names(extra=True, rules=True)
#: one feature per dictionary list the token is on (gazetteer hits)
_LEX_BITS: tuple[tuple[str, int], ...] = tuple((f"lex={m.name}", int(m)) for m in Lex)
#: what a neighbour contributes: its word, shape, the rules' reason and, where they masked it, their category
NEIGHBOUR_TEMPLATES: tuple[str, ...] = ("w", "sh", "why", "lab")
_ROMAN = regex.compile(r"[IVXLCDM]{2,}")
_YEAR = regex.compile(r"(?:1\d|20|21)\d\d")
_LENGTH_BUCKETS = ((1, "1"), (2, "2"), (3, "3"), (4, "4"), (5, "5"), (7, "6-7"), (10, "8-10"))
_GAP_CODES = {" ": "_", "\n": "n", "\r": "r", "\t": "t"}


@dataclass(frozen=True)
class Lexicon:
    """The words and affixes a model may name (digits folded to 0); everything else is unknown."""

    words: frozenset[str]
    affixes: frozenset[str]

    def to_json(self) -> str:
        return json.dumps({"words": sorted(self.words), "affixes": sorted(self.affixes)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Lexicon:
        data = json.loads(text)
        return cls(frozenset(data["words"]), frozenset(data["affixes"]))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()


def affixes_of(word: str, lengths: Sequence[int]) -> list[tuple[str, str]]:
    """(template, value) of each prefix and suffix of a normalised word longer than the affix."""
    out: list[tuple[str, str]] = []
    for n in lengths:
        if len(word) > n:
            out.append((f"p{n}", word[:n]))
            out.append((f"s{n}", word[-n:]))
    return out


def numeric_type(text: str) -> str:
    """Sahlström's numeric type: a year, all digits, letters and digits, a Roman numeral, or none."""
    if text.isdigit():
        return "year" if _YEAR.fullmatch(text) else "digits"
    if any(ch.isdigit() for ch in text):
        return "alnum"
    if _ROMAN.fullmatch(text):
        return "roman"
    return "none"


def length_bucket(n: int) -> str:
    for top, name in _LENGTH_BUCKETS:
        if n <= top:
            return name
    return "11+"


def gap_code(post_space: str) -> str:
    """The characters between a token and the next one, spaces and line breaks spelt as letters."""
    return "".join(_GAP_CODES.get(ch, ch) for ch in post_space)


class WindowFeatures:
    """Turns a rule analysis into one feature list per token: its own features and its neighbours'."""

    def __init__(self, lexicon: Lexicon, salutations: frozenset[str], *, radius: int,
                 affix_lengths: Sequence[int]) -> None:
        self.lexicon = lexicon
        self.salutations = salutations
        self.radius = radius
        self.affix_lengths = tuple(affix_lengths)

    @property
    def names(self) -> list[str]:
        """The feature templates in use: stored in the manifest and compared at load."""
        own = ["w", "sh", "num", "len"]
        own += [f"{kind}{n}" for n in self.affix_lengths for kind in ("p", "s")]
        own += ["ps", *(name for name, _ in _LEX_BITS), *(f"x={n}" for n in _RULE_INPUTS), "why", "lab"]
        offsets = [o for o in range(-self.radius, self.radius + 1) if o]
        window = [f"{o:+d}|{t}" for o in offsets for t in (*NEIGHBOUR_TEMPLATES, "edge")]
        return [f"layout={LAYOUT_VERSION}", *own, *window]

    def word(self, lower: str) -> str:
        w = normalise_word(lower)
        return w if w in self.lexicon.words else UNKNOWN_WORD

    def own_and_neighbour(self, analysis: RuleAnalysis) -> tuple[list[list[str]], list[list[str]]]:
        """Per token: every feature of its own, and the few a neighbour passes on."""
        tokens = analysis.tokens
        extra = extra_features(analysis, self.salutations, rules=True)
        affixes = self.lexicon.affixes
        own: list[list[str]] = []
        nb: list[list[str]] = []
        for i, tok in enumerate(tokens):
            norm = normalise_word(tok.lower)
            w = "w=" + (norm if norm in self.lexicon.words else UNKNOWN_WORD)
            sh = "sh=" + token_shape(tok.text)
            unsafe = analysis.unsafe[i]
            why = "why=" + reason_family(analysis.reasons[i], unsafe)
            feats = [w, sh, "num=" + numeric_type(tok.text), "len=" + length_bucket(len(tok.text))]
            feats.extend(f"{t}={v}" for t, v in affixes_of(norm, self.affix_lengths) if v in affixes)
            feats.append("ps=" + gap_code(tok.post_space))
            f = analysis.flags[i]
            feats.extend(name for name, bit in _LEX_BITS if f & bit)
            feats.extend(f"x={_RULE_INPUTS[k]}" for k in extra[i].nonzero()[0])
            feats.append(why)
            near = [w, sh, why]
            if unsafe:
                lab = "lab=" + analysis.labels[i]
                feats.append(lab)
                near.append(lab)
            own.append(feats)
            nb.append(near)
        return own, nb

    def sequence(self, analysis: RuleAnalysis) -> list[list[str]]:
        """One feature list per token of `analysis`: the CRF's item sequence, the SVM's rows."""
        own, nb = self.own_and_neighbour(analysis)
        n = len(own)
        out: list[list[str]] = []
        offsets = [o for o in range(-self.radius, self.radius + 1) if o]
        for i in range(n):
            feats = list(own[i])
            for o in offsets:
                j = i + o
                if 0 <= j < n:
                    prefix = f"{o:+d}|"
                    feats.extend(prefix + a for a in nb[j])
                elif j == -1 or j == n:
                    # the text's edge, once per side (the offsets past it add nothing)
                    feats.append(f"{o:+d}|edge")
            out.append(feats)
        return out
