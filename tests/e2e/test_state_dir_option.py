"""The state dir as `--state-dir` and MEMLANE_STATE_DIR name it: `~` is the home folder for the
CLI and for the daemon alike (one index, not a literal `./~` beside the daemon's), the variable
is the caller's even when a daemon runs the command, and an empty flag is a usage error (real
processes: the console script's module, the daemon `daemon start` spawns)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlane.entrypoints.daemon.control import lock_holder
from tests.e2e._daemon_support import Home, make_home, start_daemon, stopped_at_end, until

pytestmark = pytest.mark.e2e

EMPTY = "--state-dir: is empty"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    made = make_home(tmp_path)
    made.env["HOME"] = str(tmp_path / "home")
    (tmp_path / "elsewhere").mkdir()
    return made


def memlane(
    home: Home, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The console script, run from a folder of its own (where a literal `~` would land)."""
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--config", str(home.config), *args],
        capture_output=True,
        text=True,
        env={**home.env, **(env or {})},
        cwd=home.root / "elsewhere",
        timeout=180,
        check=False,
    )


@contextlib.contextmanager
def ended(state: Path) -> Iterator[None]:
    """Whatever daemon holds `state`'s lock at the end is ended (by its pid, ours alone)."""
    try:
        yield
    finally:
        pid = lock_holder(state)
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            until(lambda: lock_holder(state) is None)


def store_path(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    path = json.loads(done.stdout)["storePath"]
    assert isinstance(path, str)
    return path


def answered(home: Home, *state: str) -> int:
    done = memlane(home, *state, "daemon", "status", "--json")
    assert done.returncode == 0, done.stderr
    count = json.loads(done.stdout)["answered"]
    assert isinstance(count, int)
    return count


@pytest.mark.parametrize("named_by", ["flag", "variable"])
def test_a_tilde_state_dir_is_in_the_home_folder(home: Home, named_by: str) -> None:
    by_flag = named_by == "flag"
    state = ["--state-dir", "~/st"] if by_flag else []
    env = {} if by_flag else {"MEMLANE_STATE_DIR": "~/st"}

    done = memlane(home, *state, "--workspace", str(home.ws), "index", env=env)

    assert done.returncode == 0, done.stderr
    status = memlane(home, *state, "--workspace", str(home.ws), "status", "--json", env=env)
    assert store_path(status) == str(home.root / "home" / "st" / "agents" / "main" / "memory.db")
    assert os.listdir(home.root / "elsewhere") == []


def test_the_daemon_serves_the_index_a_tilde_state_dir_names(home: Home) -> None:
    state = ["--state-dir", "~/st"]
    with ended(home.root / "home" / "st"):
        indexed = memlane(home, *state, "--workspace", str(home.ws), "index")
        assert indexed.returncode == 0, indexed.stderr
        started = memlane(home, *state, "--workspace", str(home.ws), "daemon", "start")
        assert started.returncode == 0, started.stderr
        before = answered(home, *state)

        found = memlane(home, *state, "search", "rollback")

        assert found.returncode == 0, found.stderr
        assert "MEMORY.md" in found.stdout
        assert found.stderr == ""  # no "does not serve this command" fallback line
        assert answered(home, *state) == before + 1
        assert os.listdir(home.root / "elsewhere") == []  # no second index


def test_the_variable_is_the_callers_not_the_daemons(home: Home) -> None:
    home.run(*home.base(), "--workspace", str(home.ws), "index", check=True)
    with stopped_at_end(home):
        # The daemon's own environment names another state dir; its --state-dir wins for it.
        start_daemon(home, env={**home.env, "MEMLANE_STATE_DIR": str(home.root / "other")})
        before = home.answered()

        found = home.run("--config", str(home.config), "search", "rollback",
                         env={**home.env, "MEMLANE_STATE_DIR": str(home.state)})  # fmt: skip

        assert found.returncode == 0, found.stderr
        assert found.stderr == ""  # no "it serves ..., not ..." fallback line
        assert home.answered() == before + 1


@pytest.mark.parametrize(
    "args",
    [
        ["--state-dir", "", "status"],
        ["status", "--state-dir", ""],  # a global option after the command
        ["--state-dir=", "search", "rollback"],
        ["--state-dir", "", "daemon", "start"],
        ["daemon", "status", "--state-dir", ""],
    ],
)
def test_an_empty_state_dir_flag_is_a_usage_error(home: Home, args: list[str]) -> None:
    default_state = home.root / "home" / ".memlane"
    with ended(default_state):
        done = memlane(home, "--workspace", str(home.ws), *args)

        assert done.returncode == 2, done.stdout
        assert EMPTY in done.stderr
        assert "Traceback" not in done.stderr
        assert os.listdir(home.root / "elsewhere") == []
        assert lock_holder(default_state) is None  # the default's daemon was not started


def test_an_empty_variable_is_unset_and_an_empty_path_flag_an_error(home: Home) -> None:
    default_store = home.root / "home" / ".memlane" / "agents" / "main" / "memory.db"
    status = memlane(
        home, "--workspace", str(home.ws), "status", "--json", env={"MEMLANE_STATE_DIR": ""}
    )
    assert store_path(status) == str(default_store)

    for flag in ("--workspace", "--config", "--agent"):
        done = memlane(home, "--state-dir", str(home.state), flag, "", "status")

        assert done.returncode == 2, (flag, done.stdout)
        assert f"{flag}: is empty" in done.stderr
        started = memlane(home, "--state-dir", str(home.state), flag, "", "daemon", "start")
        assert started.returncode == 2 and f"{flag}: is empty" in started.stderr
        assert lock_holder(home.state) is None  # no daemon was started
    assert os.listdir(home.root / "elsewhere") == []


def test_the_config_variable_is_the_callers_not_the_daemons(home: Home) -> None:
    """A daemon started under MEMLANE_CONFIG must not answer a caller without it by that file
    (click read the variable from the daemon's own environment)."""
    other = home.root / "other.json5"
    other.write_text("{agents: {defaults: {memorySearch: {provider: 'none'}}}}")
    state = ["--state-dir", str(home.state), "--workspace", str(home.ws)]
    with stopped_at_end(home):
        started = home.run(
            *state, "daemon", "start", env={**home.env, "MEMLANE_CONFIG": str(other)}
        )
        assert started.returncode == 0, started.stderr

        served = home.run(*state, "status", "--json")
        alone = home.run(*state, "status", "--json", env={**home.env, "MEMLANE_NO_DAEMON": "1"})

        assert served.returncode == 0, served.stderr
        assert json.loads(alone.stdout)["configPath"] is None  # no config file for the caller
        assert json.loads(served.stdout)["configPath"] is None
