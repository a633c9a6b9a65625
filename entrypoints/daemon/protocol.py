# ruff: noqa: PTH111, PTH118
# (os.path on purpose: pathlib would cost the client ~15 ms of imports)

"""The daemon's wire protocol and where its files live (standard library only: the client's
whole import path goes through here, and it must stay a few milliseconds).

Frames: a 4-byte big-endian length, then that many bytes of UTF-8 JSON (one object); a string
that is not valid Unicode (an argument, a variable or a folder name in another encoding, which
Python holds as lone surrogates) travels as a JSON unicode escape and arrives as it left. A
connection opens with one hello each way, `{"protocol": "memlane-daemon", "version": N,
"memlane": "<package version>"}`; the daemon adds its `pid`, how many requests it `answered`,
which command serves (`served_by`: daemon, watch, serve, mcp) and whether its code was
`replaced` on disk since it started. Each side checks the other's
before anything else is said (`mismatch`): a client of another protocol number or memlane
version reads the daemon's hello and goes away (the CLI then works in-process). Then the
client sends one request, the daemon one reply, and the connection closes.

Files, in `<state dir>/daemon/` (mode 0700): `sock` (the Unix socket, mode 0600), `lock` (the
daemon holds an exclusive flock on it for its whole life; its pid and command are written
inside) and `log`
(the daemon's stderr).
"""

from __future__ import annotations

import json
import os
import socket
import struct
from collections.abc import Mapping
from typing import Any, Final

PROTOCOL: Final = "memlane-daemon"
# What makes a daemon usable by a client: the same protocol number AND the same memlane
# version. The number changes with the frames, the hello or the request/reply fields; the
# package version is compared too because the daemon runs its own copy of the CLI's code
# (another version could answer the same argv differently). Either differing: the client says
# which, once, on stderr, and works in-process (`mismatch`).
# 2: the daemon's hello says when its code was replaced on disk since it started (`replaced`,
# daemon/code_identity.py); a daemon of protocol 1 cannot, so it is refused as one to restart.
PROTOCOL_VERSION: Final = 2
MAX_FRAME: Final = 64 * 1024 * 1024  # a reply holds at most 100 results or one read file
DEFAULT_STATE_DIR: Final = "~/.memlane"
ENV_STATE_DIR: Final = "MEMLANE_STATE_DIR"
EMPTY_STATE_DIR: Final = (
    "is empty: name a folder, or leave the option out for $MEMLANE_STATE_DIR, else ~/.memlane"
)
DAEMON_FOLDER: Final = "daemon"
_HEADER = struct.Struct(">I")


class ProtocolError(OSError):
    """The peer broke the framing or the handshake (or went away mid-frame)."""


def state_dir_of(flag: str | None, env: Mapping[str, str], cwd: str | None = None) -> str:
    """The state dir, resolved alike by every part of memlane (the client finding a daemon's
    socket, the CLI and the API through config/read.py, a daemon resolving a client's command
    line): `--state-dir` > `$MEMLANE_STATE_DIR` (blank: unset) > ~/.memlane, `~` as `env`'s
    home, relative to `cwd` (default: this process's folder), made absolute and real. Strings,
    not pathlib: the client's import path stays without it (paths.py has the Path forms).

    Raises ValueError for an empty `flag` (`--state-dir "$UNSET"`): never the default in
    disguise; the CLI refuses it as a usage error.
    """
    if flag == "":
        raise ValueError(f"--state-dir {EMPTY_STATE_DIR}")
    chosen = expand_home(flag or env.get(ENV_STATE_DIR, "").strip() or DEFAULT_STATE_DIR, env)
    return os.path.realpath(os.path.join(cwd, chosen) if cwd else chosen)


def expand_home(path: str, env: Mapping[str, str]) -> str:
    """A leading `~` as a shell expands it, with `env`'s HOME (in a daemon, the client's, not
    the daemon's); without HOME there, and for `~user`, this process's account decides."""
    if (path == "~" or path.startswith("~/")) and "HOME" in env:
        return (env["HOME"].rstrip("/") + path[1:]) or "/"
    return os.path.expanduser(path)


def socket_file(state: str) -> str:
    return os.path.join(state, DAEMON_FOLDER, "sock")


def lock_file(state: str) -> str:
    return os.path.join(state, DAEMON_FOLDER, "lock")


def log_file(state: str) -> str:
    return os.path.join(state, DAEMON_FOLDER, "log")


def hello(version: str, **extra: object) -> dict[str, Any]:
    return {"protocol": PROTOCOL, "version": PROTOCOL_VERSION, "memlane": version, **extra}


def mismatch(peer: dict[str, Any], version: str) -> str | None:
    """What makes a peer's hello unusable for this side (`version`: our memlane), None when it
    is usable: another protocol, another protocol number, another memlane version, or a daemon
    whose code was replaced on disk since it started (the same version, another build)."""
    if peer.get("protocol") != PROTOCOL:
        return f"speaks {peer.get('protocol')!r}, not {PROTOCOL!r}"
    theirs = peer.get("version")
    if theirs != PROTOCOL_VERSION:
        return f"speaks daemon protocol {theirs}, this memlane speaks {PROTOCOL_VERSION}"
    if peer.get("memlane") != version:
        return f"runs memlane {peer.get('memlane')}, this is memlane {version}"
    if peer.get("replaced"):
        return str(peer["replaced"])
    return None


def compatible(peer: dict[str, Any], version: str) -> bool:
    """Whether a peer's hello is this protocol, this protocol number and this memlane."""
    return mismatch(peer, version) is None


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    # A lone surrogate (a byte of another encoding in argv, the environment or a folder name,
    # as Python decodes it) has no UTF-8 form: it goes as `\udcXX`, JSON's escape for it
    # (json.dumps has doubled every backslash of the text), and `receive` gets it back as it was.
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "backslashreplace")
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket) -> dict[str, Any]:
    """One frame; ProtocolError when the peer closes early or sends something else."""
    (size,) = _HEADER.unpack(_exactly(sock, _HEADER.size))
    if size > MAX_FRAME:
        raise ProtocolError(f"frame of {size} bytes is over the limit")
    try:
        message = json.loads(_exactly(sock, size).decode("utf-8"))
    except ValueError as exc:
        raise ProtocolError(f"not a JSON frame: {exc}") from exc
    if not isinstance(message, dict):
        raise ProtocolError("a frame must hold a JSON object")
    return message


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ProtocolError("the peer closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
