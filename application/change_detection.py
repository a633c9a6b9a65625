"""Application: compare what the sources hold with what the index holds, as events.

Change detection is stat-first, so a no-op sync of a large workspace stays cheap: a file whose
mtime and size match its `files` row is not read at all; a moved stat yields FileChanged, and
the handler compares content hashes before embedding anything. A moved stat over the indexed
size is hashed here too, so the report counts a file whose bytes did not change (a copied
workspace, a touch) as unchanged, not as nothing. Transcripts that merely grew are
held back until they pass the deltaBytes / deltaMessages thresholds (counting parsed messages,
not newline bytes, so the threshold means what its name says), unless the caller asks for
everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memlane.application.issues import FileVersion, IssueBoard
from memlane.application.ports.clock import Clock
from memlane.application.ports.file_source import FileSource, SourceError
from memlane.application.ports.index_store import IndexedFile, IndexStore
from memlane.domain import events
from memlane.domain.config import SessionSyncSettings
from memlane.domain.hashing import bytes_hash
from memlane.domain.sources import FileStat, Source
from memlane.domain.transcripts import count_messages, count_new_messages


@dataclass(frozen=True, slots=True)
class Detection:
    """Events to log, plus counts for the sync report."""

    events: list[events.Event] = field(default_factory=list)
    unchanged: int = 0
    held_back: int = 0
    on_disk: dict[Source, int] = field(default_factory=dict)


def _same_bytes(reader: FileSource, stat: FileStat, stored: IndexedFile) -> bool:
    """Whether a file whose stat moved still holds the bytes indexed. Only a file of the
    indexed size is read: another size is new content, and a no-op sync reads nothing."""
    if stat.size != stored.size:
        return False
    try:
        return bytes_hash(reader.read_bytes(stat.path)) == stored.hash
    except SourceError:
        return False  # its handler reads it again and reports the problem


class ChangeDetector:
    """Scans the sources and diffs them against the index's file table."""

    def __init__(
        self,
        *,
        sources: Mapping[Source, FileSource],
        store: IndexStore,
        issues: IssueBoard,
        clock: Clock,
        session_thresholds: SessionSyncSettings,
    ) -> None:
        self._sources = sources
        self._store = store
        self._issues = issues
        self._clock = clock
        self._thresholds = session_thresholds

    def detect(self, *, respect_thresholds: bool = False) -> Detection:
        """Return the events that bring the index in line with the sources."""
        found: list[events.Event] = []
        unchanged = held = 0
        on_disk: dict[Source, int] = {}
        for source, reader in self._sources.items():
            scan = reader.scan()
            self._issues.replace_scan_issues(source, scan.issues)
            # A problem of a file that is gone is gone too (an unindexed file has no row that
            # a FileDeleted could clear).
            self._issues.retain(source, {stat.path for stat in scan.files})
            on_disk[source] = len(scan.files)
            indexed = {f.path: f for f in self._store.files(source)}
            for stat in scan.files:
                stored = indexed.pop(stat.path, None)
                if stored is not None and (stored.mtime, stored.size) == (stat.mtime, stat.size):
                    unchanged += 1
                    continue
                version = FileVersion(mtime=stat.mtime, size=stat.size)
                if stored is None and self._issues.known_unreadable(source, stat.path, version):
                    # Binary, too large, unreadable: reading this version again would only
                    # log the same event and the same problem on every sync.
                    unchanged += 1
                    continue
                event = self._change(reader, stat, stored, respect_thresholds)
                if event is None:
                    held += 1
                    continue
                found.append(event)
                if stored is not None and _same_bytes(reader, stat, stored):
                    # A new stat over the indexed bytes (a copied or moved workspace, a touch):
                    # its handler only records the stat, so the report counts it unchanged.
                    unchanged += 1
            now = self._clock.now()
            found += [
                events.FileDeleted(occurred_at=now, source=source, path=path) for path in indexed
            ]
        return Detection(events=found, unchanged=unchanged, held_back=held, on_disk=on_disk)

    def _change(
        self,
        reader: FileSource,
        stat: FileStat,
        stored: IndexedFile | None,
        respect_thresholds: bool,
    ) -> events.Event | None:
        now = self._clock.now()
        if stat.source != "sessions" or stored is None:
            return events.FileChanged(
                occurred_at=now,
                source=stat.source,
                path=stat.path,
                mtime=stat.mtime,
                size=stat.size,
            )
        if stat.size < stored.size:
            return events.SessionGrew(
                occurred_at=now,
                path=stat.path,
                from_size=stored.size,
                to_size=stat.size,
                new_messages=0,
                rewritten=True,
            )
        if stat.size == stored.size:  # same length, new mtime: let the hash decide
            return events.FileChanged(
                occurred_at=now,
                source=stat.source,
                path=stat.path,
                mtime=stat.mtime,
                size=stat.size,
            )
        new_messages = self._new_messages(reader, stat.path, stored.size)
        if respect_thresholds and not self._past_thresholds(stat.size - stored.size, new_messages):
            return None
        return events.SessionGrew(
            occurred_at=now,
            path=stat.path,
            from_size=stored.size,
            to_size=stat.size,
            new_messages=new_messages,
        )

    def _new_messages(self, reader: FileSource, path: str, offset: int) -> int:
        """Messages the transcript gained past its indexed size `offset`. Only the tail is
        read (from the byte before it) unless the indexed version ended inside a line (a
        writer caught mid-append): that line's start lies before the tail, so the whole file
        is read to count it once complete."""
        try:
            if offset == 0:
                return count_messages(reader.read_bytes(path))
            tail = reader.read_bytes(path, offset - 1)
            if tail.startswith(b"\n"):
                return count_messages(tail[1:])
            return count_new_messages(reader.read_bytes(path), offset)
        except SourceError:
            return 0

    def _past_thresholds(self, delta_bytes: int, delta_messages: int) -> bool:
        limit_bytes = self._thresholds.delta_bytes
        limit_messages = self._thresholds.delta_messages
        by_bytes = delta_bytes > 0 if limit_bytes <= 0 else delta_bytes >= limit_bytes
        by_messages = (
            delta_messages > 0 if limit_messages <= 0 else delta_messages >= limit_messages
        )
        return by_bytes or by_messages
