"""Entry points: the composition root (with `application.py`), the only package that names
concrete adapters."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memlane.adapters.clock import SystemClock
from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.jsonl_sessions import JsonlSessionSource
from memlane.adapters.sources.note_writer import FilesystemNoteWriter
from memlane.adapters.store.quarantine import move_aside
from memlane.application.memory import MemoryManager
from memlane.application.ports.event_log import EventLog
from memlane.application.ports.file_source import ChangeWatcher, FileSource
from memlane.application.ports.index_store import IndexStore
from memlane.application.ports.index_transfer import IndexTransfer
from memlane.application.ports.note_writer import NoteWriter
from memlane.application.ports.sync_lock import SyncLock
from memlane.application.reports import RecoveryStats
from memlane.application.writing import WriteNote
from memlane.domain.config import MemorySettings
from memlane.domain.redaction import Redactor
from memlane.domain.sources import Source
from memlane.entrypoints.config.runtime import RuntimeConfig, progress_every_seconds
from memlane.entrypoints.container.agents import StoreAgentIndexes
from memlane.entrypoints.container.application import Application
from memlane.entrypoints.container.di import containers, providers
from memlane.entrypoints.container.embedding import HTTP_PROVIDERS as HTTP_PROVIDERS
from memlane.entrypoints.container.embedding import _meta_reader, make_runtime, provider_factories
from memlane.entrypoints.container.embedding import http_provider_class as http_provider_class
from memlane.entrypoints.container.lease import change_journal, lease_scope, watch_lease_for
from memlane.entrypoints.container.stores import family_of, family_of_target

if TYPE_CHECKING:
    from memlane.entrypoints.container.stores import StoreDatabase

# What a search with the bundled model on the SQLite store does not need is imported when it is
# used: the HTTP providers (`embedding`), the PostgreSQL adapters and watchdog. A fresh
# `memlane search` process imported them all before its first line of work (measured in
# bench/RESULTS.md, "A million chunks", the CLI cold start).


def scope_hash(settings: MemorySettings, workspace: Path) -> str:
    """Fingerprint of the index's scope beyond its sources and chunking (recorded separately):
    the extra paths as the index names them, relative to the workspace. A change rebuilds.

    Nothing host-local goes in: hosts sharing one agent's index in PostgreSQL may keep its
    workspace, state and transcripts at different absolute paths and must not rebuild each
    other's index. The transcripts folder is not part of it either: transcripts are indexed as
    `sessions/<name>`, so another folder only changes which files change detection finds.
    """
    source = FilesystemMemorySource(workspace=str(workspace), extra_paths=settings.extra_paths)
    scope: dict[str, object] = {
        "scope": 2,
        "extraPaths": sorted(set(source.indexed_extra_roots)),
    }
    # What is masked is recorded apart (IndexMeta.redaction, domain/redaction_scope.py), with
    # the built-in catalogue, and rebuilds as `redaction_changed`.
    return hashlib.sha256(json.dumps(scope).encode()).hexdigest()


def legacy_scope_hash(settings: MemorySettings, workspace: Path, sessions_dir: Path) -> str:
    """The fingerprint's first form (absolute extra paths and transcripts folder), so an index
    that recorded it on this host is kept rather than rebuilt once after the upgrade."""
    extras = sorted(str((workspace / p).resolve()) for p in settings.extra_paths)
    payload = json.dumps({"extraPaths": extras, "sessions": str(sessions_dir)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def recorded_workspace(rc: RuntimeConfig, env: Mapping[str, str]) -> tuple[str | None, str]:
    """(the workspace the agent's index recorded for this installation, None for no index or
    none recorded; the index's name for messages).

    Read without migrating or creating anything, before the application is built: which
    workspace it serves depends on it (application/workspace.py). On PostgreSQL each
    installation (host and state dir) keeps its own record; one without (an index from before
    records were kept per installation), started with no workspace named, takes the one the
    index names if that folder exists here rather than the current directory.

    Raises:
        StoreError: the store exists and cannot be read (StoreCorrupt when damaged).
    """
    return family_of(rc).recorded_workspace(rc, env)


def move_damaged_index(store_path: Path) -> Path:
    """Move a damaged index file (with its -wal/-shm) aside, named by the UTC time; return
    where it went."""
    return move_aside(store_path, SystemClock().now().strftime("%Y%m%dT%H%M%SZ"))


def _available_sources(memory: FileSource, sessions: FileSource) -> dict[Source, FileSource]:
    return {"memory": memory, "sessions": sessions}


def _redactor(settings: MemorySettings) -> Callable[[str], str] | None:
    if not settings.redaction.enabled:
        return None
    return Redactor(settings.redaction.extra_patterns).redact


def _recovery(store: IndexStore) -> Callable[[], RecoveryStats] | None:
    """Read-only recovery counters of the SQLite store (a fake store has none)."""
    stats: Callable[[], RecoveryStats] | None = getattr(store, "recovery_stats", None)
    return stats


def open_database(
    rc: RuntimeConfig, env: Mapping[str, str], stand_in: StoreDatabase | None = None
) -> StoreDatabase:
    """The database `store.driver` names: the agent's SQLite file, or the shared PostgreSQL
    (`stand_in`, when given: see `stand_in_for`)."""
    return family_of(rc).open(rc, env) if stand_in is None else stand_in


def stand_in_for(rc: RuntimeConfig) -> StoreDatabase | None:
    """An empty index in place of the agent's store when that does not exist (None when it
    does), for a command that only reads: it must not create the agent's file or folder.
    A Container given it (`Container(stand_in=...)`) serves it; the manager's close removes it."""
    return family_of(rc).stand_in(rc)


