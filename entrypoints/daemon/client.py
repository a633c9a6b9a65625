# ruff: noqa: PTH108, PTH109, PTH110
# (os.path on purpose: pathlib would cost this import path ~15 ms)

"""The CLI's client of a running daemon: the first thing the `memlane` command runs.

It imports the standard library only (plus the daemon protocol and the package version), so a
command a daemon answers costs the interpreter's start and a few milliseconds, not the ~0.3-0.8 s
of the full CLI's imports (tests/architecture/test_daemon_client_imports.py holds that). It
decides from argv alone whether a daemon may answer; whenever it cannot (no daemon, another
version, another configuration, a daemon that went away), `serve_through_daemon` returns and
the full CLI runs in-process as if no daemon existed. Every such fallback except "no daemon" is
said in one line on stderr.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
from typing import Final

from memlane import __version__
from memlane.adapters.unix_socket_paths import socket_address
from memlane.entrypoints.daemon.protocol import (
    ProtocolError,
    hello,
    lock_file,
    mismatch,
    receive,
    send,
    socket_file,
    state_dir_of,
)

# What a daemon answers; everything else (watch, serve, config, daemon itself, --help) runs here.
SERVED_COMMANDS = frozenset({"search", "get", "status", "index", "events"})
_VALUE_OPTIONS = frozenset({"--config", "--state-dir", "--agent", "--workspace"})
# Only these flags may come before the command (logging options change what stderr shows).
_FLAGS_BEFORE = frozenset({"--no-daemon"})
# Arguments after the command that keep the request here: help, stdin queries, index repairs.
_LOCAL_ARGS = frozenset(
    {"-h", "--help", "-", "--query=-", "--force", "--move-workspace", "--log-level", "--log-json"}
)
_HELLO_TIMEOUT_S = 10.0  # a daemon that does not even say hello in that time is wedged


_YES: Final = frozenset({"1", "true", "yes", "on"})
_NO: Final = frozenset({"", "0", "false", "no", "off"})
_told_unclear: list[str] = []  # the MEMLANE_NO_DAEMON value already said to be unclear


def daemon_disabled(argv: list[str], env: dict[str, str] | os._Environ[str]) -> bool:
    """`--no-daemon` anywhere before `--`, or MEMLANE_NO_DAEMON set to a true value. Any other
    value than a yes or a no counts as yes (in-process always answers) and is said, once."""
    value = env.get("MEMLANE_NO_DAEMON", "").strip().lower()
    if value in _YES:
        return True
    if value not in _NO:
        if value not in _told_unclear:
            _told_unclear.append(value)
            sys.stderr.write(
                f"memlane: MEMLANE_NO_DAEMON={value!r} is neither yes (1, true, yes, on) nor no "
                "(0, false, no, off): taken as yes\n"
            )
        return True
    head = argv[: argv.index("--")] if "--" in argv else argv
    return "--no-daemon" in head


def served_request(argv: list[str]) -> tuple[str, str | None] | None:
    """(command, --state-dir value) when a daemon may answer this command line, else None.

    A global option given after the command wins, as in the CLI; anything this parser does not
    know keeps the command in-process (the daemon re-parses argv with the real CLI anyway).
    """
    state: str | None = None
    index = 0
    command = None
    while index < len(argv):
        arg = argv[index]
        name, eq, value = arg.partition("=")
        if name in _VALUE_OPTIONS:
            if not eq:
                index += 1
                if index >= len(argv):
                    return None
                value = argv[index]
            if name == "--state-dir":
                if not value:
                    return None  # a usage error, said in-process: not the default's daemon
                state = value
        elif command is None and arg.startswith("-"):
            if arg not in _FLAGS_BEFORE:
                return None
        elif command is None:
            if arg not in SERVED_COMMANDS:
                return None
            command = arg
        elif arg == "--":
            break
        elif arg in _LOCAL_ARGS or name in _LOCAL_ARGS:
            return None
        index += 1
    return None if command is None else (command, state)


def serve_through_daemon(argv: list[str]) -> None:
    """Answer through a live daemon and end the process; return to work in-process."""
    env = os.environ
    if daemon_disabled(argv, env):
        return
    request = served_request(argv)
    if request is None:
        return
    state = state_dir_of(request[1], env)
    sock_file = socket_file(state)
    if not os.path.exists(sock_file):
        return  # no daemon: the ordinary case, said nowhere
    try:
        # Whether our stderr is a terminal: the daemon renders the request's log lines as
        # console lines then, as the command does in-process, else as JSON lines.
        request_body = {"argv": argv, "cwd": os.getcwd(), "env": dict(env), "tty": _is_tty()}
        reply = _ask(state, sock_file, request_body)
    except KeyboardInterrupt:  # as the CLI says it (click's Abort); the daemon finishes alone
        sys.stderr.write("\nAborted!\n")
        sys.stderr.flush()
        os._exit(1)
    if reply is None:
        return
    exit_value = reply.get("exit", 1)
    code = exit_value if isinstance(exit_value, int) else 1
    for stream, text in (
        (sys.stdout, reply.get("stdout", "")),
        (sys.stderr, reply.get("stderr", "")),
    ):
        try:
            stream.write(str(text))
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the reader went away
            if code == 0 and stream is sys.stdout:
                code = 1
    os._exit(code)


def _ask(state: str, sock_file: str, request: dict[str, object]) -> dict[str, object] | None:
    """The daemon's reply, or None (said on stderr) when the CLI must answer in-process."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    pid: object = "?"
    try:
        conn.settimeout(_HELLO_TIMEOUT_S)
        try:
            with socket_address(sock_file) as address:
                conn.connect(address)
        except (ConnectionRefusedError, FileNotFoundError):
            _remove_if_stale(state, sock_file)
            return None
        send(conn, hello(__version__))
        theirs = receive(conn)
        pid = theirs.get("pid", "?")
        differs = mismatch(theirs, __version__)
        if differs is not None:
            _say(
                f"the daemon (pid {pid}) {differs}: answering in-process; "
                "restart it with `memlane daemon stop` and `memlane daemon start`"
            )
            return None
        send(conn, request)
        conn.settimeout(None)  # an index may take minutes; a dead daemon closes the socket
        reply = receive(conn)
    except (OSError, ProtocolError) as exc:
        _say(f"the daemon (pid {pid}) did not answer ({exc}); answering in-process")
        return None
    finally:
        conn.close()
    if "fallback" in reply:
        _say(
            f"the daemon (pid {pid}) does not serve this command: {reply['fallback']}; "
            "answering in-process"
        )
        return None
    return reply


def _remove_if_stale(state: str, sock_file: str) -> None:
    """A socket nobody listens on: remove it when no daemon holds the lock (a killed one)."""
    try:
        fd = os.open(lock_file(state), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        fd = -1
    try:
        if fd >= 0:
            try:
                # Held while unlinking: a daemon starting now waits for it
                # (daemon/lock_and_socket.py retries its lock), then binds anew.
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                _say("the daemon is starting or busy (its socket refused); answering in-process")
                return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock_file)
        _say(f"removed the stale daemon socket {sock_file} (no daemon runs)")
    finally:
        if fd >= 0:
            os.close(fd)


def _is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


def _say(text: str) -> None:
    sys.stderr.write(f"memlane: {text}\n")
