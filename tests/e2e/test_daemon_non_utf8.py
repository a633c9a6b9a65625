"""A command line that is not valid UTF-8 (an argument, a variable or the current folder in
another encoding, which Python holds as lone surrogates) is answered by a running daemon exactly
as the process answers it (real processes: the console script's module, the daemon `daemon
start` spawns). The client used to crash encoding its request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e._daemon_support import Home, make_home, start_daemon, stopped_at_end

pytestmark = pytest.mark.e2e

BYTE_FF = "\udcff"  # the byte 0xff as os.fsdecode holds it (surrogateescape)


def run(
    home: Home, *args: str, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    """The console script, its output as bytes: a non-UTF-8 byte may come back in it."""
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", *home.base(), *args],
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=180,
        check=False,
    )


def test_non_utf8_arguments_variables_and_folders_get_the_in_process_answer(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path)
    home.run(*home.base(), "--workspace", str(home.ws), "index", check=True)
    odd_folder = tmp_path / f"d{BYTE_FF}"
    odd_folder.mkdir()
    cases = [
        # A variable memlane never reads, then one it reads (its value quoted in the error).
        ([], {"WEIRD": f"x{BYTE_FF}"}, home.ws),
        ([], {"MEMLANE_PROVIDER": f"n{BYTE_FF}ne"}, home.ws),
        # The folder: the relative workspace resolves from it, in the daemon as here.
        (["--workspace", "../ws"], {}, odd_folder),
    ]
    with stopped_at_end(home):
        start_daemon(home)
        for options, variables, cwd in cases:
            for query in ("rollback", f"rollback{BYTE_FF}"):  # and an argument
                command = [*options, "search", query]
                env = {**home.env, **variables}
                before = home.answered()
                served = run(home, *command, env=env, cwd=cwd)
                assert home.answered() == before + 1, (command, variables)  # not a fallback
                local = run(home, "--no-daemon", *command, env=env, cwd=cwd)
                assert b"Traceback" not in served.stderr, served.stderr
                assert (served.returncode, served.stdout, served.stderr) == (
                    local.returncode,
                    local.stdout,
                    local.stderr,
                ), (command, variables)
