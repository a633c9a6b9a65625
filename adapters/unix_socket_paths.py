"""Adapter plumbing: reach a Unix socket whose path is longer than AF_UNIX allows.

A socket's address holds at most 107 bytes of path (`sun_path` is 108 with its NUL). A state
folder a few levels deep in a long home or project path passes that, and the daemon's and the
watch lease's sockets could then not be bound: the daemon served nothing and searches scanned.
Linux resolves `/proc/self/fd/N/name` through the open folder N, so the socket is bound (and
reached) in its own folder, with that folder's permissions, under a name of ~30 bytes. Where
/proc is missing the bind or connect fails as the long path did, and callers say so as before.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Final

MAX_PATH_BYTES: Final = 107
# O_PATH opens a folder for naming it only (no read permission needed); not on every platform.
_FOLDER_FLAGS: Final = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC


@contextlib.contextmanager
def socket_address(path: str) -> Iterator[str]:
    """The address to bind or connect to for the socket file `path`, valid inside the block:
    `path` itself when it fits, else the same file named through its open folder."""
    if len(os.fsencode(path)) <= MAX_PATH_BYTES:
        yield path
        return
    folder, name = os.path.split(path)
    fd = os.open(folder or ".", _FOLDER_FLAGS)
    try:
        yield f"/proc/self/fd/{fd}/{name}"
    finally:
        os.close(fd)
