"""Application: what one sync did, counted from the events its handlers append, and the
report of a sync that was skipped (parts of `application/sync.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from memlane.application.ports.event_log import RecordedEvent
from memlane.application.ports.index_store import FirstIndexState
from memlane.application.reports import SyncReport
from memlane.application.sync_refusal import IndexFromNewerMemlane
from memlane.application.sync_trigger import SyncTrigger
from memlane.domain import events
from memlane.domain.index_meta import IndexMeta, built_by_newer
from memlane.domain.sources import SourceIssue


class SyncCounter:
    """Counts what handlers did during one sync (listens to follow-up events)."""

    def __init__(self) -> None:
        self.indexed = 0
        self.removed = 0
        self.rebuilt = False

    def __call__(self, record: RecordedEvent) -> None:
        if isinstance(record.event, events.FileIndexed):
            self.indexed += 1
        elif isinstance(record.event, events.FileRemoved):
            self.removed += 1
        elif isinstance(record.event, events.IndexRebuilt):
            # A rebuild's count replaces what incremental handlers counted before it.
            self.indexed = record.event.files
            self.rebuilt = True


def rebuild_due(reason: events.ReindexReason, stored: IndexMeta, wanted: IndexMeta) -> str:
    """What `status` says while the index was built in another shape than this memlane and
    configuration ask for: the next sync rebuilds it whole (an upgrade that chunks otherwise
    does; a search's sync would block on it), unless a newer memlane built it."""
    if reason in ("schema_changed", "chunking_changed") and (
        newer := built_by_newer(stored, wanted)
    ):
        return str(IndexFromNewerMemlane(newer))
    made_by = (
        f"an older memlane built it (index schema {stored.schema_version}, this one "
        f"{wanted.schema_version})"
        if reason == "schema_changed"
        else f"another memlane cut it into chunks (chunker {stored.chunker_version}, this one "
        f"{wanted.chunker_version})"
        if reason == "chunking_changed" and stored.chunker_version != wanted.chunker_version
        else {
            "chunking_changed": "the chunk sizes in the configuration changed",
            "sources_changed": "the sources in the configuration changed",
            "scope_changed": "the extra paths in the configuration changed",
            "redaction_changed": "the redaction settings changed",
        }.get(reason, reason.replace("_", " "))
    )
    return (
        f"the next sync rebuilds the whole index: {made_by}; chunks whose text is unchanged "
        "reuse their vectors from the embedding cache, the others are embedded again "
        "(`memlane index` does it now)"
    )


def skipped_report(
    trigger: SyncTrigger, first: FirstIndexState, issues: Sequence[SourceIssue]
) -> SyncReport:
    """The report of a sync not run because another process writes the first index."""
    return _nothing_done(
        trigger,
        issues,
        f"another process is building the first index ({first.text()}): this sync is "
        "skipped, searches answer from the files indexed so far",
    )


REBUILD_ELSEWHERE = (
    "another process is rebuilding the index (a forced or changed-shape reindex): this search "
    "answers from the index as it was until the rebuild is swapped in"
)


def rebuild_skipped_report(trigger: SyncTrigger, issues: Sequence[SourceIssue]) -> SyncReport:
    """The report of a sync not run because another process rebuilds the index aside."""
    return _nothing_done(trigger, issues, REBUILD_ELSEWHERE)


HOST_BUSY = (
    "another process is syncing this agent's index: this search did not wait for it and "
    "answers from the index as it is (changes that sync brings in are found by later searches)"
)


def host_busy_report(trigger: SyncTrigger, issues: Sequence[SourceIssue]) -> SyncReport:
    """The report of a search's sync not run because another process syncs the agent."""
    return _nothing_done(trigger, issues, HOST_BUSY)


def settings_elsewhere_report(
    trigger: SyncTrigger, issues: Sequence[SourceIssue], reason: str
) -> SyncReport:
    """The report of an automatic sync not run because another process rebuilt the index with
    other settings since this one last synced it."""
    return _nothing_done(trigger, issues, settings_elsewhere(reason))


def settings_elsewhere(reason: str) -> str:
    """What a process whose settings are no longer the index's says (`reason`: the rebuild's)."""
    return (
        f"another process rebuilt the index with other settings ({reason}) since this process "
        "synced it: this process does not rebuild it back; restart it to use the new settings"
    )


def _nothing_done(trigger: SyncTrigger, issues: Sequence[SourceIssue], why: str) -> SyncReport:
    return SyncReport(
        reason=trigger.value,
        full_reindex=False,
        files_indexed=0,
        files_removed=0,
        files_unchanged=0,
        chunks_embedded=0,
        vectors_backfilled=0,
        events_handled=0,
        duration_ms=0.0,
        issues=list(issues),
        warnings=(why,),
    )
