"""The daemon client's decisions from argv alone, and the protocol's frames (a socketpair)."""

from __future__ import annotations

import socket
import struct

import pytest

from memlane.entrypoints.daemon.client import daemon_disabled, served_request
from memlane.entrypoints.daemon.protocol import (
    MAX_FRAME,
    PROTOCOL_VERSION,
    ProtocolError,
    compatible,
    hello,
    mismatch,
    receive,
    send,
)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", "q"], ("search", None)),
        (["--state-dir", "/s", "search", "--json", "q"], ("search", "/s")),
        (["search", "q", "--state-dir=/late"], ("search", "/late")),  # after the command wins
        (["--state-dir", "/a", "get", "x.md", "--state-dir", "/b"], ("get", "/b")),
        (["--config", "c.json5", "--agent", "a", "status", "--json"], ("status", None)),
        (["index"], ("index", None)),
        (["events", "--limit", "3"], ("events", None)),
        (["--no-daemon", "search", "q"], ("search", None)),  # parsed; `daemon_disabled` decides
        (["search", "--", "--state-dir"], ("search", None)),  # a query, not an option
    ],
)
def test_commands_a_daemon_may_answer(argv: list[str], expected: tuple[str, str | None]) -> None:
    assert served_request(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["watch"],
        ["daemon", "status"],
        ["config", "schema"],
        ["--help"],
        ["--version"],
        ["search", "--help"],
        ["--log-level", "debug", "search", "q"],  # its log lines belong to this process
        ["search", "q", "--log-json"],
        ["search", "--query", "-"],  # stdin is this process's
        ["search", "--query=-"],
        ["index", "--force"],
        ["index", "--move-workspace"],
        ["--state-dir"],  # a missing value: the CLI says so
        ["--unknown", "search", "q"],
    ],
)
def test_everything_else_stays_in_process(argv: list[str]) -> None:
    assert served_request(argv) is None


def test_the_bypass_flag_and_variable() -> None:
    assert daemon_disabled(["search", "q", "--no-daemon"], {})
    assert not daemon_disabled(["search", "--", "--no-daemon"], {})  # the query text
    for value in ("1", "true", "YES", " on "):
        assert daemon_disabled(["search", "q"], {"MEMLANE_NO_DAEMON": value})
    for value in ("", "0", "false", "No", "off"):
        assert not daemon_disabled(["search", "q"], {"MEMLANE_NO_DAEMON": value})


def test_an_unclear_variable_counts_as_yes_and_is_said_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert daemon_disabled(["search", "q"], {"MEMLANE_NO_DAEMON": "maybe"})
    assert daemon_disabled(["status"], {"MEMLANE_NO_DAEMON": "maybe"})

    said = capsys.readouterr().err
    assert said.count("MEMLANE_NO_DAEMON='maybe' is neither yes") == 1


def test_frames_round_trip_and_hellos_must_match() -> None:
    a, b = socket.socketpair()
    with a, b:
        send(a, {"argv": ["search", "ünïcode"], "n": 1})
        assert receive(b) == {"argv": ["search", "ünïcode"], "n": 1}
        ours = hello("1.2.3", pid=7)
        assert compatible(ours, "1.2.3")
        assert not compatible(ours, "1.2.4")
        assert not compatible({**ours, "version": 99}, "1.2.3")
        assert not compatible({**ours, "protocol": "other"}, "1.2.3")


def test_the_hello_names_what_differs_protocol_number_or_version() -> None:
    ours = hello("1.2.3", pid=7)
    assert mismatch(ours, "1.2.3") is None
    assert mismatch({**ours, "version": PROTOCOL_VERSION + 1}, "1.2.3") == (
        f"speaks daemon protocol {PROTOCOL_VERSION + 1}, this memlane speaks {PROTOCOL_VERSION}"
    )
    assert mismatch(ours, "1.2.4") == "runs memlane 1.2.3, this is memlane 1.2.4"
    assert mismatch({**ours, "protocol": "x"}, "1.2.3") == "speaks 'x', not 'memlane-daemon'"
    # both differ: the protocol number is named (it decides whether anything else can be read)
    assert "protocol" in str(mismatch({**ours, "version": 0}, "9.9.9"))


@pytest.mark.parametrize(
    "raw",
    [
        b"\x00\x00",  # a header cut short
        struct.pack(">I", 10) + b"{}",  # a body cut short
        struct.pack(">I", 2) + b"[]",  # not an object
        struct.pack(">I", 3) + b"{x}",  # not JSON
        struct.pack(">I", MAX_FRAME + 1),  # over the limit
    ],
)
def test_broken_frames_are_protocol_errors(raw: bytes) -> None:
    a, b = socket.socketpair()
    with a, b:
        a.sendall(raw)
        a.shutdown(socket.SHUT_WR)
        with pytest.raises(ProtocolError):
            receive(b)
