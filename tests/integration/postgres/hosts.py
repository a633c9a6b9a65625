"""Test support: the processes of test_pg_many_hosts (importable, so `spawn` can start them)."""

from __future__ import annotations

from multiprocessing.synchronize import Event as EventType
from pathlib import Path
from typing import Any

from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES

ROUNDS = 3
NEW_PER_ROUND = 8
WORDS = ("lighthouse", "harbour", "compass", "anchor", "tide", "beacon")


def _note(agent: str, n: int, version: int) -> str:
    word = WORDS[n % len(WORDS)]
    return f"# Note {n}\n\n{agent} wrote about the {word} number {n}, revision {version}.\n"


def writer(url: str, root: str, agent: str, result: Any) -> None:
    """One host syncing one agent: new notes and an edited note every round."""
    from memlane.entrypoints.api import open_manager

    workspace = Path(root) / agent / "ws"
    (workspace / "memory").mkdir(parents=True)
    try:
        manager = open_manager(
            workspace=workspace,
            agent_id=agent,
            state_dir=Path(root) / agent / "state",
            config={"provider": "none", "sources": ["memory"], "store": {"driver": "postgres"}},
            env={"MEMLANE_STORE_URL": url, "HOME": root},
        )
        for version in range(ROUNDS):
            for n in range(version * NEW_PER_ROUND, (version + 1) * NEW_PER_ROUND):
                (workspace / "memory" / f"n{n}.md").write_text(_note(agent, n, 0))
            (workspace / "memory" / "n0.md").write_text(_note(agent, 0, version))
            manager.sync()
        manager.close()
        result.put((agent, "ok"))
    except BaseException as exc:
        result.put((agent, f"{type(exc).__name__}: {exc}"))


def searcher(url: str, agents: list[str], stop: EventType, result: Any) -> None:
    """A host that only searches, until told to stop; reports searches and errors."""
    db = PostgresDatabase.open(url)
    stores = [PostgresIndexStore(db, agent) for agent in agents]
    done, errors = 0, []
    while not stop.is_set() or done == 0:
        for store, word in zip(stores, WORDS, strict=False):
            match = build_fts_query(f"{word} revision")
            assert match is not None
            try:
                store.search_keyword(match, sources=ALL_SOURCES, limit=10)
                done += 1
            except BaseException as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    db.close()
    result.put(("searcher", done, errors))