def index_store_for(rc: RuntimeConfig, db: StoreDatabase) -> IndexStore:
    """The IndexStore of the agent in `db`."""
    return family_of(rc).index_store(rc, db)


def event_log_for(rc: RuntimeConfig, db: StoreDatabase) -> EventLog:
    """The EventLog of the agent in `db`."""
    return family_of(rc).event_log(db, rc.agent_id)


def sync_lock_for(rc: RuntimeConfig, database: Callable[[], StoreDatabase]) -> SyncLock | None:
    """The cross-host sync lock of a shared store (a SQLite file needs none, and is not opened
    here: `database` is only called when the family has a lock)."""
    family = family_of(rc)
    return family.sync_lock(database(), rc.agent_id) if family.needs_sync_lock() else None


def stored_agents(rc: RuntimeConfig, env: Mapping[str, str]) -> list[str]:
    """The agents the configured store holds (`store copy --all-agents`)."""
    return family_of(rc).agents(rc, env)


def configured_transfer(rc: RuntimeConfig, env: Mapping[str, str], agent: str) -> IndexTransfer:
    """Bulk access to `agent`'s index in the configured store (the copy's source)."""
    return family_of(rc).transfer(rc, env, agent)


def target_holds_index(target: str, agent: str) -> bool:
    """Whether `target` (as `target_transfer` reads it) already holds an index of `agent`;
    a SQLite file that does not exist is not created to find out."""
    if family_of_target(target).name == "sqlite":
        path = Path(target.removeprefix("sqlite:")).expanduser() / "agents" / agent / "memory.db"
        if not path.is_file():
            return False
    transfer = target_transfer(target, agent)
    try:
        counts = transfer.counts()
    finally:
        transfer.close()
    return bool(counts.files or counts.chunks or counts.events)


def target_transfer(target: str, agent: str, rc: RuntimeConfig | None = None) -> IndexTransfer:
    """Bulk access to `agent`'s index at `target`: a PostgreSQL URL, or a SQLite state dir
    (`sqlite:DIR` or DIR; the index goes to DIR/agents/<agent>/memory.db). On PostgreSQL the
    workspace is recorded for the installation `rc` configures (this one copies)."""
    return family_of_target(target).target_transfer(target, agent, rc)


def note_writer(workspace: str, extra_paths: Sequence[str] = ()) -> NoteWriter:
    """The NoteWriter for one workspace (reads and writes share the extra-path roots)."""
    return FilesystemNoteWriter(
        workspace=workspace,
        allowed_roots=[str(Path(workspace) / Path(p.strip()).expanduser()) for p in extra_paths],
    )


