"""Application: the vector backfill, embedding chunks that were committed without a vector.

Why chunks lack vectors: a rebuild (the first index of a workspace, a change of chunking or
scope, `--force`) commits every file's chunks and keyword rows without calling the provider, so
search answers from keywords within seconds, however large the history; a provider that was
down, a new model, or a provider configured after keyword-only indexing leave them too.

The work is derived, not logged: "chunks missing vectors of model M" is a query on the store
(`IndexStore.chunks_without_vectors`), so there is nothing to replay and nothing to lose. Each
batch is embedded through the embedding cache and committed in one transaction; a process
killed mid-batch loses that batch at most (texts the provider already answered are in the
cache), and the next run, in any process, starts from what is still missing: no committed
chunk is embedded twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import structlog

from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.handlers import embedding_fix, fallback_events
from memlane.application.indexing import backfill_batch, backfill_pieces_batch
from memlane.application.issues import IssueBoard
from memlane.application.ports.clock import Clock
from memlane.application.ports.embedding import (
    BATCH_JOB_ITEMS,
    BatchJobs,
    EmbeddingError,
    EmbeddingProvider,
)
from memlane.application.ports.index_store import IndexStore, VectorProgress
from memlane.application.progress import ProgressTracker
from memlane.domain import events
from memlane.domain.index_meta import IndexMeta, vector_label

log = structlog.get_logger()

# Chunks a background step embeds before a due sync may take the lock (32 long passages take
# ~16 s with the bundled model on two cores, well under a second with a remote provider).
BACKFILL_BATCH: Final = 32

# A step sends them to the provider, and commits them, in calls sized to take about this long,
# and asks between calls whether the process is stopping: a server or daemon told to stop
# waits for one such call, not for a whole batch of a slow local model (#27). What a call
# embedded is committed; the rest is still missing, and the next start embeds it.
STOP_LATENCY_S: Final = 2.0
FIRST_CALL: Final = 8  # chunks in a step's first call, before the provider's pace is known

# A search embeds missing vectors before answering only up to this many (a few seconds with a
# remote provider, ~30 s for long passages with the bundled model); beyond, it answers at once
# and leaves them to `memlane index`, `watch` or a server's background syncer.
SEARCH_BACKFILL_LIMIT: Final = 64


class VectorBackfill:
    """Gives the active provider's vectors to every chunk without one, batch by batch.

    Not thread-safe on its own: the SyncService calls it under its sync lock.
    """

    def __init__(
        self,
        *,
        store: IndexStore,
        runtime: EmbeddingRuntime,
        issues: IssueBoard,
        progress: ProgressTracker,
        wanted_meta: Callable[[], IndexMeta],
        clock: Clock,
        announce: Callable[[Sequence[events.Event]], object],
        use_cache: bool = True,
        batch: int = BACKFILL_BATCH,
        closing: Callable[[], bool] = lambda: False,
        pieces: bool = True,
    ) -> None:
        self._store = store
        self._runtime = runtime
        self._issues = issues
        self._progress = progress
        self._wanted_meta = wanted_meta
        self._clock = clock
        self._announce = announce  # appends facts to the event log (the bus's publish)
        self._use_cache = use_cache
        self._batch = batch
        self._call = min(FIRST_CALL, batch)  # chunks per provider call in a step (see `step`)
        self._closing = closing  # the process is stopping: no batch after the running one
        # Note chunks' piece vectors (domain/note_pieces.py) follow their own vectors; off when
        # the search does not use them (`query.pieceWeight` 0).
        self._pieces = pieces

    def progress(self) -> VectorProgress | None:
        """How far the vectors of the active model are; None without a usable provider."""
        provider = self._runtime.usable
        if provider is None:
            return None
        return self._store.vector_progress(vector_label(provider.model, provider.key))

    def index_progress(self) -> VectorProgress | None:
        """How far the vectors of the model the index records are, the numbers `status` shows;
        None for a keyword-only index or before the first index. Unlike `progress`, a provider
        cooling down after a failure still counts: its vectors are still owed."""
        meta = self._store.meta()
        if self._runtime.provider is None or meta is None or meta.dimensions is None:
            return None
        return self._store.vector_progress(vector_label(meta.model, meta.provider_key))

    def run(self, *, limit: int | None = None) -> int:
        """Backfill every missing vector, reporting progress; skipped (0) when more than
        `limit` are missing, ended after a batch once the process closes the store. Return how
        many chunks got a vector. The note chunks' piece vectors follow, by the same `limit`."""
        done = self._run_vectors(limit=limit)
        if self._pieces and not self._closing() and self._vectors_complete():
            self._run_pieces(limit=limit)
        return done

    def small_gap(self, limit: int) -> bool:
        """Whether something is missing, and at most `limit` chunks of it: vectors, or with
        every vector in, pieces (cheap when nothing changed: the store's walk remembers)."""
        gap = self.progress()
        if gap is None or gap.missing > limit:
            return False
        return not gap.complete or self.pieces_owed(limit)

    def pieces_owed(self, limit: int) -> bool:
        """Whether some note chunks, but at most `limit`, lack their piece vectors."""
        provider = self._runtime.usable
        if not self._pieces or provider is None:
            return False
        label = vector_label(provider.model, provider.key)
        return 0 < self._store.pieces_owed(label, limit + 1) <= limit

    def _vectors_complete(self) -> bool:
        """Pieces follow the chunks' own vectors, never hold them back: none while any chunk
        still lacks its vector (a deferred or interrupted backfill)."""
        progress = self.progress()
        return progress is not None and progress.complete

    def _run_pieces(self, *, limit: int | None) -> int:
        """Give every note chunk with a vector its piece vectors, batch by batch (skipped when
        more than `limit` chunks lack them); return how many chunks got them. A failure is
        recorded like a vector batch's and ends the run."""
        provider = self._runtime.usable
        if provider is None:
            return 0
        label = vector_label(provider.model, provider.key)
        if limit is not None and self._store.pieces_owed(label, limit + 1) > limit:
            log.info("piece_backfill_deferred", limit=limit)
            return 0
        done = 0
        seen: set[str] = set()
        try:
            while not self._closing():
                # Pieces are not chunks: the phase says what runs, the chunk count stays.
                chunks = backfill_pieces_batch(
                    self._store,
                    provider,
                    use_cache=self._use_cache,
                    batch=_run_batch(provider, self._batch),
                )
                if not chunks or chunks[0].id in seen:  # none left, or our writes are ignored
                    break
                if done == 0:
                    self._progress.set_phase("pieces")
                seen.update(c.id for c in chunks)
                done += len(chunks)
        except EmbeddingError as exc:
            self._failed(provider.id, exc)  # an issue `status` shows, until a later run ends well
            return done
        self._issues.clear("index", "(vectors)")
        if done:
            self._runtime.note_success()
            log.info("piece_backfill_done", chunks=done)
        return done

    def _run_vectors(self, *, limit: int | None) -> int:
        provider = self._runtime.usable  # a provider cooling down after a failure waits
        if provider is None:
            return 0
        before = self._store.vector_progress(vector_label(provider.model, provider.key))
        if before.complete:
            self._clear_file_failures(before)
            return 0
        if limit is not None and before.missing > limit:
            log.info("vector_backfill_deferred", missing=before.missing, total=before.total)
            return 0
        self._progress.set_phase("vectors")
        self._progress.vectors(before.done, before.total)
        done = 0
        try:
            while True:
                chunks = backfill_batch(
                    self._store,
                    provider,
                    use_cache=self._use_cache,
                    batch=_run_batch(provider, self._batch),
                    on_embedded=self._progress.embedded,
                )
                if not chunks:
                    break
                done += len(chunks)
                self._progress.vectors(before.done + done, before.total)
                if done > before.missing:  # the store ignores our writes: do not loop forever
                    log.error("vector_backfill_not_stored", done=done, missing=before.missing)
                    break
                if self._closing():
                    log.info("vector_backfill_stopped", done=done, missing=before.missing - done)
                    break
        except EmbeddingError as exc:
            if self._failed(provider.id, exc):
                return done + self.run(limit=limit)
            return done
        self._issues.clear("index", "(vectors)")
        self._clear_file_failures()
        if done:
            self._runtime.note_success()  # clears a provider failure kept with the index
        return done

    def step(self, stopping: Callable[[], bool] = lambda: False) -> int:
        """Embed and commit up to one batch; return how many chunks got a vector (0: none
        missing, no usable provider, or the provider failed, which the issues and the runtime
        say). The batch goes in calls of about STOP_LATENCY_S each, committed one by one; once
        `stopping()` says so, the step ends after the call that runs."""
        provider = self._runtime.usable
        if provider is None:
            return 0
        done = 0
        try:
            while done < self._batch and not (stopping() or self._closing()):
                size = min(self._call, self._batch - done)
                started = self._clock.monotonic()
                chunks = backfill_batch(
                    self._store, provider, use_cache=self._use_cache, batch=size
                )
                done += len(chunks)
                if len(chunks) < size:
                    break  # none left
                self._call = self._pace(size, self._clock.monotonic() - started)
        except EmbeddingError as exc:
            self._failed(provider.id, exc)
            self._issues.persist()
            return done
        if done == 0 and self._pieces and not (stopping() or self._closing()):
            done += self._pieces_step(provider)
        if done:
            self._runtime.note_success()
        self._issues.clear("index", "(vectors)")
        self._clear_file_failures()
        self._issues.persist()  # writes only when a failure was recorded before
        return done

    def _clear_file_failures(self, progress: VectorProgress | None = None) -> None:
        """Take the files' embedding failures off the board once every chunk has a vector of
        the active model (each file's chunks then have theirs); counted only while some file
        has one. The board is persisted by the caller (the sync, `step`)."""
        if not self._issues.has_embedding_failures():
            return
        progress = progress or self.progress()
        if progress is not None and progress.complete:
            self._issues.clear_embedding_failures()

    def _pieces_step(self, provider: EmbeddingProvider) -> int:
        """One call's worth of note chunks' piece vectors, once no chunk lacks its own."""
        try:
            chunks = backfill_pieces_batch(
                self._store, provider, use_cache=self._use_cache, batch=self._call
            )
        except EmbeddingError as exc:
            self._failed(provider.id, exc)
            return 0
        if chunks:
            self._runtime.note_success()
        return len(chunks)

    def _pace(self, size: int, elapsed: float) -> int:
        """The chunks of the next call: as many as the last call's pace does in
        STOP_LATENCY_S, between one and a whole batch (a remote provider: the whole batch), at
        most twice the last (a call answered from the embedding cache is no pace to trust)."""
        fitting = self._batch if elapsed <= 0 else int(size * STOP_LATENCY_S / elapsed)
        return max(1, min(self._batch, 2 * size, fitting))

    def _failed(self, provider_id: str, exc: EmbeddingError) -> bool:
        """Record a failed batch (issue, cool-down); return whether the runtime fell back to
        another provider, whose label the meta then records (the caller backfills for it)."""
        log.warning("vector_backfill_failed", provider=provider_id, error=str(exc))
        self._runtime.note_failure(exc)
        fix = embedding_fix(exc)  # a refused key or request: said what to fix, not "retry"
        reason = (
            f"embedding failed, will retry: {exc}"
            if fix is None
            else f"embedding failed: {exc}; {fix}"
        )
        self._issues.report("index", "(vectors)", reason)
        selection = self._runtime.fall_back(exc)
        if selection is None:
            return False
        self._store.set_meta(self._wanted_meta())
        self._announce(fallback_events(self._clock, selection))
        return True


def _run_batch(provider: EmbeddingProvider, batch: int) -> int:
    """Chunks per commit of a full run: `batch`, or a whole batch job's worth when the provider
    sends documents through a batch API (32 at a time made one job, minutes to hours, of each
    32 chunks: hundreds of jobs in a row for a large index)."""
    if isinstance(provider, BatchJobs) and provider.batch_active:
        return max(batch, BATCH_JOB_ITEMS)
    return batch
