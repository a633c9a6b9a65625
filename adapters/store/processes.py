"""Adapter plumbing: naming this process, and telling whether a named process still runs.

A process is named `<host>-<pid>` (the host name hashed): rebuild temporary files and the record
of a first index carry the name, so another process can tell an abandoned one (its writer was
killed) from one still being written. Only a process of this host can be checked; SQLite's WAL
needs every process of one database on one host anyway.
"""

from __future__ import annotations

import hashlib
import os
import socket


def host_tag() -> str:
    """This host's name, hashed to eight hex digits."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def this_process() -> str:
    """`<host>-<pid>` of this process."""
    return f"{host_tag()}-{os.getpid()}"


def alive(pid: int) -> bool:
    """Whether a process `pid` exists on this host (under any user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def running_here(name: str) -> bool:
    """Whether the process named `name` (see `this_process`) runs on this host; a name of
    another host, or not of this form, counts as not running."""
    host, _, pid = name.partition("-")
    return host == host_tag() and pid.isdigit() and alive(int(pid))
