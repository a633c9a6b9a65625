"""Adapter: names of a rebuild's temporary databases, and removing the ones left by a crash.

A temporary database is `<db>.tmp-<host>-<pid>-<uuid>` (host hashed). A process killed during
a rebuild leaves it behind, possibly hundreds of megabytes; opening the index on the same host
removes those whose builder is no longer alive, and never those of a rebuild still running.
Files of another host sharing the folder, and names from before the pid was recorded, are
left alone: we cannot tell whether their builder lives.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import uuid
from pathlib import Path

from memlane.adapters.store.processes import alive, host_tag

_SIDE_FILES = ("", "-wal", "-shm", "-journal")
_TEMP_NAME = re.compile(r"\.tmp-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[0-9a-f]{32}")


def remove_files(path: Path) -> None:
    """Delete a database file and its side files, whichever exist."""
    for suffix in _SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


def temp_path_for(db_path: Path) -> Path:
    """A fresh temporary database path beside `db_path`: `<db>.tmp-<host>-<pid>-<uuid>`."""
    name = f"{db_path.name}.tmp-{host_tag()}-{os.getpid()}-{uuid.uuid4().hex}"
    return db_path.with_name(name)


def remove_abandoned_temps(db_path: Path) -> list[Path]:
    """Delete the temporary databases of this host's rebuilds whose process is gone; return
    them. Best effort: a folder or file we may not touch is left as it is."""
    removed: list[Path] = []
    for candidate, pid in _this_hosts_temps(db_path):
        if not alive(pid):
            try:
                remove_files(candidate)
            except OSError:
                continue
            removed.append(candidate)
    return removed


def rebuilding_elsewhere(db_path: Path) -> bool:
    """Whether another live process of this host builds a temporary database of `db_path` now
    (a rebuild aside under way). Another host's cannot be told alive: not counted."""
    ours = os.getpid()
    return any(pid != ours and alive(pid) for _, pid in _this_hosts_temps(db_path))


def _this_hosts_temps(db_path: Path) -> list[tuple[Path, int]]:
    """The temporary databases of `db_path` this host's rebuilds named, with their builder's
    pid; side files (-wal, -shm), older names and other hosts' are left out."""
    try:
        candidates = list(db_path.parent.glob(f"{glob.escape(db_path.name)}.tmp-*"))
    except OSError:
        return []
    host = host_tag()
    found = []
    for candidate in candidates:
        match = _TEMP_NAME.fullmatch(candidate.name[len(db_path.name) :])
        if match is not None and match.group("host") == host:
            found.append((candidate, int(match.group("pid"))))
    return found
