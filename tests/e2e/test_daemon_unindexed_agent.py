"""An agent that has no index: a reading command creates nothing for it, a daemon does not take
it on, and through the daemon each command prints what it prints in-process (real processes:
the console script's module, the daemon `daemon start` spawns)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlane.adapters.store.database import SqliteDatabase
from memlane.entrypoints.daemon.paths import daemon_dir
from tests.e2e._daemon_support import Home, make_home, start_daemon, stopped_at_end

pytestmark = pytest.mark.e2e


def _run(home: Home, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script from `cwd` (the daemon's client sends its folder along)."""
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", *home.base(), *args],
        capture_output=True,
        text=True,
        env=home.env,
        cwd=cwd,
        timeout=180,
        check=False,
    )


def _answer(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def home() -> Iterator[Home]:
    # A short root: the daemon's log compared below names paths; short ones keep it readable.
    root = Path(tempfile.mkdtemp(prefix="mu", dir="/tmp"))
    made = make_home(root)
    made.run(*made.base(), "--workspace", str(made.ws), "index", check=True)
    yield made
    shutil.rmtree(root, ignore_errors=True)


def test_an_agent_without_an_index_from_reading_commands_to_a_daemon_to_its_first_search(
    home: Home,
) -> None:
    """One indexed home (agent main) and agents without an index, each step was a test of its
    own from the same home: reading commands create nothing; then one daemon takes on no agent
    without a recorded workspace, and through it a new agent's first search binds it."""
    # The README: `status` records nothing; nor do `get` and `events` create the agent.
    commands = [
        ["status"],
        ["status", "--json"],
        ["events", "--json"],
        ["get", "MEMORY.md"],
    ]
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    for command in commands:
        done = home.run(*home.base(), "--no-daemon", "--agent", "other", *command)
        assert done.returncode == 0, (command, done.stderr)
        ran[" ".join(command)] = done

    assert not (home.state / "agents" / "other").exists()
    status = ran["status --json"]  # the loop's own runs: nothing ran in between but reads
    shown = json.loads(status.stdout)
    assert shown["storePath"] == str(home.state / "agents" / "other" / "memory.db")
    assert (shown["files"], shown["chunks"], shown["lastSync"]) == (0, 0, None)
    events = ran["events --json"]
    assert json.loads(events.stdout) == []

    # A daemon takes on no agent without a recorded workspace: an index file that recorded no
    # workspace (left by a status of an older memlane) is not served from the start; each
    # command from any folder prints its in-process answer, through the daemon, without a log
    # line or a fallback.
    (home.state / "agents" / "other").mkdir()
    SqliteDatabase.open(home.state / "agents" / "other" / "memory.db").close()
    first, second = home.root / "first", home.root / "second"
    first.mkdir()
    second.mkdir()
    with stopped_at_end(home):
        start_daemon(home)
        log = (daemon_dir(home.state) / "log").read_text()
        assert "serving agent main" in log
        assert "serving agent other" not in log
        before = home.answered()
        for cwd, command in [
            (first, ["status"]),
            (second, ["status"]),
            (second, ["events"]),
            (first, ["events", "--json"]),
            (second, ["get", "MEMORY.md"]),
        ]:
            served = _run(home, cwd, "--agent", "other", *command)
            after = home.answered()
            assert after == before + 1, command  # the daemon answered it
            local = _run(home, cwd, "--no-daemon", "--agent", "other", *command)
            assert _answer(served) == _answer(local), command
            assert "{" not in served.stderr, command  # no JSON log line
            before = after  # the `--no-daemon` run is not the daemon's: the next counts from here
        assert "serving agent other" not in (daemon_dir(home.state) / "log").read_text()

        # The first search of a new agent through the daemon binds as in-process: the search
        # records the folder it ran from and says so in the in-process `warning:` line; from
        # then on the daemon serves the agent, from any folder.
        notes = home.root / "notes"
        (notes / "memory").mkdir(parents=True)
        (notes / "memory" / "zoo.md").write_text("The quokka census starts in March.\n")
        elsewhere = home.root / "elsewhere"
        elsewhere.mkdir()
        served = _run(home, notes, "--agent", "fresh", "search", "quokka", "--json")
        assert home.answered() == before + 1
        assert served.returncode == 0, served.stderr
        assert served.stderr == (
            "warning: no workspace configured: this index is now bound to the current "
            f"directory {notes} (pass --workspace or set agents.defaults.workspace to choose)\n"
        )
        hits = json.loads(served.stdout)["results"]
        assert [h["path"] for h in hits] == ["memory/zoo.md"]

        again = _run(home, elsewhere, "--agent", "fresh", "search", "quokka", "--json")
        status = _run(home, elsewhere, "--agent", "fresh", "status", "--json")
        assert home.answered() == before + 3  # no fallback: one manager, bound to `notes`
        assert (again.returncode, again.stderr) == (0, "")
        assert json.loads(again.stdout)["results"] == hits
        shown = json.loads(status.stdout)
        assert shown["workspace"] == str(notes)
        assert shown["watcher"]["pid"] == shown["daemon"]["pid"]  # now it watches it
