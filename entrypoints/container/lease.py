"""Composition: the watch lease of one agent's index (application/ports/watch_lease.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from memlane.adapters.sources.watch_lease import FileWatchLease
from memlane.application.ports.change_journal import ChangeJournal
from memlane.entrypoints.config.runtime import RuntimeConfig
from memlane.entrypoints.container.stores import family_of


def watch_lease_for(rc: RuntimeConfig) -> FileWatchLease:
    """The lease file of this agent in its state folder, beside its default index."""
    return FileWatchLease(str(rc.state_dir / "agents" / rc.agent_id / "watch.lease"))


def lease_scope(rc: RuntimeConfig, env: Mapping[str, str], scope_hash: str) -> str:
    """What a watcher and a searcher must share for one's freshness to hold for the other:
    the workspace, the index (a PostgreSQL URL only as a digest: the file is on disk), the
    sources and the extra paths (`scope_hash`)."""
    index = family_of(rc).identity(rc, env)
    scope = [str(rc.workspace.resolve()), index, rc.agent_id, list(rc.settings.sources), scope_hash]
    return json.dumps(scope, ensure_ascii=False)


def change_journal(roots: list[str]) -> ChangeJournal:
    """The change journal of a long-lived process (the daemon) over the sources' roots."""
    from memlane.adapters.sources.change_journal import InotifyChangeJournal

    return InotifyChangeJournal(roots)
