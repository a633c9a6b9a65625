"""Unit tests: a PostgreSQL server that cannot start fails the tests in CI and skips them elsewhere."""

from __future__ import annotations

import pytest

from tests.pg_server import _unavailable


def test_in_ci_an_unavailable_server_fails_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")

    with pytest.raises(pytest.fail.Exception, match="initdb exploded"):
        _unavailable("initdb exploded")


def test_outside_ci_it_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)

    with pytest.raises(pytest.skip.Exception, match="initdb exploded"):
        _unavailable("initdb exploded")
