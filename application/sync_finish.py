"""Application: what a sync leaves behind when it ends: its record for `status` in any process,
the cache kept to its cap, the event log compacted, one log line. Split from the sync use case
(sync.py), which decides and runs the sync.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import structlog

from memlane.application.ports.event_log import EventLog
from memlane.application.ports.index_store import IndexStore, SyncRecord
from memlane.application.reports import SyncReport
from memlane.domain.config import CacheSettings

log = structlog.get_logger()

# The log keeps this many events after a sync; older ones are done with and only cost space.
EVENT_LOG_KEEP: Final = 5000


def record_finished(
    store: IndexStore, report: SyncReport, finished_at: str, *, changed: bool
) -> None:
    """Keep the last sync's facts for `status` in any process, and log its end.

    A sync that changed the index records itself. One that changed nothing only keeps the
    recorded count of held-back transcripts current, written only when it moved: the record's
    other facts stay those of the last sync that changed the index.
    """
    if changed:
        store.record_sync(
            SyncRecord(
                finished_at=finished_at,
                reason=report.reason,
                full_reindex=report.full_reindex,
                files_indexed=report.files_indexed,
                files_removed=report.files_removed,
                files_held_back=report.files_held_back,
            )
        )
    else:
        last = store.last_sync()
        if last is not None and last.files_held_back != report.files_held_back:
            store.record_sync(replace(last, files_held_back=report.files_held_back))
    log.info(
        "sync_finished",
        reason=report.reason,
        full_reindex=report.full_reindex,
        files_indexed=report.files_indexed,
        files_removed=report.files_removed,
        chunks_embedded=report.chunks_embedded,
        duration_ms=report.duration_ms,
    )


def tidy_after_sync(
    store: IndexStore, event_log: EventLog, cache: CacheSettings, *, handled: int
) -> None:
    """Keep the embedding cache to its cap and compact the log; each write only when there is
    something to do (a read-only index must still sync, and a sync that handled nothing left
    the log as it was)."""
    if cache.enabled and cache.max_entries is not None and store.cache_size() > cache.max_entries:
        store.cache_prune(cache.max_entries)
    if handled:
        event_log.compact(keep_last=EVENT_LOG_KEEP)
