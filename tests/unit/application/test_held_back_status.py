"""`status` says how many transcripts the last sync held back below the growth thresholds,
in the process that synced and in any other (the count is recorded with the index)."""

from __future__ import annotations

from dataclasses import asdict, replace

import pytest

from memlane.application.sync_trigger import SyncTrigger
from memlane.domain.config import SessionSyncSettings, SyncSettings
from memlane.entrypoints.casing import camel_dict
from memlane.entrypoints.cli_output import status_text
from tests.unit.application.conftest import World, message


@pytest.fixture
def grown(world: World) -> World:
    """Two transcripts indexed, then grown by one message each: below the thresholds."""
    thresholds = SessionSyncSettings(delta_bytes=10_000_000, delta_messages=1000)
    world.settings = replace(
        world.settings, sources=("memory", "sessions"), sync=SyncSettings(sessions=thresholds)
    )
    world.memory.write("MEMORY.md", "# Keys\n\nThe staging vault key rotates monthly.\n")
    for name in ("sessions/a.jsonl", "sessions/b.jsonl"):
        world.sessions.write(name, message("user", "where is the vault key?"))
    world.manager().sync()
    for name in ("sessions/a.jsonl", "sessions/b.jsonl"):
        world.sessions.append(name, message("assistant", "in the staging safe"))
    return world


class TestHeldBackInStatus:
    def test_the_syncing_process_reports_the_transcripts_held_back(self, grown: World) -> None:
        manager = grown.manager()
        manager.sync(trigger=SyncTrigger.WATCH)

        assert manager.status().files_held_back == 2

    def test_another_process_reports_them_from_the_index(self, grown: World) -> None:
        before = grown.store.last_sync()
        grown.manager().sync(trigger=SyncTrigger.WATCH)

        status = grown.manager().status()  # a fresh process: no sync of its own

        assert status.files_held_back == 2
        assert status.last_synced_at == (before.finished_at if before else None)  # unmoved

    def test_an_explicit_index_takes_them_and_the_count_drops_to_zero(self, grown: World) -> None:
        grown.manager().sync(trigger=SyncTrigger.WATCH)
        grown.manager().sync()  # `memlane index`: thresholds do not apply

        assert grown.manager().status().files_held_back == 0

    def test_the_text_and_json_say_it(self, grown: World) -> None:
        grown.manager().sync(trigger=SyncTrigger.WATCH)
        status = grown.manager().status()

        assert (
            "Held back: 2 transcript(s) held back until they grow past sync.sessions "
            "thresholds; `memlane index` indexes them now"
        ) in status_text(status).splitlines()
        assert camel_dict(asdict(status))["filesHeldBack"] == 2

    def test_nothing_held_back_says_nothing(self, world: World) -> None:
        world.memory.write("MEMORY.md", "# Keys\n\nThe staging vault key rotates monthly.\n")
        manager = world.manager()
        manager.sync()

        status = manager.status()

        assert status.files_held_back == 0
        assert "Held back" not in status_text(status)
