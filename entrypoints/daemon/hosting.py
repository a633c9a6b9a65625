"""The daemon runs the CLI's own commands for its clients: one request per thread.

A request's thread carries its `Hosted` context (the client's environment and current
directory, the daemon's shared managers) and its own stdout/stderr buffers: the process-wide
`sys.stdout` / `sys.stderr` are `ThreadStreams` that write to the calling thread's buffer when
it has one, else to the real stream (the daemon's log). The CLI code is the same code that runs
in-process (`cli_options.Options` asks `current()` where the manager comes from), so the answer a
client prints is the in-process answer by construction.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO, cast

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager
    from memlane.entrypoints.config.runtime import RuntimeConfig


class NotServed(Exception):
    """The daemon will not answer this request (the client then works in-process)."""


class ManagerSource(Protocol):
    """Where a hosted request's manager comes from (the daemon)."""

    pid: int
    served_by: str  # the command of the serving process: daemon, watch, serve or mcp

    def manager_for(
        self,
        runtime: RuntimeConfig,
        values: Mapping[str, str | None],
        hosted: Hosted,
        *,
        on_notice: Callable[[str], None],
        reads_only: bool,
    ) -> MemoryManager:
        """The manager the request's command uses, opened as the CLI opens it in-process
        (`on_notice` and `reads_only` as `api.open_telling` takes them)."""
        ...


@dataclass(frozen=True, slots=True)
class Hosted:
    """One client request run inside the daemon."""

    env: Mapping[str, str]
    cwd: Path
    source: ManagerSource
    # Managers opened for this request alone (an agent the daemon does not serve yet): the
    # daemon closes them when the request ends.
    closing: list[MemoryManager] = field(default_factory=list)
    stderr_tty: bool = False  # the client's stderr is a terminal: console log lines


_local = threading.local()


def current() -> Hosted | None:
    """The request this thread runs for a daemon client; None in an ordinary process."""
    hosted: Hosted | None = getattr(_local, "hosted", None)
    return hosted


@contextmanager
def hosting(hosted: Hosted) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Run the body as `hosted`, with this thread's stdout and stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    _local.hosted, _local.stdout, _local.stderr = hosted, out, err
    try:
        yield out, err
    finally:
        _local.hosted = _local.stdout = _local.stderr = None


class ThreadStreams:
    """A text stream writing to the calling thread's buffer (see `hosting`), else to `real`."""

    encoding = "utf-8"  # what click asks before writing; the buffers hold str
    errors = "strict"

    def __init__(self, real: TextIO, name: str) -> None:
        self._real = real
        self._name = name

    def _target(self) -> TextIO:
        buffer: TextIO | None = getattr(_local, self._name, None)
        return self._real if buffer is None else buffer

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return False  # a client's terminal is not ours: no progress line, plain log lines

    def writable(self) -> bool:
        return True

    @property
    def buffer(self) -> object:
        """The real stream's bytes (an MCP stdio server wraps sys.stdout.buffer at start);
        a request's buffer has none, as a StringIO has none."""
        return self._target().buffer

    def fileno(self) -> int:
        return self._target().fileno()  # a buffer raises io.UnsupportedOperation, as it should


def install_streams() -> tuple[TextIO, TextIO]:
    """Make sys.stdout / sys.stderr write to a hosted request's buffers (ThreadStreams);
    returns the real streams."""
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, ThreadStreams(real_out, "stdout"))
    sys.stderr = cast(TextIO, ThreadStreams(real_err, "stderr"))
    return real_out, real_err


def client_terminal() -> bool:
    """Whether the client this thread answers has a terminal for its stderr."""
    hosted = current()
    return hosted is not None and hosted.stderr_tty
