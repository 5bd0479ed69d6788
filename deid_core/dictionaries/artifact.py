"""The compiled dictionary artifact: one versioned file, loaded once per process.

Layout (gzip-compressed JSON, keys sorted so the bytes are reproducible):

    {"format": "pv-deid-dictionaries/1",
     "metadata": {"version", "content_hash", "flags", "sources", "counts"},
     "words": {"lowercased word": flag bits, ...},
     "phrases": [[["new", "york"], flag bits], ...]}

A flat word -> int map is small (a few MB compressed) and loads in well under
a second, which is what a Spark broadcast to every executor needs. JSON rather
than pickle so that loading an artifact can never execute code.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deid_core.dictionaries.flags import Lex

FORMAT = "pv-deid-dictionaries/1"


class ArtifactError(RuntimeError):
    """The artifact is missing, corrupt or of another format; never silently ignored."""


def fold_accents(word: str) -> str:
    """Strip combining marks so "Müller" also matches a list entry "Muller"."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def content_hash(words: Mapping[str, int], phrases: Sequence[tuple[Sequence[str], int]]) -> str:
    """SHA-256 over the canonical content (flag names included), independent of metadata."""
    h = hashlib.sha256()
    h.update(json.dumps([f.name for f in Lex], separators=(",", ":")).encode())
    for word in sorted(words):
        h.update(word.encode("utf-8"))
        h.update(b"\t")
        h.update(str(words[word]).encode())
        h.update(b"\n")
    for tokens, flags in sorted((tuple(t), f) for t, f in phrases):
        h.update(" ".join(tokens).encode("utf-8"))
        h.update(b"\t")
        h.update(str(flags).encode())
        h.update(b"\n")
    return h.hexdigest()


@dataclass
class PhraseIndex:
    """Multi-word entries (cities, states, holidays) matched in order on token sequences."""

    by_first: dict[str, list[tuple[tuple[str, ...], int]]] = field(default_factory=dict)

    @classmethod
    def build(cls, phrases: Iterable[tuple[Sequence[str], int]]) -> PhraseIndex:
        idx: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        for tokens, flags in phrases:
            t = tuple(tokens)
            idx.setdefault(t[0], []).append((t, flags))
        for entries in idx.values():
            entries.sort(key=lambda e: -len(e[0]))  # longest match first
        return cls(idx)

    def match(self, lowered: Sequence[str]) -> list[tuple[int, int, int]]:
        """(first token index, end index exclusive, flags) of every phrase occurrence."""
        out: list[tuple[int, int, int]] = []
        n = len(lowered)
        for i, tok in enumerate(lowered):
            entries = self.by_first.get(tok)
            if not entries:
                continue
            for tokens, flags in entries:
                k = len(tokens)
                if i + k <= n and tuple(lowered[i:i + k]) == tokens:
                    out.append((i, i + k, flags))
        return out


@dataclass
class DictionaryArtifact:
    """Loaded dictionaries: word flags, phrase index and provenance metadata."""

    words: dict[str, int]
    phrases: PhraseIndex
    metadata: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.metadata["version"])

    @property
    def content_hash(self) -> str:
        return str(self.metadata["content_hash"])

    def flags(self, lowered: str) -> int:
        """Flag bits of a lower-cased token (accent-folded form as fallback)."""
        f = self.words.get(lowered)
        if f is not None:
            return f
        if not lowered.isascii():
            return self.words.get(fold_accents(lowered), 0)
        return 0

    # ---- persistence -------------------------------------------------------

    @staticmethod
    def to_payload(
        words: Mapping[str, int],
        phrases: Sequence[tuple[Sequence[str], int]],
        metadata: Mapping[str, Any],
    ) -> dict[str, Any]:
        digest = content_hash(words, phrases)
        meta = dict(metadata)
        meta["content_hash"] = digest
        meta["version"] = f"dict-{digest[:12]}"
        meta["flags"] = {f.name: int(f) for f in Lex}
        return {
            "format": FORMAT,
            "metadata": meta,
            "words": {w: int(words[w]) for w in sorted(words)},
            "phrases": sorted([[list(t), int(f)] for t, f in phrases]),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> DictionaryArtifact:
        if payload.get("format") != FORMAT:
            raise ArtifactError(f"unsupported dictionary artifact format {payload.get('format')!r}")
        meta = dict(payload["metadata"])
        expected = {f.name: int(f) for f in Lex}
        if meta.get("flags") != expected:
            raise ArtifactError("dictionary artifact was built with different flag definitions; rebuild it")
        words = {str(k): int(v) for k, v in payload["words"].items()}
        phrases = [(tuple(t), int(f)) for t, f in payload["phrases"]]
        return cls(words=words, phrases=PhraseIndex.build(phrases), metadata=meta)

    @classmethod
    def from_bytes(cls, data: bytes) -> DictionaryArtifact:
        """An artifact from the bytes of its file (as Spark broadcasts it to executors)."""
        try:
            payload = json.loads(gzip.decompress(data).decode("utf-8"))
        except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ArtifactError(f"dictionary artifact bytes are unreadable: {type(exc).__name__}") from exc
        return cls.from_payload(payload)

    @classmethod
    def load(cls, path: Path, verify: bool = False) -> DictionaryArtifact:
        """Load an artifact; `verify` recomputes the content hash (slower, for CI)."""
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                payload = json.load(fh)
        except FileNotFoundError as exc:
            raise ArtifactError(
                f"dictionary artifact not found at {path}; build it with `make dictionaries`"
            ) from exc
        except (OSError, EOFError, json.JSONDecodeError) as exc:
            raise ArtifactError(f"dictionary artifact {path} is unreadable: {exc}") from exc
        art = cls.from_payload(payload)
        if verify:
            actual = content_hash(art.words, [(t, f) for e in art.phrases.by_first.values() for t, f in e])
            if actual != art.content_hash:
                raise ArtifactError(f"dictionary artifact {path} fails its content hash check")
        return art

    @staticmethod
    def save(payload: Mapping[str, Any], path: Path) -> None:
        """Write atomically and reproducibly (fixed gzip mtime, sorted keys)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json.gz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as raw:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=6) as gz:
                    gz.write(json.dumps(payload, ensure_ascii=False, sort_keys=True,
                                        separators=(",", ":")).encode("utf-8"))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
