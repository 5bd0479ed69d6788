"""The secret key behind date offsets and pseudonyms, and keyed derivations.

Why keyed: a date offset or pseudonym computed from public data alone could
be recomputed by anyone holding the original, which re-identifies the case.
With HMAC-SHA256 under a secret key the same (key, case, original) always
gives the same surrogate (so reports of one case stay consistent), while a
different key or a different case gives an unrelated one (unlinkable).

The key is read from the environment (`DEID_SECRET_KEY`) or from a file the
operator points at; it is never read from the repository, and it never
appears in logs or error messages.

A key file's bytes are the key, all of them: a random binary key may begin
or end with bytes that look like white space, and cutting them would
silently change every surrogate. The one exception is a single trailing
line break ("\n" or "\r\n"), which editors and `echo key > file` add to a
text key. The environment variable holds text, so surrounding white space
is stripped there.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from pathlib import Path

ENV_VAR = "DEID_SECRET_KEY"
#: Shorter secrets are refused: 16 bytes is the least HMAC-SHA256 should get.
MIN_KEY_BYTES = 16


class MissingKeyError(RuntimeError):
    """No usable secret key; raised before any output is written."""


@dataclass(frozen=True)
class SecretKey:
    """A secret for keyed derivations; `repr` never shows it."""

    material: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.material) < MIN_KEY_BYTES:
            raise MissingKeyError(
                f"the secret key is too short: at least {MIN_KEY_BYTES} bytes are required"
            )

    @property
    def fingerprint(self) -> str:
        """A short, non-reversible tag of the key, safe to record with outputs."""
        return hashlib.sha256(b"pv-deid key fingerprint\x00" + self.material).hexdigest()[:12]

    def digest(self, purpose: str, *parts: str) -> bytes:
        """HMAC-SHA256 over a purpose label and parts, unambiguously joined.

        The purpose ("date-offset", "pseudonym:NAME", ...) separates uses of
        one key so that a value derived for one can never equal another's.
        """
        msg = b"\x1f".join(p.encode("utf-8") for p in (purpose, *parts))
        return hmac.new(self.material, msg, hashlib.sha256).digest()

    def integer(self, purpose: str, *parts: str) -> int:
        """A 256-bit non-negative integer derived from the parts."""
        return int.from_bytes(self.digest(purpose, *parts), "big")

    def choice_index(self, n: int, purpose: str, *parts: str) -> int:
        """An index in [0, n), uniform up to a 2^-200 bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        return self.integer(purpose, *parts) % n


def key_file_material(data: bytes) -> bytes:
    """The key in a key file's bytes: all of them, less one trailing line break."""
    for ending in (b"\r\n", b"\n"):
        if data.endswith(ending):
            return data[: -len(ending)]
    return data


def load_key(key_file: Path | None = None, *, environ: dict[str, str] | None = None) -> SecretKey:
    """The key from `key_file` if given (its bytes, less one trailing line break), else from $DEID_SECRET_KEY."""
    env = os.environ if environ is None else environ
    if key_file is not None:
        try:
            raw = key_file_material(Path(key_file).read_bytes())
        except OSError as exc:
            raise MissingKeyError(f"cannot read the key file ({type(exc).__name__})") from None
        if not raw:
            raise MissingKeyError("the key file is empty")
        return SecretKey(raw)
    value = env.get(ENV_VAR, "").strip()
    if not value:
        raise MissingKeyError(
            f"this policy shifts dates or draws pseudonyms and needs a secret key: "
            f"set {ENV_VAR} or pass --key-file"
        )
    return SecretKey(value.encode("utf-8"))
