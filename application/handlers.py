"""Application: the use cases that react to events (index a file, remove it, rebuild all).

Each handler is idempotent: running it twice on the same event leaves the same index. That is
what lets the message bus advance its tracking position after the handler's own commit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal

import structlog

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.indexing import FilePreparer, PreparedFile, write_prepared
from memlane.application.issues import (
    FileVersion,
    IssueBoard,
    embedding_problem,
    file_problems,
)
from memlane.application.messagebus import Handler, Routes
from memlane.application.ports.clock import Clock
from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingRejected,
    ProviderNotConfigured,
)
from memlane.application.ports.file_source import FileMissing, SourceError
from memlane.application.ports.index_store import IndexedFile, IndexStore, IndexWriter
from memlane.application.progress import ProgressTracker
from memlane.domain import events
from memlane.domain.index_meta import IndexMeta, reindex_reason
from memlane.domain.sources import FileStat, Source
from memlane.domain.text_decoding import NotText

log = structlog.get_logger()

_FileKey = tuple[Source, str]


class IndexFile:
    """On FileChanged / SessionGrew: re-read, re-chunk, embed through the cache, replace rows."""

    name: Final = "index_file"

    def __init__(
        self,
        *,
        preparer: FilePreparer,
        store: IndexStore,
        runtime: EmbeddingRuntime,
        issues: IssueBoard,
        clock: Clock,
        progress: ProgressTracker,
        wanted_meta: Callable[[], IndexMeta],
        use_cache: bool = True,
    ) -> None:
        self._preparer = preparer
        self._store = store
        self._runtime = runtime
        self._issues = issues
        self._clock = clock
        self._progress = progress
        self._wanted_meta = wanted_meta
        self._use_cache = use_cache

    def __call__(self, event: events.Event) -> Sequence[events.Event]:
        source, path = _target(event)
        started = self._clock.monotonic()
        try:
            prepared = self._preparer.prepare(source, path)
        except FileMissing:
            self._store.delete_file(source, path)
            self._issues.clear(source, path)
            return [events.FileRemoved(occurred_at=self._clock.now(), source=source, path=path)]
        except (SourceError, NotText) as exc:
            # With the version it was found in: change detection will not read it again.
            self._issues.report(source, path, _reason(exc), version=_version(event))
            return []
        finally:
            self._progress.file_done()
        stored = self._store.file(source, path)
        if stored is not None and stored.hash == prepared.file.hash:
            self._store.touch_file(prepared.file)
            return []
        return self._write(prepared, started)

    def _write(self, prepared: PreparedFile, started: float) -> list[events.Event]:
        source, path = prepared.file.source, prepared.file.path
        outcome = write_prepared(
            self._store,
            prepared,
            self._runtime.usable,  # None while a failed provider cools down: no wait per file
            use_cache=self._use_cache,
            on_embedded=self._progress.embedded,
        )
        follow_ups: list[events.Event] = []
        problems = list(prepared.problems)
        if outcome.embedding_error is None and outcome.embedded:
            self._runtime.note_success()  # the provider answers: a recorded failure is stale
        if outcome.embedding_error is not None:
            self._runtime.note_failure(outcome.embedding_error)
            selection = self._runtime.fall_back(outcome.embedding_error)
            if selection is not None:
                # The next files are embedded by the fallback: the index records its model
                # first, as the vector backfill does, or the store refuses its vectors (another
                # model, other dimensions) and the sync fails on a fallback meant to keep it up.
                self._store.set_meta(self._wanted_meta())
                follow_ups += fallback_events(self._clock, selection)
            fix = embedding_fix(outcome.embedding_error)
            problems.append(embedding_problem(outcome.embedding_error, fix))
        if problems:
            self._issues.report(source, path, file_problems(problems))
        else:
            self._issues.clear(source, path)
        indexed = events.FileIndexed(
            occurred_at=self._clock.now(),
            source=source,
            path=path,
            chunks=outcome.chunks,
            embedded=outcome.embedded,
            cached=outcome.cached,
            duration_ms=round((self._clock.monotonic() - started) * 1000, 2),
        )
        return [indexed, *follow_ups]


class RemoveFile:
    """On FileDeleted: remove the file's chunks, vectors and keyword rows."""

    name: Final = "remove_file"

    def __init__(self, *, store: IndexStore, issues: IssueBoard, clock: Clock) -> None:
        self._store = store
        self._issues = issues
        self._clock = clock

    def __call__(self, event: events.Event) -> Sequence[events.Event]:
        assert isinstance(event, events.FileDeleted)
        self._store.delete_file(event.source, event.path)
        self._issues.clear(event.source, event.path)
        return [
            events.FileRemoved(occurred_at=self._clock.now(), source=event.source, path=event.path)
        ]


