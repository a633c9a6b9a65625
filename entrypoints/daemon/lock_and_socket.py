"""The daemon's hold on its state dir: the lock it keeps for life, its socket, who may connect.

OS plumbing the `Daemon` class (server.py) only puts in order: an exclusive `flock` on
`<state>/daemon/lock` that waits out the shared lock a client takes for an instant, a socket
bound under umask 0177 so it is 0600 from birth, and the peer's uid read with SO_PEERCRED. It is
apart from server.py so the rules that keep another user and a second daemon out are read in one
place, beside nothing that runs a request.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import struct
import time
from pathlib import Path

from memlane.adapters.unix_socket_paths import socket_address
from memlane.entrypoints.daemon.paths import daemon_dir, lock_path

_LOCK_TRIES = 25  # x 20 ms: a live daemon holds it for good, a client's check for microseconds
_LOCK_PAUSE_S = 0.02
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def take_lock(state: Path, holder: str) -> int | None:
    """The state dir's daemon lock, with `holder` written inside, as an open descriptor kept for
    the process's life; None when another process holds it."""
    folder = daemon_dir(state)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # an existing folder may have been made with looser bits
    fd = os.open(lock_path(state), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    if not _lock_exclusive(fd):
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, holder.encode())
    return fd


def bind_socket(path: Path) -> socket.socket:
    """A Unix socket bound at `path`, replacing a stale file (the caller holds the lock); born
    0600, so there is no moment where another user could connect."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        with socket_address(str(path)) as address:
            listener.bind(address)
    except OSError:
        listener.close()
        raise
    finally:
        os.umask(old)
    return listener


def close_socket(listener: socket.socket, path: Path) -> None:
    """Stop `listener` (a thread blocked in accept wakes) and remove the socket file it bound."""
    with contextlib.suppress(OSError):
        listener.shutdown(socket.SHUT_RDWR)
    listener.close()
    with contextlib.suppress(OSError):  # gone already, or no longer ours to remove
        path.unlink()


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of `conn`, as the kernel saw it connect."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    _pid, uid, _gid = _PEERCRED.unpack(creds)
    return int(uid)


def _lock_exclusive(fd: int) -> bool:
    """The exclusive lock, waiting out shared ones: a client checking for a stale socket holds
    one for an instant, which must not turn a starting daemon away."""
    for _ in range(_LOCK_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            time.sleep(_LOCK_PAUSE_S)
    return False
