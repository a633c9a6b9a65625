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


def test_reading_commands_create_no_index_for_an_agent_without_one(home: Home) -> None:
    """The README: `status` records nothing; nor do `get` and `events` create the agent."""
    commands = [
        ["status"],
        ["status", "--json"],
        ["events", "--json"],
        ["get", "MEMORY.md"],
    ]
    for command in commands:
        done = home.run(*home.base(), "--no-daemon", "--agent", "other", *command)
        assert done.returncode == 0, (command, done.stderr)

    assert not (home.state / "agents" / "other").exists()
    status = home.run(*home.base(), "--no-daemon", "--agent", "other", "status", "--json")
    shown = json.loads(status.stdout)
    assert shown["storePath"] == str(home.state / "agents" / "other" / "memory.db")
    assert (shown["files"], shown["chunks"], shown["lastSync"]) == (0, 0, None)
    events = home.run(*home.base(), "--no-daemon", "--agent", "other", "events", "--json")
    assert json.loads(events.stdout) == []


def test_a_daemon_takes_on_no_agent_without_a_recorded_workspace(home: Home) -> None:
    """An index file that recorded no workspace (left by a status of an older memlane) is not
    served from the start; each command from any folder prints its in-process answer, through
    the daemon, without a log line or a fallback."""
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
        for cwd, command in [
            (first, ["status"]),
            (second, ["status"]),
            (second, ["events"]),
            (first, ["events", "--json"]),
            (second, ["get", "MEMORY.md"]),
        ]:
            before = home.answered()
            served = _run(home, cwd, "--agent", "other", *command)
            assert home.answered() == before + 1, command  # the daemon answered it
            local = _run(home, cwd, "--no-daemon", "--agent", "other", *command)
            assert _answer(served) == _answer(local), command
            assert "{" not in served.stderr, command  # no JSON log line
        assert "serving agent other" not in (daemon_dir(home.state) / "log").read_text()


def test_the_first_search_of_a_new_agent_through_the_daemon_binds_as_in_process(
    home: Home,
) -> None:
    """The search records the folder it ran from and says so in the in-process `warning:`
    line; from then on the daemon serves the agent, from any folder."""
    notes = home.root / "notes"
    (notes / "memory").mkdir(parents=True)
    (notes / "memory" / "zoo.md").write_text("The quokka census starts in March.\n")
    elsewhere = home.root / "elsewhere"
    elsewhere.mkdir()
    with stopped_at_end(home):
        start_daemon(home)
        before = home.answered()
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