class RebuildIndex:
    """On ReindexRequired: index every file again, keyword rows first.

    An existing index (a `--force`, a change of chunking, sources or scope) is rebuilt aside and
    swapped in atomically, so its readers never see a half-built index; any failure before the
    swap aborts the rebuild and the previous index stays in place. The first index of a store
    (no index meta yet: nothing to protect) is written straight into the live store instead,
    each file in its own transaction, so a search answers from the first files within seconds
    rather than after the whole history (minutes at 100k chunks) and says how far indexing is
    (`IndexStore.first_index`). The index meta, written last, marks it complete. A first index
    killed midway is completed by the next sync, which keeps the files already written
    (unchanged content hash) and removes any whose file is gone, so it ends as a clean build
    would; when the interrupted one built another shape, or rows exist without its record, the
    rebuild goes aside instead.

    Either way the index gets every chunk and keyword row, and the vectors the embedding cache
    already holds; the provider is not called (`defer`): embedding a large first index takes
    hours on a local model, and search should not wait for it. The sync's vector backfill embeds
    the rest in committed batches.

    Every configured source is included, whatever triggered the rebuild (a rebuild that dropped
    transcripts would silently lose them from search).
    """

    name: Final = "rebuild_index"

    def __init__(
        self,
        *,
        preparer: FilePreparer,
        sources: Sequence[Source],
        store: IndexStore,
        runtime: EmbeddingRuntime,
        issues: IssueBoard,
        clock: Clock,
        progress: ProgressTracker,
        wanted_meta: Callable[[], IndexMeta],
        use_cache: bool = True,
    ) -> None:
        self._preparer = preparer
        self._sources = sources
        self._store = store
        self._runtime = runtime
        self._issues = issues
        self._clock = clock
        self._progress = progress
        self._wanted_meta = wanted_meta
        self._use_cache = use_cache

    def __call__(self, event: events.Event) -> Sequence[events.Event]:
        assert isinstance(event, events.ReindexRequired)
        started = self._clock.monotonic()
        how, written = self._plan()
        counted = self._aside() if how == "aside" else None
        if how == "live":
            counted = self._first_index(written)
        if counted is None:
            # Another process writes the first index now; doing it twice gains nothing.
            log.info("first_index_running_elsewhere")
            return []
        files, chunks = counted
        return [
            events.IndexRebuilt(
                occurred_at=self._clock.now(),
                reason=event.reason,
                files=files,
                chunks=chunks,
                duration_ms=round((self._clock.monotonic() - started) * 1000, 2),
            )
        ]

    def _plan(self) -> tuple[Literal["aside", "live", "elsewhere"], dict[_FileKey, IndexedFile]]:
        """How to build: aside (an index exists, or rows of an unknown build are there),
        elsewhere (another process writes the first index now), or live, straight into the
        store, given the files a killed first index already wrote."""
        if self._store.meta() is not None:
            return "aside", {}
        state = self._store.first_index()
        if state is not None and state.running_elsewhere:
            return "elsewhere", {}
        written = {(f.source, f.path): f for f in self._store.files()}
        if written and (
            state is None or reindex_reason(state.meta, self._wanted_meta()) is not None
        ):
            return "aside", {}  # rows of another build: a clean one replaces them all
        return "live", written

    def _aside(self) -> tuple[int, int]:
        """Rebuild into a temporary index and swap it in; return (files, chunks)."""
        rebuild = self._store.begin_rebuild()
        try:
            counted = self._fill(rebuild, self._listing())
            rebuild.set_meta(self._wanted_meta())
            rebuild.commit()
        except BaseException:
            rebuild.abort()
            raise
        return counted

    def _first_index(self, written: Mapping[_FileKey, IndexedFile]) -> tuple[int, int] | None:
        """Write every file into the live store, one transaction each, then the meta; None
        when another process claimed the first index first."""
        listing = self._listing()
        if not self._store.claim_first_index(self._wanted_meta(), len(listing)):
            return None
        counted = self._fill(self._store, listing, written)
        listed = {(source, stat.path) for source, stat in listing}
        for key in sorted(written.keys() - listed):  # written by a killed run, gone since
            self._store.delete_file(*key)
        self._store.set_meta(self._wanted_meta())
        return counted

    def _listing(self) -> list[tuple[Source, FileStat]]:
        listing: list[tuple[Source, FileStat]] = []
        for source in self._sources:
            scan = self._preparer.source(source).scan()
            self._issues.replace_scan_issues(source, scan.issues)
            listing += [(source, stat) for stat in scan.files]
        return listing

    def _fill(
        self,
        writer: IndexWriter,
        listing: Sequence[tuple[Source, FileStat]],
        written: Mapping[_FileKey, IndexedFile] | None = None,
    ) -> tuple[int, int]:
        """Index every listed file into `writer` (cached vectors only), skipping those `written`
        with the same content; return (files, chunks)."""
        self._progress.set_phase("rebuild", total=len(listing))
        provider = self._runtime.usable
        files = chunks = 0
        for source, stat in listing:
            try:
                prepared = self._preparer.prepare(source, stat.path, stat)
            except (SourceError, NotText) as exc:
                version = FileVersion(mtime=stat.mtime, size=stat.size)
                self._issues.report(source, stat.path, _reason(exc), version=version)
                if written and (source, stat.path) in written:  # a killed run indexed it
                    self._store.delete_file(source, stat.path)
                self._progress.file_done()
                continue
            kept = written.get((source, stat.path)) if written else None
            if kept is not None and kept.hash == prepared.file.hash:
                if kept != prepared.file:
                    self._store.touch_file(prepared.file)
                chunks += len(prepared.chunks)
            else:
                outcome = write_prepared(
                    writer, prepared, provider, use_cache=self._use_cache, defer=True
                )
                chunks += outcome.chunks
            if prepared.problems:
                self._issues.report(source, stat.path, "; ".join(prepared.problems))
            else:
                self._issues.clear(source, stat.path)
            files += 1
            self._progress.file_done()
        return files, chunks


