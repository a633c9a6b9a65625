"""Application: which hits of a search come from files changed since they were indexed.

A search that did not sync first (`sync.onSearch: false`) reads the index as it is; a note
edited since its last sync then answers with its old lines and text. The search says so: each
distinct file among the hits is stat-ed once and compared with its `files` row (mtime, size),
the same test a sync's change detection makes; a file gone or unreadable counts as changed.
Only this agent's files are checked (another agent's sources are not this process's to stat).

A sync that could not index a file's new version (it turned binary, grew past the size limit,
became unreadable) keeps the old rows, so nothing is lost; its hits are then as old, which the
search says too (`unindexed_versions`), from the problem the sync recorded: no stat needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memlane.application.issues import IssueBoard
from memlane.application.ports.file_source import FileSource, SourceError
from memlane.application.ports.index_store import IndexStore
from memlane.domain.search import SearchResult
from memlane.domain.sources import Source


def stale_paths(
    results: Sequence[SearchResult],
    *,
    store: IndexStore,
    sources: Mapping[Source, FileSource],
    agent_id: str,
) -> list[str]:
    """The paths (in hit order, each once) of this agent's hits whose file changed since it was
    indexed: its current mtime or size differs from the indexed ones, or it is gone."""
    checked: dict[tuple[Source, str], bool] = {}
    for result in results:
        if result.agent not in (None, agent_id):
            continue
        key = (result.source, result.path)
        if key not in checked:
            checked[key] = _changed(store, sources.get(result.source), result.source, result.path)
    return [path for (_, path), changed in checked.items() if changed]


def _changed(store: IndexStore, reader: FileSource | None, source: Source, path: str) -> bool:
    indexed = store.file(source, path)
    if indexed is None or reader is None:
        return indexed is None  # removed from the index meanwhile; an inactive source: unknown
    try:
        now = reader.stat(path)
    except SourceError:
        return True  # deleted, or no longer served
    return (now.mtime, now.size) != (indexed.mtime, indexed.size)


def unindexed_versions(
    results: Sequence[SearchResult], *, store: IndexStore, issues: IssueBoard, agent_id: str
) -> list[tuple[str, str]]:
    """(path, problem) of this agent's hits whose file's newer version could not be indexed:
    a problem recorded for a version other than the indexed one (an embedding failure is
    recorded for the indexed version itself, whose text is current)."""
    found: dict[tuple[Source, str], str | None] = {}
    for result in results:
        key = (result.source, result.path)
        if result.agent not in (None, agent_id) or key in found:
            continue
        found[key] = None
        issue = issues.of_file(result.source, result.path)
        if issue is None or issue.mtime is None:
            continue
        indexed = store.file(result.source, result.path)
        if indexed is not None and (indexed.mtime, indexed.size) != (issue.mtime, issue.size):
            found[key] = issue.reason
    return [(path, problem) for (_, path), problem in found.items() if problem is not None]


def unindexed_warning(found: Sequence[tuple[str, str]]) -> str | None:
    """The response's warning naming the files whose hits show an older version."""
    if not found:
        return None
    each = "; ".join(f"{path} ({problem})" for path, problem in found)
    return f"not indexed again after a change, so their hits show the text as last indexed: {each}"


def stale_warning(paths: Sequence[str], *, syncing: bool = False) -> str | None:
    """The response's warning naming the changed files (None: none changed); `syncing` when a
    sync of them is due (the watcher saw the change) rather than off."""
    if not paths:
        return None
    names = ", ".join(paths)
    were, their = ("was", "its") if len(paths) == 1 else ("were", "their")
    why = (
        "the change is being indexed; search again in a moment"
        if syncing
        else "sync.onSearch is off; `memlane index` brings the index up to date"
    )
    return (
        f"{names} changed since {'it' if len(paths) == 1 else 'they'} {were} indexed (edited or "
        f"removed): {their} hits may show old lines and text ({why})"
    )