def note_writing(manager: MemoryManager) -> WriteNote:
    """The `memory_write` use case for a live manager: its workspace, the real clock, its sync.

    What it writes is redacted with the catalogue and the configured extra patterns, even when
    `redaction.enabled` is false (that key is about indexing); only the tool's `redact: false`
    writes a text as given."""
    return WriteNote(
        writer=note_writer(manager.workspace, manager.settings.extra_paths),
        clock=SystemClock(),
        refresh=manager.sync_written,
        redact=Redactor(manager.settings.redaction.extra_patterns).redaction,
    )


def memory_listing(manager: MemoryManager) -> Callable[[], list[str]]:
    """List the workspace's memory notes (MEMORY.md, memory/**) as indexed paths, sorted."""
    source = FilesystemMemorySource(workspace=manager.workspace)
    return lambda: [f.path for f in source.scan().files]


class _WatchdogOnStart:
    """The watchdog ChangeWatcher, imported and built when a watch starts: every manager gets
    a watcher, but a CLI search or `index` never starts one."""

    def __init__(self) -> None:
        self._watcher: ChangeWatcher | None = None

    def start(self, roots: Sequence[str], on_change: Callable[[Sequence[str]], None]) -> None:
        from memlane.adapters.sources.watcher import WatchdogChangeWatcher

        if self._watcher is None:
            self._watcher = WatchdogChangeWatcher()
        self._watcher.start(roots, on_change)

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()


class Container(containers.DeclarativeContainer):
    """Wires one agent's adapters from a resolved RuntimeConfig and the environment, and the
    `Application` over them; `manager` is the facade entry points use."""

    runtime_config = providers.Dependency(instance_of=RuntimeConfig)
    env = providers.Dependency(instance_of=dict)

    settings = providers.Callable(lambda rc: rc.settings, runtime_config)
    clock = providers.Singleton(SystemClock)
    # A command that only reads an agent with no store gets an empty stand-in (stand_in_for).
    stand_in: providers.Object[StoreDatabase | None] = providers.Object(None)
    database = providers.Singleton(open_database, runtime_config, env, stand_in)
    index_store = providers.Singleton(index_store_for, runtime_config, database)
    event_log = providers.Singleton(event_log_for, runtime_config, database)
    memory_source = providers.Singleton(
        lambda rc: FilesystemMemorySource(
            workspace=str(rc.workspace), extra_paths=rc.settings.extra_paths
        ),
        runtime_config,
    )
    session_source = providers.Singleton(
        lambda rc: JsonlSessionSource(
            sessions_dir=str(rc.sessions_dir), configured=bool(rc.settings.sessions_dir)
        ),
        runtime_config,
    )
    watcher = providers.Factory(_WatchdogOnStart)  # the scheduler debounces its reports
    # The store is opened only when the local model is built (it reads the recorded kernel).
    embedder_factories = providers.Singleton(
        provider_factories, settings, env, providers.Callable(_meta_reader, index_store.provider)
    )
    embedding_runtime = providers.Singleton(make_runtime, settings, embedder_factories, clock, env)
    sources = providers.Callable(_available_sources, memory_source, session_source)
    application = providers.Container(
        Application,
        agent_id=providers.Callable(lambda rc: rc.agent_id, runtime_config),
        workspace=providers.Callable(lambda rc: str(rc.workspace), runtime_config),
        settings=settings,
        scope_hash=providers.Callable(
            lambda rc: scope_hash(rc.settings, rc.workspace), runtime_config
        ),
        legacy_scope_hash=providers.Callable(
            lambda rc: legacy_scope_hash(rc.settings, rc.workspace, rc.sessions_dir),
            runtime_config,
        ),
        store=index_store,
        event_log=event_log,
        available_sources=sources,
        runtime=embedding_runtime,
        clock=clock,
        watcher=watcher,
        lease=providers.Singleton(watch_lease_for, runtime_config),
        journal=providers.Object(change_journal),
        lease_scope=providers.Callable(
            lease_scope,
            runtime_config,
            env,
            providers.Callable(lambda rc: scope_hash(rc.settings, rc.workspace), runtime_config),
        ),
        redact=providers.Callable(_redactor, settings),
        recovery_stats=providers.Callable(_recovery, index_store),
        host_lock=providers.Callable(sync_lock_for, runtime_config, database.provider),
        progress_log_seconds=providers.Callable(progress_every_seconds, env),
        others=providers.Singleton(StoreAgentIndexes, runtime_config, env),
    )
    manager = application.manager
