"""The gRPC message conversions (vector progress, search confidence): both ways, over real
serialized bytes."""

from __future__ import annotations

from memlane.application.ports.index_store import VectorProgress
from memlane.application.reports import (
    GetResult,
    RecoveryStats,
    SearchResponse,
    StatusReport,
    SyncReport,
)
from memlane.domain.search import SearchResult
from memlane.entrypoints.grpc._generated import memlane_pb2 as pb
from memlane.entrypoints.grpc.messages import (
    get_result_from_pb,
    get_result_to_pb,
    search_response_from_pb,
    search_response_to_pb,
    status_report_from_pb,
    status_report_to_pb,
    sync_report_from_pb,
    sync_report_to_pb,
)


def _sync(vectors: VectorProgress | None) -> SyncReport:
    return SyncReport(
        reason="explicit",
        full_reindex=True,
        files_indexed=3,
        files_removed=0,
        files_unchanged=0,
        chunks_embedded=0,
        vectors_backfilled=0,
        events_handled=4,
        duration_ms=12.5,
        vectors=vectors,
    )


def _status(vectors: VectorProgress | None, last_sync: SyncReport | None = None) -> StatusReport:
    return StatusReport(
        agent_id="main",
        workspace="/ws",
        store_path="/state/memory.db",
        provider="openai",
        requested_provider="openai",
        model="text-embedding-3-small",
        provider_reason=None,
        fallback_from=None,
        fallback_reason=None,
        search_mode="hybrid",
        sources=("memory",),
        extra_paths=(),
        files=3,
        chunks=40_000,
        by_source=[],
        dirty=False,
        vector_available=True,
        vector_error=None,
        vector_dims=1536,
        fts_available=True,
        cache_entries=0,
        cache_max_entries=None,
        events_position=4,
        events_pending=0,
        embed_failures=0,
        readonly_recovery=RecoveryStats(),
        last_sync=last_sync,
        vectors=vectors,
    )


def _over_the_wire(message: pb.SyncReport) -> pb.SyncReport:
    return pb.SyncReport.FromString(message.SerializeToString())


class TestSyncReportVectors:
    def test_done_and_total_survive_the_wire(self) -> None:
        report = _sync(VectorProgress(done=0, total=40_000))

        message = _over_the_wire(sync_report_to_pb(report))

        assert (message.vectors.done, message.vectors.total) == (0, 40_000)
        assert sync_report_from_pb(message) == report

    def test_a_keyword_only_index_sends_no_vectors_and_reads_back_none(self) -> None:
        message = _over_the_wire(sync_report_to_pb(_sync(None)))

        assert not message.HasField("vectors")
        assert sync_report_from_pb(message).vectors is None

    def test_a_complete_index_is_not_confused_with_no_vectors(self) -> None:
        """done == total == 0 (an empty index with a provider) is still a progress, not None."""
        message = _over_the_wire(sync_report_to_pb(_sync(VectorProgress(done=0, total=0))))

        assert message.HasField("vectors")
        assert sync_report_from_pb(message).vectors == VectorProgress(done=0, total=0)

    def test_a_reply_of_an_older_server_reads_as_no_vectors(self) -> None:
        """Before the field existed the reply carried none: the client says None, not 0 / 0."""
        old = pb.SyncReport(reason="explicit", files_indexed=3)

        assert sync_report_from_pb(_over_the_wire(old)).vectors is None


class TestStatusReportVectors:
    def test_the_status_numbers_and_the_last_syncs_survive_the_wire(self) -> None:
        report = _status(
            VectorProgress(done=12_345, total=40_000),
            last_sync=_sync(VectorProgress(done=0, total=40_000)),
        )

        message = pb.StatusReport.FromString(status_report_to_pb(report).SerializeToString())

        assert (message.vectors.done, message.vectors.total) == (12_345, 40_000)
        assert message.last_sync.vectors.total == 40_000
        assert status_report_from_pb(message) == report

    def test_no_vectors_stay_none(self) -> None:
        message = pb.StatusReport.FromString(status_report_to_pb(_status(None)).SerializeToString())

        assert not message.HasField("vectors")
        assert status_report_from_pb(message).vectors is None


class TestSyncRequest:
    def test_the_field_is_unset_unless_given(self) -> None:
        """Unset means wait (the server's default), so an older client's request is unchanged."""
        unset = pb.SyncRequest.FromString(pb.SyncRequest(force=True).SerializeToString())
        no_wait = pb.SyncRequest.FromString(
            pb.SyncRequest(wait_for_vectors=False).SerializeToString()
        )

        assert not unset.HasField("wait_for_vectors")
        assert no_wait.HasField("wait_for_vectors") and no_wait.wait_for_vectors is False


class TestSearchConfidence:
    def _round_trip(self, response: SearchResponse) -> SearchResponse:
        wire = search_response_to_pb(response).SerializeToString()
        return search_response_from_pb(pb.SearchResponse.FromString(wire))

    def test_confidence_and_no_strong_match_survive_the_wire(self) -> None:
        hit = SearchResult("MEMORY.md", 1, 3, 0.5, "text", "memory", confidence=1.25)
        back = self._round_trip(SearchResponse([hit], "local", "m", "hybrid", no_strong_match=True))

        assert back.no_strong_match is True
        assert back.results[0].confidence == 1.25

    def test_unjudged_stays_none_and_false_stays_false(self) -> None:
        hit = SearchResult("MEMORY.md", 1, 3, 0.5, "text", "memory")
        unjudged = self._round_trip(SearchResponse([hit], "none", None, "keyword"))
        strong = self._round_trip(SearchResponse([], "local", "m", "hybrid", no_strong_match=False))

        assert unjudged.no_strong_match is None and unjudged.results[0].confidence is None
        assert strong.no_strong_match is False


class TestGetResult:
    def test_where_a_capped_read_goes_on_survives_the_wire(self) -> None:
        for more_from in (None, 10_001):
            got = GetResult("memory/a.md", "x", 1, 10_000, "memory", more_from=more_from)
            wire = pb.GetResponse.FromString(get_result_to_pb(got).SerializeToString())

            assert wire.HasField("more_from") == (more_from is not None)
            assert get_result_from_pb(wire) == got
