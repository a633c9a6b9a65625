"""A `watch`, `serve` or `mcp` process serving the daemon socket with the manager it holds.

Such a process already keeps the index warm and watched; while it runs, the CLI's `search`,
`get`, `status`, `index` and `events` go to it exactly as to `memlane daemon` (the same
`Daemon` class: the lock, the 0600 socket in its 0700 folder, the SO_PEERCRED check, the
hello with protocol number and version, the CLI's own commands run per request). It serves
the one agent it holds (another agent's request is answered in-process by the client), and
its manager decides a search's scan by a change journal, for the daemon's freshness.

Only one process serves a state dir: when a daemon (or another such process) holds the lock,
this one says so on stderr and serves nothing. `--no-daemon` / MEMLANE_NO_DAEMON=1 keep it
from serving.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from memlane.entrypoints.daemon.control import lock_owner
from memlane.entrypoints.daemon.hosting import install_streams
from memlane.entrypoints.daemon.paths import socket_path
from memlane.entrypoints.daemon.server import Daemon

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager


@contextmanager
def serving_socket(
    manager: MemoryManager, command: str, *, disabled: bool, say: TextIO | None = None
) -> Iterator[bool]:
    """While the body runs, serve the daemon socket of `manager`'s state dir with it (yields
    whether it does). Call before `manager.start()`: the journal is set before any scan."""
    from memlane.entrypoints.api import runtime_of
    from memlane.entrypoints.container.lease import change_journal

    out = say or sys.stderr
    runtime = runtime_of(manager)
    if disabled or runtime is None:
        yield False
        return
    state = runtime.state_dir.resolve()
    daemon = Daemon(state, served_by=command)
    try:
        acquired = daemon.acquire()
    except OSError as exc:  # a read-only state dir, say: the command itself goes on
        _say(out, f"cannot serve the CLI's requests for {state} ({exc}); this {command} goes on")
        yield False
        return
    if not acquired:
        owner = lock_owner(state)
        who = f"`memlane {owner[1] or 'daemon'}` (pid {owner[0]})" if owner else "another process"
        _say(out, f"{who} serves the CLI's requests for {state}, not this {command}")
        yield False
        return
    try:
        # Adopted before anyone can connect: a request must not open (and watch) it anew.
        manager.track_changes(change_journal)
        daemon.adopt(runtime.agent_id, manager)
        try:
            daemon.listen()
        except OSError as exc:  # a socket path over the kernel's limit, say
            _say(out, f"cannot serve the CLI's requests on {socket_path(state)} ({exc})")
            daemon.stop()  # the lock goes now: a daemon elsewhere may try
            yield False
            return
        real = install_streams()
        try:
            threading.Thread(
                target=daemon.serve_forever, name=f"memlane-{command}-socket", daemon=True
            ).start()
            _say(out, f"serving the CLI's requests on {socket_path(state)}")
            yield True
        finally:
            sys.stdout, sys.stderr = real
    finally:
        daemon.stop()  # the lock and the socket go; the manager stays with its owner


def _say(out: TextIO, text: str) -> None:
    out.write(f"memlane: {text}\n")
    out.flush()
