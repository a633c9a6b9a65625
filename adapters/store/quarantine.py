"""Adapter plumbing: move a damaged index file aside, so a rebuild can start from the sources.

The damaged file is kept, not deleted: it may still hold what someone wants to look at (or
recover with sqlite3's `.recover`). Its `-wal` and `-shm` files go with it, under the same new
name, because a WAL left beside a new `memory.db` would be applied to the wrong database.
"""

from __future__ import annotations

from pathlib import Path

_COMPANIONS = ("", "-wal", "-shm", "-journal")


def move_aside(path: Path, stamp: str) -> Path:
    """Rename `path` (and its -wal/-shm/-journal) to `<path>.corrupt-<stamp>`; return the new path.

    A name already taken gets a counter, so an earlier damaged copy is never overwritten.
    """
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while any(Path(f"{target}{suffix}").exists() for suffix in _COMPANIONS):
        counter += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
    for suffix in _COMPANIONS:
        source = Path(f"{path}{suffix}")
        if source.exists():
            source.replace(f"{target}{suffix}")
    return target
