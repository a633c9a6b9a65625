"""Application: the values the use cases return to entry points (search, get, sync, status)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from memlane.application.ports.index_store import VectorIndexState, VectorProgress
from memlane.application.ports.watch_lease import LeaseHolder
from memlane.domain.search import SearchResult
from memlane.domain.sources import Source, SourceIssue

SearchMode: TypeAlias = Literal["hybrid", "vector", "keyword"]


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """Results plus how they were obtained (provider, model, mode, degraded-mode warnings)."""

    results: list[SearchResult]
    provider: str
    model: str | None
    mode: SearchMode
    fallback: str | None = None
    warnings: tuple[str, ...] = ()
    # The time the question's words name, read against its as_of (`"last week" → 2026-11-09..
    # 2026-11-15`); None when it holds no time word.
    time_words: str | None = None
    # True when the search found no strong match (domain/confidence.py: in hybrid search the
    # legs disagree, in vector-only search no candidate stands out; the memory likely holds
    # nothing on it); None: not judged (keyword-only search; vector-only on a tiny index).
    no_strong_match: bool | None = None


@dataclass(frozen=True, slots=True)
class GetResult:
    """Lines read from a memory file or a transcript (`text` empty past the end of file).

    `more_from`: the line to read on from when the read stopped at `reading.MAX_LINES` before the
    end of the file (the whole file, or more lines than that, was asked for); else None.
    `missing`: the file does not exist (read as empty text, as in the reference; the CLI says so
    on stderr, a payload carries it)."""

    path: str
    text: str
    from_line: int
    lines: int
    source: Source
    more_from: int | None = None
    missing: bool = False


@dataclass(frozen=True, slots=True)
class SyncProgress:
    """Progress of a long sync, reported to an optional callback."""

    phase: str
    files_done: int
    files_total: int
    chunks_embedded: int
    # The vector backfill (phase "vectors"): chunks with a vector of the model, of all chunks.
    vectors_done: int = 0
    vectors_total: int = 0


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync did."""

    reason: str
    full_reindex: bool
    files_indexed: int
    files_removed: int
    files_unchanged: int
    chunks_embedded: int
    vectors_backfilled: int
    events_handled: int
    duration_ms: float
    issues: list[SourceIssue] = field(default_factory=list)
    warnings: tuple[str, ...] = ()  # e.g. the configured embedding provider could not run
    # Chunks with a vector of the index's model, of all chunks, as the sync left them (None: a
    # keyword-only index); fewer when the sync did not wait for the vector backfill.
    vectors: VectorProgress | None = None
    # Transcripts that grew below the sessions.delta* thresholds, left for a later sync.
    files_held_back: int = 0


@dataclass(frozen=True, slots=True)
class SourceStatus:
    source: Source
    files: int
    chunks: int
    files_on_disk: int | None = None


@dataclass(frozen=True, slots=True)
class RecoveryStats:
    """How often a write that found the database read-only reopened it and retried, and how
    that went (the store's adapter counts; a store without the mechanism reports zeros)."""

    attempts: int = 0
    successes: int = 0
    failures: int = 0
    last_error: str | None = None


@dataclass(frozen=True, slots=True)
class IndexingProgress:
    """A first index being written into the live store: files in the index so far, of the
    files it found; whether its writer still runs (False: interrupted, the next sync completes
    it; None: the store cannot tell)."""

    files_done: int
    files_total: int
    running: bool | None


@dataclass(frozen=True, slots=True)
class SyncFailure:
    """The last sync of the index that did not go through, until one does: when it ended
    (ISO 8601), its trigger's name and why (one short line each, at most a few)."""

    at: str
    trigger: str
    reasons: tuple[str, ...]

    def text(self) -> str:
        """One line for faces without a field of their own (gRPC warnings, the web page)."""
        return f"the last sync ({self.trigger}, {self.at}) failed: {'; '.join(self.reasons)}"


