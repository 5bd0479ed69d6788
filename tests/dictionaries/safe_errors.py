"""The check both licensed-dictionary readers' tests share: an error never quotes the licensed text."""

from __future__ import annotations

import pytest

from deid_core.dictionaries.licensed_common import LicensedFormatError


def assert_safe_error(
    err: pytest.ExceptionInfo[LicensedFormatError], basename: str, lineno: int, *secrets: str
) -> None:
    """Error names the basename and line, and none of the line's text."""
    message = str(err.value)
    assert basename in message
    assert f"line {lineno}" in message
    for secret in secrets:
        assert secret not in message
