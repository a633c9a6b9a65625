"""`memlane mcp` (stdio and HTTP) and `memlane ui` stop on SIGTERM as on Ctrl-C, as `watch` and
`serve` do: they say so, exit 0 and remove the daemon socket they served. They died by the signal
(exit 143), leaving the socket for the next command to find stale. Real processes."""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e._loud_support import cli_env, make_home

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_said(proc: subprocess.Popen[bytes], err: Path, ready: str) -> None:
    """Wait for the server's ready line on its stderr (it must not have exited)."""
    deadline = time.monotonic() + 120
    while ready not in err.read_text() and time.monotonic() < deadline:
        assert proc.poll() is None, err.read_text()
        time.sleep(0.1)
    assert ready in err.read_text()


@pytest.mark.parametrize(
    ("command", "ready"),
    [
        (["mcp"], "serving the CLI's requests"),
        (["mcp", "--http", "--port", "{port}"], "serving the CLI's requests"),
        (["ui", "--port", "{port}"], "memlane ui: http"),
    ],
    ids=["mcp-stdio", "mcp-http", "ui"],
)
def test_sigterm_stops_cleanly(tmp_path: Path, command: list[str], ready: str) -> None:
    home = make_home(tmp_path)
    port = str(_free_port())
    argv = [a.replace("{port}", port) for a in command]
    err = tmp_path / "stderr.txt"
    where = ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")]
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlane.entrypoints", *where, *argv],
            stdin=subprocess.PIPE,  # kept open: the stdio server waits for its host
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=cli_env(home),
        )
        try:
            _wait_until_said(proc, err, ready)
            time.sleep(0.5)  # past start-up: the first sync and the watcher run

            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            assert proc.stdin is not None
            proc.stdin.close()

    said = err.read_text()
    assert code == 0, said
    assert f"memlane {argv[0]}: stopping" in said
    if "serving the CLI's requests" in said:  # mcp shares its manager through the socket
        assert not (home / "state" / "daemon" / "sock").exists()


# tgkill(2): a signal for one thread. The kernel hands `kill`'s process-wide SIGTERM to any
# thread that does not block it; this sends it to a chosen one.
_TGKILL = {"x86_64": 234, "aarch64": 131}.get(platform.machine())


def _sigterm_to_a_thread_other_than_main(pid: int) -> None:
    assert _TGKILL is not None
    others = [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]
    assert others, "the server runs threads"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(_TGKILL, pid, others[-1], signal.SIGTERM) == 0, ctypes.get_errno()


@pytest.mark.skipif(_TGKILL is None, reason="tgkill's number is known here for x86_64/aarch64")
@pytest.mark.parametrize(
    ("command", "ready"),
    [
        (["watch"], "watching; Ctrl-C to stop"),
        (["serve", "--port", "{port}"], "memlane gRPC listening on"),
    ],
    ids=["watch", "serve"],
)
def test_a_sigterm_taken_by_another_thread_still_stops_it(
    tmp_path: Path, command: list[str], ready: str
) -> None:
    """`serve` and `watch` waited in `Event.wait()`: a SIGTERM the kernel gave another thread
    was never handled, and the process ran on (a CI run's `serve` outlived its 30 s stop)."""
    home = make_home(tmp_path)
    argv = [a.replace("{port}", str(_free_port())) for a in command]
    err = tmp_path / "stderr.txt"
    where = ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")]
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlane.entrypoints", *where, *argv],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
            env=cli_env(home),
        )  # fmt: skip
        try:
            _wait_until_said(proc, err, ready)
            time.sleep(0.5)

            _sigterm_to_a_thread_other_than_main(proc.pid)
            code = proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert code == 0, err.read_text()
