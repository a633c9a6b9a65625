"""Entry points: the `Application` container, the use cases of one agent wired over the ports
it is given (no adapter is named here: `container.Container` supplies them, tests pass fakes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memlane.application.agent_directory import AgentDirectory
from memlane.application.change_detection import ChangeDetector
from memlane.application.embedding_runtime import EmbeddingRuntime
from memlane.application.handlers import IndexFile, RebuildIndex, RemoveFile, build_routes
from memlane.application.indexing import FilePreparer
from memlane.application.issues import IssueBoard
from memlane.application.memory import MemoryManager
from memlane.application.messagebus import MessageBus
from memlane.application.ports.agent_indexes import AgentIndexes
from memlane.application.ports.change_journal import ChangeJournal
from memlane.application.ports.file_source import ChangeWatcher, FileSource
from memlane.application.ports.sync_lock import SyncLock
from memlane.application.ports.watch_lease import WatchLease
from memlane.application.progress import ProgressTracker
from memlane.application.provider_failures import ProviderFailureRecord
from memlane.application.queries import Searcher
from memlane.application.reading import Reading
from memlane.application.reporting import Reporting
from memlane.application.reports import RecoveryStats
from memlane.application.scheduler import BackgroundSyncer
from memlane.application.search_syncs import SearchSyncPolicy
from memlane.application.searching import Searching
from memlane.application.status import StatusReporter
from memlane.application.sync import SyncService
from memlane.application.sync_failures import SyncVerdicts
from memlane.application.upkeep import IndexUpkeep, IndexWatcher
from memlane.application.wanted_meta import WantedMeta
from memlane.domain.config import MemorySettings
from memlane.domain.sources import Source
from memlane.entrypoints.container.di import containers, providers


def _active_sources(
    available: Mapping[Source, FileSource], settings: MemorySettings
) -> dict[Source, FileSource]:
    """The configured sources, in the configured order."""
    return {s: available[s] for s in settings.sources if s in available}


def _recording_runtime(runtime: EmbeddingRuntime, board: IssueBoard) -> EmbeddingRuntime:
    """`runtime`, keeping its provider failures on the issue board (persisted with the index)."""
    runtime.keep_failures_in(ProviderFailureRecord(board))
    return runtime


def _preparer(
    sources: Mapping[Source, FileSource],
    settings: MemorySettings,
    redact: Callable[[str], str] | None,
) -> FilePreparer:
    return FilePreparer(
        sources,
        settings.chunking,
        redact,
        session_policy=settings.session_chunking,
        redact_notes=settings.redaction.notes,
    )


class Application(containers.DeclarativeContainer):
    """The use cases of one agent's memory, wired over the ports it is given.

    The ports (store, event log, sources, embedding runtime, clock, watcher) come from the
    outer `Container` in production and from fakes in the application tests.
    """

    agent_id = providers.Dependency(instance_of=str)
    workspace = providers.Dependency(instance_of=str)
    settings = providers.Dependency(instance_of=MemorySettings)
    scope_hash = providers.Dependency(instance_of=str)
    legacy_scope_hash: providers.Provider[str] = providers.Object("")
    store = providers.Dependency(instance_of=object)  # an IndexStore (a Protocol)
    event_log = providers.Dependency(instance_of=object)  # an EventLog
    available_sources = providers.Dependency(instance_of=dict)
    runtime = providers.Dependency(instance_of=EmbeddingRuntime)
    clock = providers.Dependency(instance_of=object)  # a Clock
    watcher: providers.Provider[ChangeWatcher | None] = providers.Object(None)  # None: no watch
    # Watchers tell other processes the index is fresh (None: no lease, a searcher scans).
    lease: providers.Provider[WatchLease | None] = providers.Object(None)
    lease_scope: providers.Provider[str] = providers.Object("")
    # A watching process's change journal over the sources' roots (None: it trusts its scans).
    journal: providers.Provider[Callable[[list[str]], ChangeJournal] | None] = providers.Object(
        None
    )
    redact: providers.Provider[Callable[[str], str] | None] = providers.Object(None)
    recovery_stats: providers.Provider[Callable[[], RecoveryStats] | None] = providers.Object(None)
    host_lock: providers.Provider[SyncLock | None] = providers.Object(None)  # shared stores only
    # Seconds between progress log lines of a sync nobody watches (None: no such lines).
    progress_log_seconds: providers.Provider[float | None] = providers.Object(None)
    # Other agents in the same store (searches and reads across agents); None: this one alone.
    others: providers.Provider[AgentIndexes | None] = providers.Object(None)

    sources = providers.Singleton(_active_sources, available_sources, settings)
    issues = providers.Singleton(IssueBoard, store)
    # The runtime every use case sees keeps provider failures with the index (on the board).
    recording_runtime = providers.Singleton(_recording_runtime, runtime, issues)
    progress = providers.Singleton(ProgressTracker, clock=clock, log_every=progress_log_seconds)
    preparer = providers.Singleton(_preparer, sources, settings, redact)
    detector = providers.Singleton(
        ChangeDetector,
        sources=sources,
        store=store,
        issues=issues,
        clock=clock,
        session_thresholds=settings.provided.sync.sessions,
    )
    wanted_meta = providers.Singleton(
        WantedMeta,
        store=store,
        runtime=recording_runtime,
        sources=sources,
        settings=settings,
        scope_hash=scope_hash,
        workspace=workspace,
    )
    index_file = providers.Singleton(
        IndexFile,
        preparer=preparer,
        store=store,
        runtime=recording_runtime,
        issues=issues,
        clock=clock,
        progress=progress,
        wanted_meta=wanted_meta,
        use_cache=settings.provided.cache.enabled,
    )
    remove_file = providers.Singleton(RemoveFile, store=store, issues=issues, clock=clock)
    rebuild_index = providers.Singleton(
        RebuildIndex,
        preparer=preparer,
        sources=providers.Callable(tuple, sources),
        store=store,
        runtime=recording_runtime,
        issues=issues,
        clock=clock,
        progress=progress,
        wanted_meta=wanted_meta,
        use_cache=settings.provided.cache.enabled,
    )
    routes = providers.Singleton(
        build_routes, index_file=index_file, remove_file=remove_file, rebuild_index=rebuild_index
    )
    bus = providers.Singleton(MessageBus, event_log, routes, clock)
    searcher = providers.Singleton(
        Searcher, store=store, runtime=recording_runtime, settings=settings
    )
    syncing = providers.Singleton(
        SyncService,
        store=store,
        event_log=event_log,
        bus=bus,
        detector=detector,
        runtime=recording_runtime,
        wanted_meta=wanted_meta,
        issues=issues,
        progress=progress,
        clock=clock,
        settings=settings,
        host_lock=host_lock,
        legacy_scope_hash=legacy_scope_hash,
        workspace=workspace,
    )
    # Each sync's failure, and the recovery after one, in the event log (for `status`).
    verdicts = providers.Singleton(
        SyncVerdicts, event_log=event_log, bus=bus, clock=clock, syncing=syncing
    )
    status = providers.Singleton(
        StatusReporter,
        agent_id=agent_id,
        workspace=workspace,
        settings=settings,
        store=store,
        event_log=event_log,
        bus=bus,
        sources=sources,
        runtime=recording_runtime,
        issues=issues,
        syncing=syncing,
        verdicts=verdicts,
        detector=detector,
        recovery_stats=recovery_stats,
        wanted_shape=wanted_meta.provided.shape,
        legacy_scope_hash=legacy_scope_hash,
    )
    background = providers.Singleton(
        BackgroundSyncer,
        syncing=syncing,
        clock=clock,
        settings=settings.provided.sync,
        sources=sources,
        watcher=watcher,
        lease=lease,
        lease_scope=lease_scope,
        verdicts=verdicts,
    )
    search_policy = providers.Singleton(
        SearchSyncPolicy,
        settings=settings.provided.sync,
        store=store,
        syncing=syncing,
        background=background,
        verdicts=verdicts,
    )
    # The facade's collaborators, one per use-case family (application/memory.py).
    agents = providers.Singleton(
        AgentDirectory, agent_id=agent_id, workspace=workspace, sources=sources, others=others
    )
    index_watcher = providers.Singleton(IndexWatcher, lease=lease, scope=lease_scope)
    upkeep = providers.Singleton(
        IndexUpkeep,
        settings=settings,
        syncing=syncing,
        background=background,
        watcher=index_watcher,
        sources=sources,
        journal=journal,
        verdicts=verdicts,
    )
    searching = providers.Singleton(
        Searching,
        settings=settings,
        searcher=searcher,
        policy=search_policy,
        syncing=syncing,
        agents=agents,
        clock=clock,
        store=store,
        issues=issues,
    )
    reading = providers.Singleton(Reading, settings=settings, agents=agents, redact=redact)
    reporting = providers.Singleton(
        Reporting,
        settings=settings,
        status=status,
        watcher=index_watcher,
        event_log=event_log,
        bus=bus,
    )
    manager = providers.Singleton(
        MemoryManager,
        settings=settings,
        agents=agents,
        upkeep=upkeep,
        searching=searching,
        reading=reading,
        reporting=reporting,
    )
