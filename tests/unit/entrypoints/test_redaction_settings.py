"""Unit tests: the `redaction.notes` setting."""

from __future__ import annotations

import pytest

from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.runtime import resolve_settings


def _settings(redaction: dict[str, object]) -> dict[str, object]:
    return {"agents": {"defaults": {"memorySearch": {"redaction": redaction}}}}


class TestRedactNotes:
    def test_notes_are_not_redacted_by_default(self) -> None:
        assert resolve_settings(_settings({})).redaction.notes is False

    def test_notes_true_is_kept(self) -> None:
        assert resolve_settings(_settings({"notes": True})).redaction.notes is True

    def test_a_non_boolean_is_an_error_naming_the_key(self) -> None:
        with pytest.raises(ConfigError) as caught:
            resolve_settings(_settings({"notes": "yes"}))
        assert caught.value.key == "agents.defaults.memorySearch.redaction.notes"
