"""Entry point: conversions between memlane's result values and the gRPC messages, both ways.

The server turns application values into messages; the client turns messages back into the same
values, so a caller of `MemlaneClient` gets what a caller of the manager gets. Optional proto
fields map to None. Strings with a closed set of values (source, search mode) are checked on the
way in and raise ValueError when the server sends something this client does not know.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.ports.index_store import VectorProgress
from memlane.application.reports import (
    GetResult,
    RecoveryStats,
    SearchMode,
    SearchResponse,
    SourceStatus,
    StatusReport,
    SyncReport,
)
from memlane.domain.events import JsonScalar, event_from_record, event_to_record, type_name
from memlane.domain.search import ScoreExplanation, SearchResult
from memlane.domain.sources import ALL_SOURCES, Source, SourceIssue
from memlane.entrypoints.grpc._generated import memlane_pb2 as pb

_SEARCH_MODES: tuple[SearchMode, ...] = ("hybrid", "vector", "keyword")

V = TypeVar("V")


def _issue_pb(issue: SourceIssue) -> pb.SourceIssue:
    return pb.SourceIssue(path=issue.path, reason=issue.reason)


def _result_pb(result: SearchResult) -> pb.SearchResult:
    explanation = None
    if result.explanation is not None:
        e = result.explanation
        explanation = pb.ScoreExplanation(
            vector_score=e.vector_score,
            text_score=e.text_score,
            fused_score=e.fused_score,
            decay_factor=e.decay_factor,
            mmr_rank=e.mmr_rank,
            time_boost=e.time_boost,
            best_piece=e.best_piece,
        )
    return pb.SearchResult(
        path=result.path,
        start_line=result.start_line,
        end_line=result.end_line,
        score=result.score,
        snippet=result.snippet,
        source=result.source,
        citation=result.citation,
        explanation=explanation,
        agent=result.agent,
        time=result.time,
        confidence=result.confidence,
    )


def search_response_to_pb(response: SearchResponse) -> pb.SearchResponse:
    """Convert a SearchResponse to its message."""
    return pb.SearchResponse(
        results=[_result_pb(r) for r in response.results],
        provider=response.provider,
        model=response.model,
        mode=response.mode,
        fallback=response.fallback,
        warnings=list(response.warnings),
        time_words=response.time_words,
        no_strong_match=response.no_strong_match,
    )


def get_result_to_pb(result: GetResult) -> pb.GetResponse:
    """Convert a GetResult to its message."""
    return pb.GetResponse(
        path=result.path,
        text=result.text,
        from_line=result.from_line,
        lines=result.lines,
        source=result.source,
        more_from=result.more_from,
    )


def _vectors_pb(vectors: VectorProgress | None) -> pb.VectorProgress | None:
    return None if vectors is None else pb.VectorProgress(done=vectors.done, total=vectors.total)


def sync_report_to_pb(report: SyncReport) -> pb.SyncReport:
    """Convert a SyncReport to its message."""
    return pb.SyncReport(
        reason=report.reason,
        full_reindex=report.full_reindex,
        files_indexed=report.files_indexed,
        files_removed=report.files_removed,
        files_unchanged=report.files_unchanged,
        chunks_embedded=report.chunks_embedded,
        vectors_backfilled=report.vectors_backfilled,
        events_handled=report.events_handled,
        duration_ms=report.duration_ms,
        issues=[_issue_pb(i) for i in report.issues],
        warnings=list(report.warnings),
        vectors=_vectors_pb(report.vectors),
    )


def _source_status_pb(s: SourceStatus) -> pb.SourceStatus:
    return pb.SourceStatus(
        source=s.source, files=s.files, chunks=s.chunks, files_on_disk=s.files_on_disk
    )


def status_report_to_pb(report: StatusReport) -> pb.StatusReport:
    """Convert a StatusReport to its message."""
    r = report.readonly_recovery
    return pb.StatusReport(
        agent_id=report.agent_id,
        workspace=report.workspace,
        store_path=report.store_path,
        provider=report.provider,
        requested_provider=report.requested_provider,
        model=report.model,
        provider_reason=report.provider_reason,
        fallback_from=report.fallback_from,
        fallback_reason=report.fallback_reason,
        search_mode=report.search_mode,
        sources=list(report.sources),
        extra_paths=list(report.extra_paths),
        files=report.files,
        chunks=report.chunks,
        by_source=[_source_status_pb(s) for s in report.by_source],
        dirty=report.dirty,
        vector_available=report.vector_available,
        vector_error=report.vector_error,
        vector_dims=report.vector_dims,
        fts_available=report.fts_available,
        cache_entries=report.cache_entries,
        cache_max_entries=report.cache_max_entries,
        events_position=report.events_position,
        events_pending=report.events_pending,
        embed_failures=report.embed_failures,
        readonly_recovery=pb.RecoveryStats(
            attempts=r.attempts,
            successes=r.successes,
            failures=r.failures,
            last_error=r.last_error,
        ),
        issues=[_issue_pb(i) for i in report.issues],
        last_sync=None if report.last_sync is None else sync_report_to_pb(report.last_sync),
        # The message has no field for the last sync failure: it rides with the warnings.
        warnings=[*report.warnings, *_failure_text(report)],
        last_synced_at=report.last_synced_at,
        last_sync_reason=report.last_sync_reason,
        read_only=report.read_only,
        vectors=_vectors_pb(report.vectors),
    )


def _failure_text(report: StatusReport) -> list[str]:
    failure = report.last_sync_failure
    return [] if failure is None else [failure.text()]


def index_event_to_pb(recorded: RecordedEvent) -> pb.IndexEvent:
    """Convert a logged event to its message: `occurred_at` as a Timestamp, the rest as scalars."""
    occurred_at = Timestamp()
    occurred_at.FromDatetime(recorded.event.occurred_at)  # naive datetimes are taken as UTC
    fields: dict[str, pb.Scalar] = {}
    for name, value in event_to_record(recorded.event).items():
        if name == "occurred_at":
            continue
        # bool before int: bool is an int subclass.
        if isinstance(value, bool):
            fields[name] = pb.Scalar(bool_value=value)
        elif isinstance(value, int):
            fields[name] = pb.Scalar(int_value=value)
        elif isinstance(value, float):
            fields[name] = pb.Scalar(double_value=value)
        elif isinstance(value, str):
            fields[name] = pb.Scalar(string_value=value)
        else:
            fields[name] = pb.Scalar()
    return pb.IndexEvent(
        position=recorded.position,
        type=type_name(recorded.event),
        occurred_at=occurred_at,
        fields=fields,
    )


# ---- messages -> values ----


def _opt(message: Message, field: str, value: V) -> V | None:
    return value if message.HasField(field) else None


def _source(value: str) -> Source:
    if value not in ALL_SOURCES:
        raise ValueError(f"unknown source {value!r}")
    return value


def _mode(value: str) -> SearchMode:
    if value not in _SEARCH_MODES:
        raise ValueError(f"unknown search mode {value!r}")
    return value


def _issue(message: pb.SourceIssue) -> SourceIssue:
    return SourceIssue(path=message.path, reason=message.reason)


def _result(m: pb.SearchResult) -> SearchResult:
    explanation = None
    if m.HasField("explanation"):
        e = m.explanation
        explanation = ScoreExplanation(
            vector_score=_opt(e, "vector_score", e.vector_score),
            text_score=_opt(e, "text_score", e.text_score),
            fused_score=e.fused_score,
            decay_factor=e.decay_factor,
            mmr_rank=_opt(e, "mmr_rank", e.mmr_rank),
            time_boost=e.time_boost if e.HasField("time_boost") else 1.0,
            best_piece=_opt(e, "best_piece", e.best_piece),
        )
    return SearchResult(
        path=m.path,
        start_line=m.start_line,
        end_line=m.end_line,
        score=m.score,
        snippet=m.snippet,
        source=_source(m.source),
        citation=_opt(m, "citation", m.citation),
        explanation=explanation,
        agent=_opt(m, "agent", m.agent),
        time=_opt(m, "time", m.time),
        confidence=_opt(m, "confidence", m.confidence),
    )


def search_response_from_pb(m: pb.SearchResponse) -> SearchResponse:
    """Rebuild a SearchResponse from its message."""
    return SearchResponse(
        results=[_result(r) for r in m.results],
        provider=m.provider,
        model=_opt(m, "model", m.model),
        mode=_mode(m.mode),
        fallback=_opt(m, "fallback", m.fallback),
        warnings=tuple(m.warnings),
        time_words=_opt(m, "time_words", m.time_words),
        no_strong_match=_opt(m, "no_strong_match", m.no_strong_match),
    )


def get_result_from_pb(m: pb.GetResponse) -> GetResult:
    """Rebuild a GetResult from its message."""
    return GetResult(
        path=m.path,
        text=m.text,
        from_line=m.from_line,
        lines=m.lines,
        source=_source(m.source),
        more_from=_opt(m, "more_from", m.more_from),
    )


def _vectors(m: pb.SyncReport | pb.StatusReport) -> VectorProgress | None:
    if not m.HasField("vectors"):
        return None
    return VectorProgress(done=m.vectors.done, total=m.vectors.total)


def sync_report_from_pb(m: pb.SyncReport) -> SyncReport:
    """Rebuild a SyncReport from its message."""
    return SyncReport(
        reason=m.reason,
        full_reindex=m.full_reindex,
        files_indexed=m.files_indexed,
        files_removed=m.files_removed,
        files_unchanged=m.files_unchanged,
        chunks_embedded=m.chunks_embedded,
        vectors_backfilled=m.vectors_backfilled,
        events_handled=m.events_handled,
        duration_ms=m.duration_ms,
        issues=[_issue(i) for i in m.issues],
        warnings=tuple(m.warnings),
        vectors=_vectors(m),
    )


def status_report_from_pb(m: pb.StatusReport) -> StatusReport:
    """Rebuild a StatusReport from its message."""
    r = m.readonly_recovery
    return StatusReport(
        agent_id=m.agent_id,
        workspace=m.workspace,
        store_path=m.store_path,
        provider=m.provider,
        requested_provider=m.requested_provider,
        model=_opt(m, "model", m.model),
        provider_reason=_opt(m, "provider_reason", m.provider_reason),
        fallback_from=_opt(m, "fallback_from", m.fallback_from),
        fallback_reason=_opt(m, "fallback_reason", m.fallback_reason),
        search_mode=_mode(m.search_mode),
        sources=tuple(_source(s) for s in m.sources),
        extra_paths=tuple(m.extra_paths),
        files=m.files,
        chunks=m.chunks,
        by_source=[
            SourceStatus(
                source=_source(s.source),
                files=s.files,
                chunks=s.chunks,
                files_on_disk=_opt(s, "files_on_disk", s.files_on_disk),
            )
            for s in m.by_source
        ],
        dirty=m.dirty,
        vector_available=m.vector_available,
        vector_error=_opt(m, "vector_error", m.vector_error),
        vector_dims=_opt(m, "vector_dims", m.vector_dims),
        fts_available=m.fts_available,
        cache_entries=m.cache_entries,
        cache_max_entries=_opt(m, "cache_max_entries", m.cache_max_entries),
        events_position=m.events_position,
        events_pending=m.events_pending,
        embed_failures=m.embed_failures,
        readonly_recovery=RecoveryStats(
            attempts=r.attempts,
            successes=r.successes,
            failures=r.failures,
            last_error=_opt(r, "last_error", r.last_error),
        ),
        issues=[_issue(i) for i in m.issues],
        last_sync=sync_report_from_pb(m.last_sync) if m.HasField("last_sync") else None,
        last_synced_at=_opt(m, "last_synced_at", m.last_synced_at),
        last_sync_reason=_opt(m, "last_sync_reason", m.last_sync_reason),
        read_only=_opt(m, "read_only", m.read_only),
        warnings=tuple(m.warnings),
        vectors=_vectors(m),
    )


@dataclass(frozen=True, slots=True)
class StreamedEvent:
    """An index event as the stream delivers it: type name, time and the other fields."""

    position: int
    type: str
    occurred_at: datetime
    fields: dict[str, JsonScalar]

    def to_recorded(self) -> RecordedEvent:
        """Rebuild the domain event; raises KeyError for a type this client does not know."""
        record: dict[str, JsonScalar] = {**self.fields, "occurred_at": self.occurred_at.isoformat()}
        return RecordedEvent(position=self.position, event=event_from_record(self.type, record))


def _scalar(m: pb.Scalar) -> JsonScalar:
    kind = m.WhichOneof("kind")
    if kind is None:
        return None
    value: JsonScalar = getattr(m, kind)
    return value


def streamed_event_from_pb(m: pb.IndexEvent) -> StreamedEvent:
    """Rebuild a StreamedEvent from its message (`occurred_at` in UTC)."""
    return StreamedEvent(
        position=m.position,
        type=m.type,
        occurred_at=m.occurred_at.ToDatetime(tzinfo=UTC),
        fields={name: _scalar(value) for name, value in m.fields.items()},
    )
