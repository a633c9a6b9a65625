"""Adapter: the watch lease as a locked file in the agent's state folder.

The holder keeps an exclusive `flock` on `<path>` for as long as it watches; the kernel drops
it when the process ends, however it ends. What the holder says is in `<path>.state`, a small
JSON file replaced atomically (write, then rename). A reader that can take a shared lock on
`<path>` knows no live process holds the lease and ignores whatever state file is left.

The state file's word can be late: the holder learns of a change when its watcher reports it,
after the writer's system call returned. So a reader that would skip its scan asks first, on the
Unix socket `<path>.sock` (0600) the holder answers on: the holder answers after the question
arrived, from its change journal, which counts every change whose system call returned before
it is read (application/ports/change_journal.py). No answer (no socket, a holder that does not
answer, a timeout) means "scan".
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from memlane.adapters.unix_socket_paths import socket_address
from memlane.application.ports.watch_lease import LeaseHolder

log = structlog.get_logger()

# A reader's shared lock lasts microseconds; a live holder's exclusive one lasts. 0.25 s of tries
# tells the two apart at a watcher's start.
_LOCK_TRIES = 25
_LOCK_PAUSE_S = 0.01
# A holder answers in microseconds (a non-blocking read of its journal); past this the reader
# scans rather than wait on a wedged holder.
_ANSWER_TIMEOUT_S = 1.0
_FRESH, _NOT_FRESH, _QUESTION = b"1", b"0", b"?"


class FileWatchLease:
    """The lease of one agent's index on this host."""

    def __init__(self, path: str) -> None:
        self._path = Path(path)
        self._state_path = Path(f"{path}.state")
        self._socket_path = Path(f"{path}.sock")
        self._fd: int | None = None
        self._scope = ""
        self._listener: socket.socket | None = None

    def acquire(self, scope: str) -> bool:
        self._scope = scope
        if self._fd is None:
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                log.warning("watch_lease_unavailable", path=str(self._path), error=str(exc))
                return False
            if not _lock_exclusive(fd):  # another watcher holds it: this one goes without
                os.close(fd)
                log.info("watch_lease_held_elsewhere", path=str(self._path))
                return False
            self._fd = fd
        self._write(fresh=False)
        return True

    def set_fresh(self, fresh: bool) -> None:
        if self._fd is not None:
            self._write(fresh=fresh)

    def answer(self, fresh: Callable[[], bool]) -> None:
        """While held, answer each reader's `confirm` with `fresh()`, called after it asked."""
        if self._fd is None or self._listener is not None:
            return
        with contextlib.suppress(FileNotFoundError):  # a killed holder's: we hold the lock
            self._socket_path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # born 0600
        try:
            with socket_address(str(self._socket_path)) as address:
                listener.bind(address)
            listener.listen(16)
        except OSError as exc:  # e.g. no /proc for a path past AF_UNIX's limit: readers scan
            listener.close()
            log.warning("watch_lease_not_answering", path=str(self._socket_path), error=str(exc))
            return
        finally:
            os.umask(old)
        self._listener = listener
        threading.Thread(
            target=_answer_loop, args=(listener, fresh), name="memlane-lease", daemon=True
        ).start()

    def confirm(self) -> bool:
        """Ask the live holder whether every change that finished before this call is indexed."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(_ANSWER_TIMEOUT_S)
            with socket_address(str(self._socket_path)) as address:
                conn.connect(address)
            conn.sendall(_QUESTION)
            return conn.recv(1) == _FRESH
        except OSError:
            return False  # no socket, a dead or wedged holder: the caller scans
        finally:
            conn.close()

    def release(self) -> None:
        if self._fd is None:
            return
        listener, self._listener = self._listener, None
        if listener is not None:  # first: no reader may get an answer from a releasing holder
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            with contextlib.suppress(OSError):
                self._socket_path.unlink()
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):  # a reader ignores a state nobody holds the lock for
            self._state_path.unlink()
        os.close(fd)  # drops the lock

    def holder(self) -> LeaseHolder | None:
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None  # never held here
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return self._read_state()  # locked: a live process holds the lease
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def _write(self, *, fresh: bool) -> None:
        state = {"pid": os.getpid(), "scope": self._scope, "fresh": fresh}
        tmp = self._state_path.with_name(f"{self._state_path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(state), encoding="utf-8")
            tmp.replace(self._state_path)
        except OSError as exc:  # readers then find no state and scan: slower, never stale
            log.warning("watch_lease_state_not_written", path=str(tmp), error=str(exc))
            with contextlib.suppress(OSError):
                self._state_path.unlink()

    def _read_state(self) -> LeaseHolder | None:
        try:
            state: Any = json.loads(self._state_path.read_text(encoding="utf-8"))
            return LeaseHolder(
                pid=int(state["pid"]), scope=str(state["scope"]), fresh=state["fresh"] is True
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None  # not written yet, or unreadable: as if there were no lease


def _answer_loop(listener: socket.socket, fresh: Callable[[], bool]) -> None:
    """Answer questions one at a time until the listener is closed (`release`)."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return  # closed
        with conn:
            try:
                conn.settimeout(_ANSWER_TIMEOUT_S)
                if conn.recv(1) != _QUESTION:
                    continue
                try:
                    said = fresh()
                except Exception as exc:  # an answer of "scan" is always safe
                    log.warning("watch_lease_answer_failed", error=str(exc))
                    said = False
                conn.sendall(_FRESH if said else _NOT_FRESH)
            except OSError:
                continue  # the reader went away


def _lock_exclusive(fd: int) -> bool:
    """Take the exclusive lock, waiting out readers: a search's `holder()` holds a shared lock
    for an instant, which must not cost a starting watcher its lease for its whole life."""
    for _ in range(_LOCK_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            time.sleep(_LOCK_PAUSE_S)
    return False
