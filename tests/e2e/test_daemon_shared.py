"""`watch` and `serve` serve the daemon socket with the index they hold (#27): the CLI's
search, status and index go to them as to `memlane daemon` (the same handshake, socket modes
and freshness), `status` / `daemon status` name the serving process; real processes."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.entrypoints.daemon.control import lock_holder
from memlane.entrypoints.daemon.paths import daemon_dir, socket_path
from tests.e2e._daemon_support import Home, make_home, start_daemon, stopped_at_end, until

pytestmark = pytest.mark.e2e


def _daemon_status(home: Home) -> dict[str, object]:
    done = home.run(*home.base(), "daemon", "status", "--json")
    assert done.returncode in (0, 3), done.stderr  # 3: none runs (yet, or any more)
    found: dict[str, object] = json.loads(done.stdout)
    return found


def _serving(home: Home, pid: int, command: str) -> bool:
    found = _daemon_status(home)
    return found["answering"] is True and found["pid"] == pid and found["servedBy"] == command


def _start(home: Home, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """`memlane ARGS` in the background, its stderr in a file (a pipe nobody reads could
    block it)."""
    log = home.root / f"{args[-1] if args[-1] != '--no-daemon' else args[-2]}.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memlane.entrypoints", *home.base(), *args],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=home.env,
            cwd=home.ws,
        )
    return proc, log


def _said(log: Path, text: str) -> bool:
    return text in log.read_text()


def _end(proc: subprocess.Popen[bytes], log: Path) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    return proc.returncode, log.read_text()


def test_watch_serve_mcp_and_a_daemon_take_turns_serving_one_home(tmp_path: Path) -> None:
    """One indexed home; the servers run one after another, each ended before the next starts
    (each step was a test of its own, from the same indexed home): a watch kept from serving, a
    watch that cannot serve, `serve`, an MCP stdio server, a watch serving with the daemon's
    guarantees, and last a watch beside a running daemon."""
    home = make_home(tmp_path)
    home.run(*home.base(), "--workspace", str(home.ws), "index", check=True)

    # --no-daemon keeps a watch from serving.
    watch, log = _start(home, "--workspace", str(home.ws), "watch", "--no-daemon")
    try:
        assert until(lambda: _said(log, "watching; Ctrl-C to stop"), timeout=120)
        assert lock_holder(home.state) is None and not socket_path(home.state).exists()
    finally:
        code, err = _end(watch, log)
    assert code == 0, err
    assert "serving the CLI's requests" not in err

    # A watch that cannot serve says so and watches on.
    # A folder where the socket goes: it can be neither removed nor bound.
    in_the_way = daemon_dir(home.state) / socket_path(home.state).name
    in_the_way.mkdir(parents=True)
    watch, log = _start(home, "--workspace", str(home.ws), "watch")
    try:
        assert until(lambda: _said(log, "watching; Ctrl-C to stop"), timeout=120)
        assert "cannot serve the CLI's requests on" in log.read_text()
        assert lock_holder(home.state) is None  # the lock was let go at once
        (home.ws / "memory" / "new.md").write_text("The heron fishes at dawn.\n")
        found = home.run(*home.base(), "search", "--json", "heron", check=True)
        assert [h["path"] for h in json.loads(found.stdout)["results"]] == ["memory/new.md"]
        assert watch.poll() is None
    finally:
        code, err = _end(watch, log)
    assert code == 0, err
    in_the_way.rmdir()  # the next servers bind the socket there

    # `serve` serves the CLI too.
    serve, log = _start(home, "--workspace", str(home.ws), "serve", "--port", "0")
    try:
        assert until(lambda: socket_path(home.state).exists(), timeout=120)
        assert until(lambda: _serving(home, serve.pid, "serve"))
        before = home.answered()
        served = home.run(*home.base(), "search", "--json", "rollback", check=True)
        assert home.answered() == before + 1
        local = home.run(*home.base(), "--no-daemon", "search", "--json", "rollback")
        assert served.stdout == local.stdout
    finally:
        code, err = _end(serve, log)
    assert code == 0, err
    assert lock_holder(home.state) is None

    # An MCP stdio server serves the CLI and its host.
    log = home.root / "mcp.log"
    argv = [sys.executable, "-m", "memlane.entrypoints", *home.base(), "--workspace"]
    with log.open("wb") as err_file:
        mcp = subprocess.Popen(
            [*argv, str(home.ws), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=home.env,
            cwd=home.ws,
        )
    assert mcp.stdin is not None and mcp.stdout is not None
    try:
        # Its line first (a file read): polling `daemon status` starts a process each time.
        assert until(lambda: _said(log, "serving the CLI's requests on"), timeout=120)
        assert until(lambda: _serving(home, mcp.pid, "mcp"), timeout=120)
        before = home.answered()
        served = home.run(*home.base(), "search", "--json", "rollback", check=True)
        assert home.answered() == before + 1
        local = home.run(*home.base(), "--no-daemon", "search", "--json", "rollback")
        assert served.stdout == local.stdout
        # Its host still talks MCP on stdout: nothing of the CLI's request reached it.
        hello = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}},
        }  # fmt: skip
        mcp.stdin.write((json.dumps(hello) + "\n").encode())
        mcp.stdin.flush()
        answer = json.loads(mcp.stdout.readline())
        assert answer["id"] == 1 and "serverInfo" in answer["result"]
    finally:
        mcp.stdin.close()  # the host hangs up: the server ends
        code = mcp.wait(timeout=120)
        mcp.stdout.close()
    assert code == 0, log.read_text()
    assert lock_holder(home.state) is None and not socket_path(home.state).exists()

    # A watch serves the CLI with the daemon's guarantees.
    watch, log = _start(home, "--workspace", str(home.ws), "watch")
    try:
        assert until(lambda: socket_path(home.state).exists(), timeout=120)
        assert until(lambda: _serving(home, watch.pid, "watch"))
        sock = socket_path(home.state)
        assert stat.S_IMODE(daemon_dir(home.state).stat().st_mode) == 0o700
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600

        before = home.answered()
        for command in (["search", "--json", "rollback"], ["search", "Tofu"], ["events"]):
            served = home.run(*home.base(), *command)
            after = home.answered()
            assert after == before + 1, command  # the watch process answered it
            local = home.run(*home.base(), "--no-daemon", *command)
            assert (served.returncode, served.stdout) == (local.returncode, local.stdout)
            assert served.stderr == local.stderr
            before = after  # the `--no-daemon` run is not the watch's: the next counts from here

        notes = home.ws / "memory" / "pets.md"  # an edit, then a search at once
        for round_ in range(3):
            word = f"kingfisher{round_}"
            with notes.open("a") as f:
                f.write(f"\nThe bird is called {word}.\n")
            hits = json.loads(home.run(*home.base(), "search", "--json", word).stdout)
            assert [h["path"] for h in hits["results"]] == ["memory/pets.md"], round_

        status = json.loads(home.run(*home.base(), "status", "--json", check=True).stdout)
        assert status["daemon"] == {"running": True, "pid": watch.pid, "servedBy": "watch"}
        text = home.run(*home.base(), "--no-daemon", "status", check=True).stdout
        assert f"Daemon: served by `memlane watch` (pid {watch.pid})" in text
        shown = home.run(*home.base(), "daemon", "status", check=True).stdout
        assert f"pid {watch.pid}, memlane watch" in shown and "answering" in shown

        index = home.run(*home.base(), "index", check=True)
        assert index.stdout.startswith("sync: ")

        # Another agent is not this watch's: answered in-process, said once.
        other = home.run(*home.base(), "--agent", "b", "search", "--json", "x")
        assert "serves agent 'main' only" in other.stderr and "in-process" in other.stderr

        # `daemon stop` does not end a watch; `daemon start` says who serves.
        stop = home.run(*home.base(), "daemon", "stop")
        assert stop.returncode == 1 and f"`memlane watch` (pid {watch.pid})" in stop.stderr
        start = home.run(*home.base(), "daemon", "start", check=True)
        assert f"`memlane watch` (pid {watch.pid}) already serves" in start.stdout
        assert watch.poll() is None
    finally:
        code, err = _end(watch, log)
    assert code == 0, err
    assert "serving the CLI's requests on" in err
    assert lock_holder(home.state) is None and not socket_path(home.state).exists()
    after_end = home.run(*home.base(), "search", "rollback", check=True)
    assert after_end.stderr == ""  # nothing to say: no daemon, no stale socket

    # A watch beside a daemon leaves the socket to it.
    with stopped_at_end(home):
        pid = start_daemon(home)
        watch, log = _start(home, "--workspace", str(home.ws), "watch")
        try:
            assert until(lambda: _said(log, "watching; Ctrl-C to stop"), timeout=120)
            served = home.run(*home.base(), "search", "rollback", check=True)
            assert served.stderr == ""
            assert _serving(home, pid, "daemon")
        finally:
            code, err = _end(watch, log)
        assert code == 0, err
        assert f"`memlane daemon` (pid {pid}) serves the CLI's requests" in err
        assert _serving(home, pid, "daemon")  # the watch's end left the daemon alone


def test_a_state_dir_past_af_unix_path_limit_is_served(tmp_path: Path) -> None:
    """The socket's path is over AF_UNIX's 107 bytes; it is bound and reached through its
    folder's /proc/self/fd name, so the watch serves the CLI and its lease answers searches."""
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    home = make_home(deep)
    assert len(str(socket_path(home.state))) > 107
    home.run(*home.base(), "--workspace", str(home.ws), "index", check=True)
    watch, log = _start(home, "--workspace", str(home.ws), "watch")
    try:
        # Its line first (a file read): polling `daemon status` starts a process each time.
        assert until(lambda: _said(log, "serving the CLI's requests on"), timeout=120)
        assert until(lambda: _serving(home, watch.pid, "watch"), timeout=120)
        assert stat.S_IMODE(socket_path(home.state).stat().st_mode) == 0o600
        before = home.answered()
        (home.ws / "memory" / "new.md").write_text("The heron fishes at dawn.\n")
        found = home.run(*home.base(), "search", "--json", "heron", check=True)
        assert home.answered() == before + 1  # the watch process answered it
        assert [h["path"] for h in json.loads(found.stdout)["results"]] == ["memory/new.md"]
        assert "cannot serve" not in log.read_text()
    finally:
        code, err = _end(watch, log)
    assert code == 0, err
