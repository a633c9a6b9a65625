"""Entry points, the key table's sync section (`memorySearch.sync.*`): when the index is
brought up to date (session start, search, watching, a period), the transcript thresholds and
the guard against mass deletes.

Its own module so the rows of when indexing runs sit together, apart from what it stores.
"""

from __future__ import annotations

from typing import Final

from memlane.entrypoints.config.key_table.row import BOOL, INT, MAX_SAFE_INT, NUM, Key

SYNC_KEYS: Final[tuple[Key, ...]] = (
    Key("sync.onSessionStart", BOOL, "Sync when a session starts.", "sync.on_session_start"),
    Key(
        "sync.onSearch",
        BOOL,
        "Sync before searching (the CLI scans the files; servers sync when marked dirty).",
        "sync.on_search",
    ),
    Key("sync.watch", BOOL, "Watch the files and sync on change.", "sync.watch"),
    Key(
        "sync.watchDebounceMs",
        INT,
        "Quiet time before a watched change syncs.",
        "sync.watch_debounce_ms",
        low=0,
        high=3_600_000,
    ),
    Key(
        "sync.intervalMinutes",
        INT,
        "Periodic sync; 0 is off.",
        "sync.interval_minutes",
        low=0,
        high=525_600,
    ),
    Key(
        "sync.firstSearchWaitMs",
        INT,
        "How long the first search on a new index waits for the first sync.",
        "sync.first_search_wait_ms",
        low=0,
        high=600_000,
    ),
    Key(
        "sync.maxDeletePercent",
        NUM,
        "A sync that would remove more than this percent of one source's indexed files (two "
        "or more) stops and asks for `memlane index --allow-mass-delete` (a wrong or unmounted "
        "workspace); 100 turns the guard off.",
        "sync.max_delete_percent",
        low=0,
        high=100,
    ),
    Key(
        "sync.sessions.deltaBytes",
        INT,
        "Transcript growth in bytes that triggers a sync.",
        "sync.sessions.delta_bytes",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "sync.sessions.deltaMessages",
        INT,
        "Transcript growth in messages that triggers a sync.",
        "sync.sessions.delta_messages",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "sync.sessions.postCompactionForce",
        BOOL,
        "Accepted and ignored.",
        fixed_default=True,
        ignored="a rewritten (compacted) transcript is always reindexed: only growth waits for "
        "the delta thresholds",
    ),
    Key(
        "sync.embeddingBatchTimeoutSeconds",
        NUM,
        "The reference's name for `remote.timeoutSeconds` (which wins when both are set).",
        low=1,
        high=3600,
    ),
)