def embedding_fix(error: EmbeddingError) -> str | None:
    """What to fix when retrying cannot help (a refused key or request, a provider that cannot
    run here; the error names the key to check), None for a failure a later try may get past."""
    then = "then run `memlane index`"
    if isinstance(error, ProviderNotConfigured):
        return f"retrying cannot fix this; set the provider up as said (or choose another), {then}"
    if isinstance(error, EmbeddingRejected):
        return f"retrying cannot fix this; fix the key, quota, model or endpoint it names, {then}"
    return None


def fallback_events(clock: Clock, selection: Selection) -> list[events.Event]:
    """Record the switch; the next sync re-embeds with the new provider (no full rebuild)."""
    to = selection.provider.id if selection.provider is not None else "none"
    return [
        events.ProviderFellBack(
            occurred_at=clock.now(),
            from_provider=selection.fallback_from or "unknown",
            to_provider=to,
            reason=selection.fallback_reason or "",
        )
    ]


def _target(event: events.Event) -> tuple[Source, str]:
    if isinstance(event, events.FileChanged):
        return event.source, event.path
    if isinstance(event, events.SessionGrew):
        return "sessions", event.path
    msg = f"index_file cannot handle {type(event).__name__}"
    raise TypeError(msg)


def _version(event: events.Event) -> FileVersion | None:
    """The stat a change event saw (a grown transcript carries no mtime: always read again)."""
    if isinstance(event, events.FileChanged):
        return FileVersion(mtime=event.mtime, size=event.size)
    return None


def _reason(exc: Exception) -> str:
    if isinstance(exc, SourceError):
        return exc.reason
    return str(exc)


def build_routes(
    *, index_file: IndexFile, remove_file: RemoveFile, rebuild_index: RebuildIndex
) -> Routes:
    """Route each event type to its handlers; follow-up facts are logged but not routed."""
    index: tuple[Handler, ...] = (index_file,)
    remove: tuple[Handler, ...] = (remove_file,)
    rebuild: tuple[Handler, ...] = (rebuild_index,)
    return {
        events.FileChanged: index,
        events.SessionGrew: index,
        events.FileDeleted: remove,
        events.ReindexRequired: rebuild,
    }
