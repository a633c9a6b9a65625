"""The scope fingerprint: what defines the index, never where a host keeps its files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memlane.domain.config import MemorySettings, RedactionSettings
from memlane.entrypoints.container import legacy_scope_hash, scope_hash


class TestScopeHash:
    def test_two_hosts_with_other_paths_agree(self) -> None:
        settings = MemorySettings(extra_paths=("../shared", "docs/runbooks"))

        here = scope_hash(settings, Path("/home/ana/agent/ws"))
        there = scope_hash(settings, Path("/srv/bots/x/ws"))

        assert here == there
        assert legacy_scope_hash(settings, Path("/home/ana/agent/ws"), Path("/s1")) != (
            legacy_scope_hash(settings, Path("/srv/bots/x/ws"), Path("/s2"))
        )

    def test_spellings_of_the_same_roots_agree(self) -> None:
        plain = MemorySettings(extra_paths=("../shared", "docs"))
        spelled = MemorySettings(extra_paths=(" docs/ ", "./../shared/", "docs", ""))

        assert scope_hash(plain, Path("/w")) == scope_hash(spelled, Path("/w"))

    def test_another_extra_root_changes_it(self) -> None:
        ws = Path("/w")

        assert scope_hash(MemorySettings(), ws) != scope_hash(
            MemorySettings(extra_paths=("notes",)), ws
        )
        assert scope_hash(MemorySettings(extra_paths=("notes",)), ws) != scope_hash(
            MemorySettings(extra_paths=("/elsewhere/notes",)), ws
        )

    def test_the_default_redaction_keeps_the_fingerprint_existing_indexes_recorded(self) -> None:
        # sha256 of {"scope": 2, "extraPaths": []}: what every index with default settings holds.
        recorded = hashlib.sha256(json.dumps({"scope": 2, "extraPaths": []}).encode()).hexdigest()

        assert scope_hash(MemorySettings(), Path("/w")) == recorded

    @pytest.mark.parametrize(
        "redaction",
        [
            RedactionSettings(enabled=False),
            RedactionSettings(extra_patterns=("ACME-[0-9]{6}",)),
            RedactionSettings(notes=True),
        ],
    )
    def test_redaction_is_recorded_apart_not_in_the_scope(
        self, redaction: RedactionSettings
    ) -> None:
        """IndexMeta.redaction rebuilds as `redaction_changed` (test_redaction_scope.py)."""
        ws = Path("/w")

        assert scope_hash(MemorySettings(redaction=redaction), ws) == scope_hash(
            MemorySettings(), ws
        )