@dataclass(frozen=True, slots=True)
class Reembedding:
    """The index's vectors are of another provider or model than the configured one (the model
    was changed in the config, or a runtime fallback embedded them), until the vector backfill
    gives every chunk a vector of the configured model: what each is and how far that is."""

    indexed_provider: str  # the provider and model the index's vectors are of
    indexed_model: str
    provider: str  # the provider and model the configuration asks for
    model: str
    vectors: VectorProgress  # chunks with a vector of the configured model, of all chunks
    # The index's vectors are the fallback provider's: the configured one failed (the report's
    # fallback_from / fallback_reason say which and why) and is tried again by the next sync.
    by_fallback: bool = False

    @property
    def indexed(self) -> str:
        """Whose vectors the index holds: `ollama nomic-embed-text`, with what tells it from the
        configured model when only the provider's other settings differ."""
        same = (self.indexed_provider, self.indexed_model) == (self.provider, self.model)
        return f"{self.indexed_provider} {self.indexed_model}" + (
            " (other settings: endpoint, dimensions or headers)" if same else ""
        )

    def whose(self) -> str:
        """What follows the index's vector count on every face: `by ollama nomic-embed-text (the
        fallback); 0 / 2 (0 %) by openai text-embedding-3-small (configured)`."""
        by = " (the fallback)" if self.by_fallback else ""
        configured = f"{self.vectors.ratio()} by {self.provider} {self.model} (configured)"
        return f"by {self.indexed}{by}; {configured}"

    def text(self) -> str:
        """One line for the warnings of every face."""
        said = (
            f"the index's vectors were made by {self.indexed}"
            + (" (the fallback)" if self.by_fallback else "")
            + f", not by the configured {self.provider} {self.model} "
            f"({self.vectors.ratio()} of its vectors)"
        )
        if self.by_fallback:
            return f"{said}: the next sync tries {self.provider} again and re-embeds if it answers"
        return f"{said}: re-embedding pending, the next sync (`memlane index`) embeds them"


@dataclass(frozen=True, slots=True)
class StatusReport:
    """What `status` reports: provider and search mode, counts per source, store, cache and
    event-log state, the last sync, and the issues found while scanning."""

    agent_id: str
    workspace: str
    store_path: str
    provider: str
    requested_provider: str
    model: str | None
    provider_reason: str | None
    fallback_from: str | None
    fallback_reason: str | None
    search_mode: SearchMode
    sources: tuple[Source, ...]
    extra_paths: tuple[str, ...]
    files: int
    chunks: int
    by_source: list[SourceStatus]
    dirty: bool
    vector_available: bool
    vector_error: str | None
    vector_dims: int | None
    fts_available: bool
    cache_entries: int
    cache_max_entries: int | None
    events_position: int
    events_pending: int
    embed_failures: int
    readonly_recovery: RecoveryStats
    issues: list[SourceIssue] = field(default_factory=list)
    last_sync: SyncReport | None = None
    # When the index was last brought up to date (ISO 8601): this process's last sync, else
    # the last sync that changed the index as recorded with it (one with nothing to do writes
    # nothing), None when nothing says.
    last_synced_at: str | None = None
    last_sync_reason: str | None = None
    # Transcripts the last sync (this process's, else as recorded with the index) held back
    # until they grow past the sync.sessions thresholds (deltaBytes / deltaMessages).
    files_held_back: int = 0
    read_only: str | None = None  # why the index could not be written, when a sync found so
    # The last sync that failed (in any process, as the event log says), until one goes through.
    last_sync_failure: SyncFailure | None = None
    warnings: tuple[str, ...] = ()  # e.g. the configured embedding provider cannot run
    # Chunks with a vector of the index's model, of all chunks (None: keyword-only); fewer
    # while the vector backfill runs.
    vectors: VectorProgress | None = None
    # The index's vectors are of another model than the configured one (a changed model, a
    # runtime fallback), until they are re-embedded; None when they are the configured model's.
    reembedding: Reembedding | None = None
    vector_index: VectorIndexState | None = None  # the vector leg's engine and index file
    indexing: IndexingProgress | None = None  # a first index under way (or interrupted)
    # A live process watching this index (`watch`, `serve`, `mcp`) and its last word: a CLI
    # search skips its scan of the files while that word is "every change indexed".
    watcher: LeaseHolder | None = None
