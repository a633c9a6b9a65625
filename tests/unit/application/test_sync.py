"""The sync use case, edge to edge through the message bus, on fakes only."""

from __future__ import annotations

import pytest

from memlane.application.ports.embedding import EmbeddingUnavailable
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain import events
from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.index_meta import vector_label
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.unit.application.conftest import World, message

NOTE = "# Deploys\n\nWe deploy the ingest service to the eu-west cluster every Tuesday.\n"
OTHER = "# Team\n\nPriya owns the billing service and reviews schema changes.\n"


def _paths(world: World, source: str) -> list[str]:
    return [f.path for f in world.store.files(source)]  # type: ignore[arg-type]


class TestFirstSync:
    def test_indexes_memory_notes_and_transcripts(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/2026-11-03.md", OTHER)
        world.sessions.write("sessions/a.jsonl", message("user", "where do we deploy?"))

        report = world.manager().sync()

        assert report.full_reindex
        assert _paths(world, "memory") == ["MEMORY.md", "memory/2026-11-03.md"]
        assert _paths(world, "sessions") == ["sessions/a.jsonl"]
        assert report.files_indexed == 3
        meta = world.store.meta()
        assert meta is not None and meta.model == "fake-bag-of-words" and meta.dimensions == 16

    def test_search_finds_the_note_by_keyword_and_vector(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/team.md", OTHER)
        manager = world.manager()
        manager.sync()

        response = manager.search("who owns billing")

        assert response.mode == "hybrid"
        assert response.results[0].path == "memory/team.md"


class TestIncrementalSync:
    def test_a_noop_sync_reads_and_embeds_nothing(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        manager = world.manager()
        manager.sync()
        assert world.embedder is not None
        calls, reads = len(world.embedder.calls), len(world.memory.reads)

        report = manager.sync()

        assert (report.files_indexed, report.chunks_embedded) == (0, 0)
        assert len(world.embedder.calls) == calls
        assert len(world.memory.reads) == reads

    def test_an_edit_reembeds_only_the_new_text(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/team.md", OTHER)
        manager = world.manager()
        manager.sync()
        assert world.embedder is not None
        world.embedder.calls.clear()

        world.memory.write("memory/team.md", OTHER + "\nAnd Tomas runs the on-call rota.\n")
        report = manager.sync()

        assert report.files_indexed == 1
        embedded = world.embedder.embedded_texts
        assert embedded and all("Tomas" in t for t in embedded)

    def test_a_touched_but_unchanged_file_is_not_reindexed(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        manager = world.manager()
        manager.sync()

        world.memory.set_mtime("MEMORY.md", 1_800_000_000.0)
        report = manager.sync()

        assert report.files_indexed == 0
        stored = world.store.file("memory", "MEMORY.md")
        assert stored is not None and stored.mtime == 1_800_000_000.0

    def test_files_with_new_mtimes_over_the_same_bytes_are_counted_unchanged(
        self, world: World
    ) -> None:
        """A workspace copied without its mtimes (then `index --move-workspace`): each file is
        reported unchanged, not left out of every count."""
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/team.md", OTHER)
        manager = world.manager()
        manager.sync()

        for path in ("MEMORY.md", "memory/team.md"):
            world.memory.set_mtime(path, 1_800_000_000.0)
        report = manager.sync()

        assert (report.files_indexed, report.files_unchanged) == (0, 2)

    def test_a_deleted_file_leaves_the_index(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/team.md", OTHER)
        manager = world.manager()
        manager.sync()

        world.memory.delete("memory/team.md")
        report = manager.sync()

        assert report.files_removed == 1
        assert _paths(world, "memory") == ["MEMORY.md"]
        assert all(r.path != "memory/team.md" for r in manager.search("billing").results)


class TestSessionGrowth:
    def _grow(self, world: World, count: int) -> None:
        for i in range(count):
            world.sessions.append("sessions/s.jsonl", message("user", f"message number {i}"))

    def test_growth_below_thresholds_waits_on_automatic_syncs(self, world: World) -> None:
        self._grow(world, 1)
        manager = world.manager()
        manager.sync()
        self._grow(world, 3)

        report = manager.sync(trigger=SyncTrigger.WATCH)

        assert report.files_indexed == 0

    def test_enough_new_messages_reindex_the_transcript(self, world: World) -> None:
        self._grow(world, 1)
        manager = world.manager()
        manager.sync()
        self._grow(world, 50)

        report = manager.sync(trigger=SyncTrigger.WATCH)

        assert report.files_indexed == 1
        grew = [r.event for r in world.log.tail(50) if isinstance(r.event, events.SessionGrew)]
        assert grew and grew[-1].new_messages == 50

    def test_an_explicit_sync_ignores_thresholds(self, world: World) -> None:
        self._grow(world, 1)
        manager = world.manager()
        manager.sync()
        self._grow(world, 2)

        assert manager.sync(trigger=SyncTrigger.EXPLICIT).files_indexed == 1

    def test_a_searchs_own_scan_ignores_thresholds_as_an_explicit_sync(self, world: World) -> None:
        self._grow(world, 1)
        manager = world.manager()
        manager.sync()
        self._grow(world, 2)

        report = manager.refresh()  # the CLI search's scan, by its default trigger

        assert report is not None and report.files_indexed == 1

    def test_a_truncated_transcript_is_reindexed_whole(self, world: World) -> None:
        self._grow(world, 5)
        manager = world.manager()
        manager.sync()

        world.sessions.write("sessions/s.jsonl", message("assistant", "a fresh start"))
        report = manager.sync(trigger=SyncTrigger.WATCH)

        assert report.files_indexed == 1
        assert "fresh start" in manager.get("sessions/s.jsonl").text


class TestKeywordOnlyAndProviders:
    def test_without_a_provider_files_are_still_indexed_for_keywords(self, world: World) -> None:
        world.embedder = None
        world.memory.write("MEMORY.md", NOTE)
        manager = world.manager()

        manager.sync()
        response = manager.search("deploy Tuesday")

        assert response.mode == "keyword"
        assert [r.path for r in response.results] == ["MEMORY.md"]

    def test_a_provider_that_appears_later_adds_vectors_without_a_rebuild(
        self, world: World
    ) -> None:
        world.embedder = None
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()

        world.embedder = FakeEmbeddingProvider()
        report = world.manager().sync()

        assert not report.full_reindex
        assert report.vectors_backfilled >= 1
        label = vector_label(world.embedder.model, world.embedder.key)
        assert world.store.chunks_without_vectors(label) == []

    def test_an_embedding_failure_keeps_keyword_search_and_retries_later(
        self, world: World
    ) -> None:
        assert world.embedder is not None
        world.memory.write("MEMORY.md", NOTE)
        manager = world.manager()
        # Keyword rows first: the one embedding call of the sync, the backfill's, fails.
        world.embedder.fail_next(EmbeddingUnavailable("429 rate limited"))

        manager.sync()

        assert _paths(world, "memory") == ["MEMORY.md"]
        assert any("embedding failed" in i.reason for i in manager.status().issues)
        label = vector_label(world.embedder.model, world.embedder.key)
        assert world.store.chunks_without_vectors(label) != []

        # The retry: a search embeds the small gap before answering (as the CLI's does).
        response = manager.search("deploy")

        assert response.results and response.mode == "hybrid"
        assert world.store.chunks_without_vectors(label) == []
        assert manager.sync().vectors_backfilled == 0  # nothing left for the next sync

    def test_the_fallback_provider_takes_over_after_a_failure(self, world: World) -> None:
        assert world.embedder is not None
        world.fallback = FakeEmbeddingProvider(model="fallback-model", id="fallback")
        world.memory.write("MEMORY.md", NOTE)
        manager = world.manager()
        world.embedder.fail_next(EmbeddingUnavailable("500 server error"))

        manager.sync()

        fell = [r.event for r in world.log.tail(50) if isinstance(r.event, events.ProviderFellBack)]
        assert fell and fell[0].to_provider == "fallback"
        label = vector_label(world.fallback.model, world.fallback.key)
        assert world.store.chunks_without_vectors(label) == []
        assert manager.status().fallback_from == "fake"


class TestFullReindex:
    def test_force_rebuilds_and_includes_sessions(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.sessions.write("sessions/a.jsonl", message("user", "remember the tuesday deploy"))
        manager = world.manager()
        manager.sync()

        report = manager.sync(force=True, trigger=SyncTrigger.WATCH)

        assert report.full_reindex
        assert _paths(world, "sessions") == ["sessions/a.jsonl"]

    def test_a_rebuild_reuses_cached_embeddings(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        manager = world.manager()
        manager.sync()
        assert world.embedder is not None
        world.embedder.calls.clear()

        manager.sync(force=True)

        assert world.embedder.embedded_texts == []

    def test_changed_chunking_rebuilds(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()

        report = world.manager(chunking=ChunkingPolicy(tokens=200, overlap=20)).sync()

        assert report.full_reindex


class TestBadInput:
    def test_binary_and_unreadable_files_are_reported_and_the_sync_goes_on(
        self, world: World
    ) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.memory.write("memory/blob.md", b"\x00\x01\x02binary")
        world.memory.write("memory/locked.md", "secret")
        world.memory.unreadable.add("memory/locked.md")

        manager = world.manager()
        manager.sync()

        assert "MEMORY.md" in _paths(world, "memory")
        assert "memory/blob.md" not in _paths(world, "memory")
        reasons = {i.path: i.reason for i in manager.status().issues}
        assert "binary" in reasons["memory/blob.md"]
        assert "memory/locked.md" in reasons

    def test_a_transcript_with_broken_lines_is_indexed_and_reported(self, world: World) -> None:
        world.sessions.write(
            "sessions/a.jsonl",
            message("user", "the deploy moved to Thursday") + "{not json\n" + "\xff\xfe\n",
        )
        manager = world.manager()

        manager.sync()

        assert _paths(world, "sessions") == ["sessions/a.jsonl"]
        assert any("skipped" in i.reason for i in manager.status().issues)


def _changed_then_died(world: World) -> None:
    """A new note, its change appended to the log by a process that died before any handler
    ran."""
    world.memory.write("memory/new.md", OTHER)
    changed = events.FileChanged(
        occurred_at=world.clock.now(), source="memory", path="memory/new.md", mtime=1.0, size=10
    )
    world.log.append([changed])


class TestCrashRecovery:
    def test_events_logged_before_a_crash_are_handled_on_the_next_sync(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        _changed_then_died(world)

        report = world.manager().sync()

        assert "memory/new.md" in _paths(world, "memory")
        assert report.events_handled >= 1

    def test_a_file_the_catch_up_indexed_is_not_counted_unchanged_too(self, world: World) -> None:
        world.memory.write("MEMORY.md", NOTE)
        world.manager().sync()
        _changed_then_died(world)

        report = world.manager().sync()

        # two files in all: one indexed by the catch-up, one unchanged (it said 1 and 2)
        assert (report.files_indexed, report.files_unchanged) == (1, 1)


class TestSyncTrigger:
    def test_only_triggers_nobody_asked_for_are_automatic(self) -> None:
        automatic = {t.value for t in SyncTrigger if t.automatic}

        assert automatic == {"watch", "interval", "search", "session-start"}

    def test_a_known_name_parses_to_its_trigger(self) -> None:
        assert SyncTrigger.parse("session-start") is SyncTrigger.SESSION_START

    def test_an_unknown_name_is_refused_with_the_known_ones(self) -> None:
        with pytest.raises(ValueError, match=r"unknown sync trigger 'cli'.*explicit"):
            SyncTrigger.parse("cli")

    def test_the_report_names_the_trigger(self, world: World) -> None:
        report = world.manager().sync(trigger=SyncTrigger.INTERVAL)

        assert report.reason == "interval"
