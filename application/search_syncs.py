"""Application: the syncs a search asks for before it reads the index: the very first one
(waited for a bounded time), a new session's, a dirty index's (handed to the background syncer).
"""

from __future__ import annotations

import threading

import structlog

from memlane.application.ports.index_store import IndexStore
from memlane.application.scheduler import BackgroundSyncer
from memlane.application.sync import SyncService
from memlane.application.sync_failures import SyncVerdicts
from memlane.application.sync_trigger import SyncTrigger
from memlane.application.vector_backfill import SEARCH_BACKFILL_LIMIT
from memlane.domain.config import SyncSettings

log = structlog.get_logger()


# The warning of a search that read an index its first sync is still building (the MCP server,
# which starts that sync itself, says the same words, once).
FIRST_SYNC_RUNNING = (
    "the index is still being built (first sync running); results may be incomplete, "
    "search again shortly"
)


class SearchSyncPolicy:
    """The syncs a search asks for: the very first one, a new session's, a dirty index's."""

    def __init__(
        self,
        *,
        settings: SyncSettings,
        store: IndexStore,
        syncing: SyncService,
        background: BackgroundSyncer,
        verdicts: SyncVerdicts,
    ) -> None:
        self._settings = settings
        self._verdicts = verdicts
        self._store = store
        self._syncing = syncing
        self._background = background
        self._warm_sessions: set[str] = set()

    def before_search(self, session_key: str | None) -> str | None:
        """Trigger what the settings ask for before a search reads the index; return a warning
        when the search will read an index the first sync has not finished (or failed) to build.
        """
        if self._store.meta() is None:
            return self._wait_for_first_sync(self._settings.first_search_wait_ms / 1000)
        if (
            self._settings.on_session_start
            and session_key
            and session_key not in self._warm_sessions
        ):
            self._warm_sessions.add(session_key)
            self._background.request(SyncTrigger.SESSION_START)
        elif self._settings.on_search and self._syncing.dirty:
            self._background.request(SyncTrigger.SEARCH)
        return None

    def _wait_for_first_sync(self, timeout: float) -> str | None:
        """Run the first sync, waiting at most `timeout` seconds for it before searching; a
        warning for the response when it failed or is still running (results incomplete)."""
        done = threading.Event()
        failure: list[str] = []

        def run() -> None:
            try:
                self._verdicts.run(
                    SyncTrigger.FIRST_SEARCH,
                    lambda: self._syncing.run_unless_read_only(
                        SyncTrigger.FIRST_SEARCH,
                        backfill_limit=SEARCH_BACKFILL_LIMIT,
                        wait_for_host=False,  # another host's first index: answer what it has
                    ),
                )
            except Exception as exc:
                log.exception("first_sync_failed")
                failure.append((str(exc).strip().splitlines() or [type(exc).__name__])[0])
            finally:
                done.set()

        threading.Thread(target=run, name="memlane-first-sync", daemon=True).start()
        if not done.wait(timeout):
            log.warning("first_sync_still_running", waited_s=timeout)
            return FIRST_SYNC_RUNNING
        if failure:
            return f"the first sync failed ({failure[0]}): results may be incomplete"
        return None
