from __future__ import annotations

from pathlib import Path

import pytest

from deid_core.replace.keys import ENV_VAR, MissingKeyError, SecretKey, load_key


def test_key_from_env_and_file(tmp_path: Path) -> None:
    k = load_key(environ={ENV_VAR: "  0123456789abcdef0123  "})
    assert k.material == b"0123456789abcdef0123"
    f = tmp_path / "key"
    f.write_bytes(b"0123456789abcdef0123\n")
    assert load_key(f, environ={}).material == k.material


@pytest.mark.parametrize("env", [{}, {ENV_VAR: ""}, {ENV_VAR: "short"}])
def test_missing_or_weak_key_is_refused(env: dict[str, str]) -> None:
    with pytest.raises(MissingKeyError):
        load_key(environ=env)


def test_unreadable_key_file_message_has_no_path_content(tmp_path: Path) -> None:
    with pytest.raises(MissingKeyError):
        load_key(tmp_path / "absent", environ={})


def test_key_never_in_repr_and_derivations_are_separated() -> None:
    k = SecretKey(b"super-secret-material-123")
    assert "super-secret" not in repr(k)
    assert k.digest("a", "x") != k.digest("b", "x")
    assert k.digest("a", "x", "y") != k.digest("a", "xy")  # parts are joined unambiguously
    assert k.fingerprint == SecretKey(b"super-secret-material-123").fingerprint
    assert k.fingerprint != SecretKey(b"other-secret-material-123").fingerprint


@pytest.mark.parametrize("material", [
    b" \t\x0bkey-with-leading-white-space-bytes",
    b"key-with-trailing-white-space-bytes \t\x0c\r",
    bytes([0x20, 0x0A, 0x0D]) + bytes(range(0x21, 0x41)) + bytes([0x09, 0x20]),
])
def test_key_file_bytes_are_the_key(tmp_path: Path, material: bytes) -> None:
    """A binary key may begin or end with white-space bytes: none is cut."""
    f = tmp_path / "key.bin"
    f.write_bytes(material)
    assert load_key(f, environ={}).material == material


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_one_trailing_line_break_of_a_text_key_is_not_part_of_it(tmp_path: Path, ending: bytes) -> None:
    f = tmp_path / "key.txt"
    f.write_bytes(b" 0123456789abcdef0123 " + ending)
    assert load_key(f, environ={}).material == b" 0123456789abcdef0123 "
    f.write_bytes(b"0123456789abcdef0123\n\n")
    assert load_key(f, environ={}).material == b"0123456789abcdef0123\n"
