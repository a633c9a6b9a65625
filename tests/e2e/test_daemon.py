"""`memlane daemon`: the CLI hands search, get, status, index and events to a running daemon of
its state dir and prints exactly what it would have printed in-process (real processes: the
console script's module, the daemon `daemon start` spawns)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from memlane.entrypoints.daemon.control import lock_holder
from memlane.entrypoints.daemon.paths import daemon_dir, socket_path
from tests.e2e._daemon_support import make_home, start_daemon, stopped_at_end, until

pytestmark = pytest.mark.e2e


def _gone(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return True
    return fields[0] in ("Z", "X")  # a zombie until whoever adopted it reaps it


def test_one_daemon_from_start_to_stop_answers_every_agent_as_the_process_would(
    tmp_path: Path,
) -> None:
    """One indexed home (agents main and b), one daemon from `daemon start` to `daemon stop`:
    each check below was a test of its own that made the same home and started the same daemon;
    they run in an order where none sees another's edits (the edits come last but the stop)."""
    home = make_home(tmp_path)
    home.run(*home.base(), "--workspace", str(home.ws), "index", check=True)
    other_ws = home.root / "ws-b"  # agent b, indexed before the daemon starts
    (other_ws / "memory").mkdir(parents=True)
    (other_ws / "MEMORY.md").write_text("# B\n\nThe harbour opens at six.\n")
    home.run(*home.base(), "--agent", "b", "--workspace", str(other_ws), "index", check=True)
    with stopped_at_end(home):
        # `daemon status` exits 3 while none runs (as `systemctl status` does), 0 while one does.
        for form in ([], ["--json"]):
            none = home.run(*home.base(), "daemon", "status", *form)
            assert none.returncode == 3, none.stderr
            assert "not running" in none.stdout or json.loads(none.stdout)["running"] is False
        pid = start_daemon(home)  # started for main, with main's workspace
        again = home.run(*home.base(), "daemon", "start", check=True)
        assert again.stdout.strip() == f"memlane daemon already running (pid {pid})"
        shown = home.run(*home.base(), "daemon", "status", check=True).stdout
        assert f"pid {pid}" in shown and "answering" in shown

        # The daemon answers what the process would.
        folder, sock = daemon_dir(home.state), socket_path(home.state)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600 and stat.S_ISSOCK(sock.stat().st_mode)
        commands = [
            ["search", "--json", "rollback"],
            ["search", "rollback", "--explain"],
            ["search", "nothing-matches-this"],
            ["get", "memory/pets.md", "--from", "2", "--lines", "2", "--json"],
            ["get", "../outside.md"],  # refused: exit 1 and the same message
            ["events", "--limit", "3", "--json"],
            ["search", "--max-results", "0", "x"],  # bad usage: exit 2
        ]
        before = home.answered()
        for command in commands:
            served = home.run(*home.base(), *command)
            after = home.answered()
            assert after == before + 1, command  # the daemon answered it
            local = home.run(*home.base(), "--no-daemon", *command)
            assert (served.returncode, served.stdout) == (local.returncode, local.stdout), command
            assert served.stderr == local.stderr, command
            before = after  # the `--no-daemon` run is not the daemon's: the next counts from here

        # Every agent of the state dir is watched from the start (this is b's first request).
        status = json.loads(home.run(*home.base(), "--agent", "b", "status", "--json").stdout)
        assert status["watcher"]["pid"] == pid and status["workspace"] == str(other_ws)
        (other_ws / "memory" / "new.md").write_text("The ferry to the harbour is blue.\n")
        found = home.run(*home.base(), "--agent", "b", "search", "--json", "ferry", check=True)
        assert [h["path"] for h in json.loads(found.stdout)["results"]] == ["memory/new.md"]
        assert home.answered() == before + 2
        before += 2

        # Status and index through the daemon.
        status = json.loads(home.run(*home.base(), "status", "--json", check=True).stdout)
        assert status["daemon"] == {"running": True, "pid": pid, "servedBy": "daemon"}
        assert status["watcher"]["pid"] == pid  # it watches the workspace
        text = home.run(*home.base(), "status", check=True).stdout
        assert f"Daemon: running (pid {pid})" in text
        (home.ws / "memory" / "new.md").write_text("The ferry leaves at noon.\n")
        index = home.run(*home.base(), "index", check=True)
        assert index.stdout.startswith("sync: ") and "unchanged" in index.stdout
        assert home.answered() == before + 3
        before += 3
        local_status = home.run(*home.base(), "--no-daemon", "status", "--json", check=True)
        assert json.loads(local_status.stdout)["daemon"] == {
            "running": True,
            "pid": pid,
            "servedBy": "daemon",
        }

        # The --no-daemon flag and MEMLANE_NO_DAEMON bypass it.
        home.run(*home.base(), "--no-daemon", "search", "rollback", check=True)
        home.run(*home.base(), "search", "rollback", "--no-daemon", check=True)
        home.run(*home.base(), "search", "rollback", env={**home.env, "MEMLANE_NO_DAEMON": "1"})
        assert home.answered() == before
        home.run(*home.base(), "search", "rollback", check=True)
        assert home.answered() == before + 1
        before += 1

        # Another configuration of the agent is answered in-process.
        other = home.root / "other.json5"
        other.write_text(home.config.read_text().replace("provider: 'none'", "provider: 'none', "
                         "query: {maxResults: 1}"))  # fmt: skip
        args = ["--config", str(other), "--state-dir", str(home.state), "search", "--json", "the"]
        done = home.run(*args)
        local = home.run(*args, "--no-daemon")
        assert (done.returncode, done.stdout) == (local.returncode, local.stdout)
        assert "another workspace or configuration" in done.stderr
        assert "answering in-process" in done.stderr
        assert home.answered() == before
        home.run(*home.base(), "search", "rollback", check=True)  # its own still answered
        assert home.answered() == before + 1

        # An edit then a search at once finds the edit.
        notes = home.ws / "memory" / "pets.md"
        for round_ in range(6):
            word = f"zebrafinch{round_}"
            with notes.open("a") as f:
                f.write(f"\nThe bird is called {word}.\n")
            hits = json.loads(home.run(*home.base(), "search", "--json", word).stdout)["results"]
            assert [h["path"] for h in hits] == ["memory/pets.md"], round_
        (home.ws / "memory" / "deep" / "er").mkdir(parents=True)  # a new folder, then a file
        (home.ws / "memory" / "deep" / "er" / "q.md").write_text("Quokkas smile.\n")
        hits = json.loads(home.run(*home.base(), "search", "--json", "Quokkas").stdout)["results"]
        assert [h["path"] for h in hits] == ["memory/deep/er/q.md"]
        (home.ws / "memory" / "deep" / "er" / "q.md").unlink()
        hits = json.loads(home.run(*home.base(), "search", "--json", "Quokkas").stdout)["results"]
        assert hits == []
        (home.ws / "MEMORY.md").write_text("# Deploys\n\nA rollforward is never done.\n")
        hits = json.loads(home.run(*home.base(), "search", "--json", "rollforward").stdout)
        assert [h["path"] for h in hits["results"]] == ["MEMORY.md"]

        # `daemon stop`, then `daemon status` exits 3 again.
        stopped = home.run(*home.base(), "daemon", "stop", check=True)
        assert stopped.stdout.strip() == f"memlane daemon stopped (pid {pid})"
        assert home.run(*home.base(), "daemon", "status").returncode == 3
        assert lock_holder(home.state) is None
        assert not socket_path(home.state).exists()
        assert until(lambda: _gone(pid))  # the lock drops just before the process ends
        assert home.run(*home.base(), "daemon", "stop", check=True).stdout.strip() == (
            "no daemon runs"
        )


def test_a_state_dir_it_cannot_use_is_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    home = make_home(tmp_path)  # no index: the state dir `daemon start` is given is another
    blocked = home.root / "a-file"
    blocked.write_text("not a folder")

    done = home.run("--state-dir", str(blocked), "--workspace", str(home.ws), "daemon", "start")

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"cannot start the daemon in {blocked}: Not a directory" in done.stderr
