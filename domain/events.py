"""Domain: events, the past-tense facts appended to the durable log before anything reacts.

Every event carries `occurred_at`, the time the Clock port gave when it was created; the domain
never reads a clock itself. `EVENT_TYPES` maps each stable type name (stored in the log) to its
class; `event_to_record` / `event_from_record` turn events into JSON-ready dicts and back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Final, Literal, TypeAlias

from memlane.domain.sources import Source

JsonScalar: TypeAlias = str | int | float | bool | None
ReindexReason: TypeAlias = Literal[
    "no_index",
    "user_requested",
    "provider_changed",
    "model_changed",
    "dimensions_changed",
    "sources_changed",
    "scope_changed",
    "chunking_changed",
    "schema_changed",
    "provider_fallback",
    "redaction_changed",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of all events."""

    occurred_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChanged(Event):
    """A memory file or transcript is new or its content changed since it was indexed."""

    source: Source
    path: str
    mtime: float
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FileDeleted(Event):
    """An indexed file no longer exists (or left the configured scope)."""

    source: Source
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionGrew(Event):
    """A transcript grew past the deltaBytes / deltaMessages thresholds (or was rewritten)."""

    path: str
    from_size: int
    to_size: int
    new_messages: int
    rewritten: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ReindexRequired(Event):
    """The whole index must be rebuilt (safely, into a temporary database) for `reason`."""

    reason: ReindexReason
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileIndexed(Event):
    """Follow-up: a file's chunks were replaced (what a handler did, for `memlane events`)."""

    source: Source
    path: str
    chunks: int
    embedded: int
    cached: int
    duration_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRemoved(Event):
    """Follow-up: a deleted file's rows were removed from the index."""

    source: Source
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexRebuilt(Event):
    """Follow-up: a full reindex finished and was swapped in."""

    reason: ReindexReason
    files: int
    chunks: int
    duration_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderFellBack(Event):
    """The configured embedding provider failed at run time; the fallback took over."""

    from_provider: str
    to_provider: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncFailed(Event):
    """A sync did not go through: what it could not do stays to do (`status` says why)."""

    trigger: str  # the SyncTrigger's name
    reasons: str  # one short line per reason, at most a few, joined by newlines


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncRecovered(Event):
    """A sync went through after a failed one: the failure no longer holds."""

    trigger: str


EVENT_TYPES: Final[Mapping[str, type[Event]]] = {
    "file_changed": FileChanged,
    "file_deleted": FileDeleted,
    "session_grew": SessionGrew,
    "reindex_required": ReindexRequired,
    "file_indexed": FileIndexed,
    "file_removed": FileRemoved,
    "index_rebuilt": IndexRebuilt,
    "provider_fell_back": ProviderFellBack,
    "sync_failed": SyncFailed,
    "sync_recovered": SyncRecovered,
}
EVENT_VERSION: Final = 1
_NAMES: Final[Mapping[type[Event], str]] = {cls: name for name, cls in EVENT_TYPES.items()}


def type_name(event: Event) -> str:
    """Return the stable type name stored in the log for `event`."""
    return _NAMES[type(event)]


def event_to_record(event: Event) -> dict[str, JsonScalar]:
    """Serialise an event's fields to JSON-ready values (datetimes as ISO 8601 strings)."""
    record: dict[str, JsonScalar] = {}
    for f in fields(event):
        value = getattr(event, f.name)
        record[f.name] = value.isoformat() if isinstance(value, datetime) else value
    return record


def event_from_record(name: str, record: Mapping[str, JsonScalar]) -> Event:
    """Rebuild an event from its type name and record; unknown fields are ignored.

    Raises KeyError for an unknown type name.
    """
    cls = EVENT_TYPES[name]
    kwargs: dict[str, object] = {}
    for f in fields(cls):
        if f.name not in record:
            continue
        value = record[f.name]
        if f.name == "occurred_at" and isinstance(value, str):
            kwargs[f.name] = datetime.fromisoformat(value)
        else:
            kwargs[f.name] = value
    # Field types are checked by the dataclass fields above; the record comes from our own log.
    return cls(**kwargs)  # type: ignore[arg-type]
