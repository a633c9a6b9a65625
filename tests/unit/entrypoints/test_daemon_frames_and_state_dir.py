"""What a daemon's client sends arrives as it left, and the client, the CLI and the daemon name
one state dir for one command line (a socketpair; the two resolutions side by side)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.read import state_dir
from memlane.entrypoints.daemon.client import served_request
from memlane.entrypoints.daemon.protocol import receive, send, state_dir_of


def test_strings_that_are_not_valid_unicode_cross_the_socket_unchanged() -> None:
    # os.fsdecode's form of the bytes 0xe9 and 0xff (an argument, a variable, a folder name).
    request = {
        "argv": ["search", "caf\udce9", "日本語"],
        "cwd": "/tmp/d\udcff",
        "env": {"WEIRD": "x\udce9", "HOME": "/home/\udcff"},
    }
    ours, theirs = socket.socketpair()
    with ours, theirs:
        send(ours, request)
        assert receive(theirs) == request


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        ("~/st", {"HOME": "/h"}, "/h/st"),
        ("~", {"HOME": "/h/"}, "/h"),
        (None, {"HOME": "/h", "MEMLANE_STATE_DIR": "~/st"}, "/h/st"),
        (None, {"HOME": "/h", "MEMLANE_STATE_DIR": " "}, "/h/.memlane"),  # blank: unset
        ("rel", {"HOME": "/h"}, "/c/rel"),
        (None, {"HOME": "/h", "MEMLANE_STATE_DIR": "rel"}, "/c/rel"),
    ],
)
def test_the_client_and_the_cli_resolve_one_state_dir(
    flag: str | None, env: dict[str, str], expected: str
) -> None:
    """`~` is the requester's HOME (a daemon's client's, not the daemon's own)."""
    assert state_dir_of(flag, env, "/c") == expected
    assert state_dir(flag, env, Path("/c")) == Path(expected)


def test_an_empty_state_dir_flag_is_refused_not_the_default() -> None:
    with pytest.raises(ConfigError, match="--state-dir: is empty"):
        state_dir("", {"HOME": "/h"})
    with pytest.raises(ValueError, match="is empty"):
        state_dir_of("", {"HOME": "/h"})
    assert served_request(["--state-dir", "", "search", "q"]) is None  # said in-process
    assert served_request(["search", "q", "--state-dir="]) is None
