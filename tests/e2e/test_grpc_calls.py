"""E2E over gRPC: Search, Get, Sync and Status answer what the manager answers (see _grpc_support)."""

from __future__ import annotations

import pytest

from memlane.application.ports.index_store import VectorProgress
from memlane.application.sync_trigger import SyncTrigger
from memlane.entrypoints.grpc._generated import memlane_pb2, memlane_pb2_grpc
from tests.e2e._grpc_support import (
    CODE,
    TOKEN,
    CannedManager,
    Served,
    rpc_error,
)
from tests.e2e._grpc_support import canned as canned  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import canned_served as canned_served  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import manager as manager  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import served as served  # noqa: PLC0414 (a fixture)

pytestmark = pytest.mark.e2e


class TestSearch:
    def test_returns_what_the_manager_returns(self, served: Served) -> None:
        """Results, provider, model, mode and warnings survive the wire unchanged."""
        got = served.client.search("when do we deploy", max_results=5, min_score=0.1)

        assert got == served.manager.search("when do we deploy", max_results=5, min_score=0.1)

    def test_explain_carries_each_score(self, served: Served) -> None:
        """Vector, text, decay and MMR rank arrive, and unset scores stay None."""
        got = served.client.search("deploy", explain=True)

        expected = served.manager.search("deploy", explain=True)
        assert [r.explanation for r in got.results] == [r.explanation for r in expected.results]
        assert all(r.explanation is not None for r in got.results)

    def test_passes_options_and_leaves_unset_limits_to_the_config(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """Unset limits reach the manager as None (the configured values), not as zero."""
        canned_served.client.search("部署 周五", session_key="agent:main:chat-1")
        canned_served.client.search("x", max_results=1, min_score=0.0, explain=True)

        assert canned.calls == [
            (
                "search",
                {
                    "query": "部署 周五",
                    "max_results": None,
                    "min_score": None,
                    "explain": False,
                    "session_key": "agent:main:chat-1",
                },
            ),
            (
                "search",
                {
                    "query": "x",
                    "max_results": 1,
                    "min_score": 0.0,
                    "explain": True,
                    "session_key": None,
                },
            ),
        ]

    def test_an_empty_query_is_an_invalid_argument(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.search("   "))

        assert error.code is CODE.INVALID_ARGUMENT

    def test_time_window_and_each_hits_time_cross_the_wire(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """since / until / as_of reach the manager; every hit's time, its time boost and the
        time words come back as the manager made them."""
        got = canned_served.client.search(
            "deploy yesterday", explain=True, since="2026-01-01", until="7d", as_of="2026-11-20"
        )

        expected = canned.search("deploy yesterday", explain=True)
        assert got == expected
        assert [r.time for r in got.results] == [
            "2026-01-05T09:30:00Z",
            "2026-01-05T00:00:00Z/2026-01-05T23:59:59Z",
        ]
        assert [r.explanation.time_boost for r in got.results if r.explanation] == [0.625, 1.0]
        assert [r.explanation.best_piece for r in got.results if r.explanation] == [0.875, None]
        assert got.time_words == '"yesterday" → 2026-11-19'
        assert canned.calls[0][1] == {
            "query": "deploy yesterday",
            "max_results": None,
            "min_score": None,
            "explain": True,
            "session_key": None,
            "since": "2026-01-01",
            "until": "7d",
            "as_of": "2026-11-20",
        }

    def test_an_unreadable_since_is_an_invalid_argument(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.search("deploy", since="last tuesday"))

        assert error.code is CODE.INVALID_ARGUMENT
        assert "since" in error.details

    def test_a_long_unreadable_until_is_an_invalid_argument_cut_short(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.search("deploy", until="y" * 17_000))

        assert error.code is CODE.INVALID_ARGUMENT
        assert "until" in error.details and "characters cut)" in error.details


class TestGet:
    def test_returns_the_requested_lines(self, served: Served) -> None:
        """A window of lines, CJK text included, as the manager reads it."""
        got = served.client.get("memory/2026-01-05.md", from_line=2, lines=1)

        assert got == served.manager.get("memory/2026-01-05.md", from_line=2, lines=1)

    def test_reads_the_whole_file_without_a_window(self, served: Served) -> None:
        assert served.client.get("MEMORY.md") == served.manager.get("MEMORY.md")

    @pytest.mark.parametrize("path", ["../secrets.txt", "/etc/passwd", "memory/../../x.md"])
    def test_refuses_paths_outside_memory_and_sessions(self, served: Served, path: str) -> None:
        """Traversal and absolute paths are PERMISSION_DENIED."""
        error = rpc_error(lambda: served.client.get(path))

        assert error.code is CODE.PERMISSION_DENIED

    def test_a_missing_file_is_not_found(self, served: Served) -> None:
        error = rpc_error(lambda: served.client.get("memory/1999-01-01.md"))

        assert error.code is CODE.NOT_FOUND

    @pytest.mark.parametrize("length", [9_000, 17_000])
    def test_an_error_echoing_a_long_path_keeps_its_own_status(
        self, served: Served, length: int
    ) -> None:
        """The details are cut below gRPC's trailer limits: before, a path of 9,000 or 17,000
        characters came back as RESOURCE_EXHAUSTED ("metadata size exceeds ... limit")."""
        path = "memory/" + "a" * length + ".md"

        error = rpc_error(lambda: served.client.get(path))

        assert error.code is not CODE.RESOURCE_EXHAUSTED, error.details
        assert error.code in (CODE.PERMISSION_DENIED, CODE.NOT_FOUND, CODE.FAILED_PRECONDITION)
        assert error.details.endswith("characters cut)")
        assert len(error.details) <= 2_000


class TestSync:
    def test_returns_the_sync_report(self, canned_served: Served, canned: CannedManager) -> None:
        """Force and the named trigger are passed through; the report arrives whole."""
        got = canned_served.client.sync(force=True, reason="watch")

        assert got == canned.sync(force=True, trigger=SyncTrigger.WATCH)
        assert canned.calls[0] == (
            "sync",
            {"force": True, "trigger": SyncTrigger.WATCH, "wait_for_vectors": True},
        )
        assert got.vectors == VectorProgress(done=9, total=9)

    def test_an_unknown_reason_is_an_invalid_argument(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """A free-text reason would switch behaviour unchecked: it is refused, nothing runs."""
        error = rpc_error(lambda: canned_served.client.sync(reason="grpc test"))

        assert error.code is CODE.INVALID_ARGUMENT
        assert "unknown sync trigger 'grpc test'" in error.details
        assert canned.calls == []

    def test_without_a_reason_the_manager_default_applies(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        canned_served.client.sync()

        assert canned.calls == [
            ("sync", {"force": False, "trigger": SyncTrigger.EXPLICIT, "wait_for_vectors": True})
        ]

    def test_not_waiting_for_vectors_reaches_the_manager_and_the_reply_says_how_far(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        got = canned_served.client.sync(wait_for_vectors=False)

        assert canned.calls == [
            ("sync", {"force": False, "trigger": SyncTrigger.EXPLICIT, "wait_for_vectors": False})
        ]
        assert got.vectors == VectorProgress(done=4, total=9)

    def test_a_request_without_the_field_waits_as_before_it_existed(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """An older client's request (the field unset) keeps today's behaviour: wait."""
        stub = memlane_pb2_grpc.MemoryServiceStub(canned_served.client.channel)
        request = memlane_pb2.SyncRequest(force=False)
        metadata = (("authorization", f"Bearer {TOKEN}"),)

        reply = stub.Sync(request, metadata=metadata, timeout=5)

        assert not request.HasField("wait_for_vectors")
        assert canned.calls[0][1]["wait_for_vectors"] is True
        assert (reply.vectors.done, reply.vectors.total) == (9, 9)


class TestStatus:
    def test_returns_the_status_report(self, canned_served: Served, canned: CannedManager) -> None:
        """Every field, including None, nested counts, issues and the last sync."""
        got = canned_served.client.status(deep=True)

        assert got == canned.status(deep=True)

    def test_unset_optional_numbers_stay_none(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        got = canned_served.client.status()

        assert got.cache_max_entries is None
        assert got.by_source[1].files_on_disk is None
        assert got.fallback_from is None
        assert got.warnings == () and got.read_only is None and got.last_synced_at is None
        assert got.vectors is None  # a keyword-only index

    def test_vector_progress_arrives_for_polling(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        got = canned_served.client.status(deep=True)

        assert got.vectors == VectorProgress(done=3, total=9)
        assert got.last_sync is not None and got.last_sync.vectors is None
