"""Starting, stopping and asking about the daemon of a state dir (used by `memlane daemon`
and by `status`); standard library only."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from memlane import __version__
from memlane.adapters.unix_socket_paths import socket_address
from memlane.entrypoints.daemon.paths import daemon_dir, lock_path, log_path, socket_path
from memlane.entrypoints.daemon.protocol import (
    hello,
    mismatch,
    receive,
    send,
)

_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class DaemonState:
    """Whether a daemon holds the state dir's lock, its pid and whether it answers."""

    running: bool
    pid: int | None = None
    answering: bool = False
    version: str | None = None
    answered: int | None = None  # requests it has answered so far
    served_by: str | None = None  # daemon, or the `watch` / `serve` / `mcp` serving the socket
    protocol: int | None = None  # the protocol number it speaks
    refused: str | None = None  # why this CLI does not use it (another protocol or version)

    def as_json(self, state: Path) -> dict[str, object]:
        return {
            "running": self.running,
            "pid": self.pid,
            "servedBy": self.served_by,
            "answering": self.answering,
            "version": self.version,
            "protocol": self.protocol,
            "refused": self.refused,
            "answered": self.answered,
            "socket": str(socket_path(state)),
        }

    def text(self) -> str:
        if not self.running:
            return "not running"
        answer = "answering" if self.answering else "not answering"
        if self.refused:
            answer += f": it {self.refused}"
        who = f"memlane {self.served_by}, " if self.served_by not in (None, "daemon") else ""
        return (
            f"running (pid {self.pid}, {who}memlane {self.version or '?'}, "
            f"protocol {self.protocol if self.protocol is not None else '?'}, {answer})"
        )


def lock_holder(state: Path) -> int | None:
    """The pid of the live daemon holding the lock, None when no process holds it."""
    owner = lock_owner(state)
    return None if owner is None else owner[0]


def lock_owner(state: Path) -> tuple[int, str] | None:
    """(pid, command) of the live process holding the daemon lock (`daemon`, `watch`,
    `serve`; pid 0 and "" while it has not written them yet), None when none holds it."""
    try:
        fd = os.open(lock_path(state), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            lines = os.pread(fd, 64, 0).decode("ascii", "replace").split("\n")
            pid = lines[0].strip()
            command = lines[1].strip() if len(lines) > 2 else ""  # whole lines only
            return (int(pid) if pid.isdigit() else 0), command
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def probe(state: Path, timeout: float = 2.0) -> DaemonState:
    """Ask the state dir's daemon for its hello (without sending a request)."""
    pid = lock_holder(state)
    if pid is None:
        return DaemonState(running=False)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        with socket_address(str(socket_path(state))) as address:
            conn.connect(address)
        send(conn, hello(__version__))
        theirs = receive(conn)
    except OSError:
        return DaemonState(running=True, pid=pid or None)
    finally:
        conn.close()
    refused = mismatch(theirs, __version__)
    version = theirs.get("memlane")
    answered = theirs.get("answered")
    protocol = theirs.get("version")
    served_by = theirs.get("served_by", "daemon")  # a daemon before `served_by` was said
    return DaemonState(
        answered=answered if isinstance(answered, int) else None,
        running=True,
        pid=int(theirs.get("pid", pid)),
        answering=refused is None,
        version=str(version) if version is not None else None,
        served_by=str(served_by),
        protocol=protocol if isinstance(protocol, int) else None,
        refused=refused,
    )


def start(state: Path, options: list[str], *, timeout: float) -> tuple[DaemonState, bool]:
    """Spawn a daemon unless one runs; wait until one answers. (state, whether we started it).

    Two `start`s racing spawn two processes; the daemon's lock lets one through and the other
    exits at once (EXIT_ALREADY_RUNNING), so both callers end up with the same daemon.
    """
    current = probe(state)
    if current.answering:
        return current, False
    folder = daemon_dir(state)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    with log_path(state).open("ab") as log:
        child = subprocess.Popen(  # noqa: S603 (our interpreter, our module, our paths)
            [
                sys.executable,
                "-m",
                "memlane.entrypoints.daemon.server",
                "--state-dir",
                str(state),
                *options,
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not killed with the shell that started it
            close_fds=True,
        )
    deadline = time.monotonic() + timeout
    ours = True
    while time.monotonic() < deadline:
        current = probe(state, timeout=timeout)
        if current.answering:
            if current.pid == child.pid:
                return current, ours
            # Another start won the lock. Ours may still be starting up: it would find the lock
            # taken and exit, but a caller (or `status`) must not see a second daemon meanwhile.
            _end_loser(child, deadline)
            return current, False
        if child.poll() is not None:
            ours = False  # it lost the lock race (or failed): wait for the winner, if any
            if lock_holder(state) is None:
                return DaemonState(running=False), False
        time.sleep(_POLL_S)
    return probe(state), False


def _end_loser(child: subprocess.Popen[bytes], deadline: float) -> None:
    """Wait for a spawned daemon that lost the lock race to exit; stop it if it lingers (it can
    never serve: the lock is held)."""
    try:
        child.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        child.terminate()
        child.wait(timeout=10)


class NotADaemon(Exception):
    """`daemon stop` found the socket served by a `watch`, `serve` or `mcp` process: not stopped."""


def stop(state: Path, *, timeout: float) -> int | None:
    """SIGTERM the daemon and wait for its lock to drop; the pid stopped, None if none ran.
    Raises NotADaemon when a `watch`, `serve` or `mcp` process holds the lock (the user ends it)."""
    owner = lock_owner(state)
    if owner is None or not owner[0]:
        return None
    pid, command = owner
    if command not in ("", "daemon"):
        raise NotADaemon(
            f"no daemon runs: `memlane {command}` (pid {pid}) serves the CLI's requests for "
            f"{state}; stop that process to stop serving"
        )
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and lock_holder(state) is not None:
        time.sleep(_POLL_S)
    if lock_holder(state) is not None:
        raise TimeoutError(f"the daemon (pid {pid}) did not stop within {timeout:.0f} s")
    return pid
