"""Where a state dir's daemon files live, as Paths (protocol.py has the client's string forms)."""

from __future__ import annotations

import os
from pathlib import Path

from memlane.entrypoints.daemon import protocol


def state_dir_of(flag: str | None) -> Path:
    """`--state-dir` > `$MEMLANE_STATE_DIR` > ~/.memlane, absolute, for the `daemon` commands;
    an empty flag is refused with the line (and exit 2) every other command gives."""
    if flag == "":
        # Imported here: control.py and the server use this module without the CLI.
        from memlane.entrypoints.cli_options import ConfigProblem

        raise ConfigProblem(f"--state-dir: {protocol.EMPTY_STATE_DIR}")
    return Path(protocol.state_dir_of(flag, os.environ))


def daemon_dir(state: Path) -> Path:
    return state / protocol.DAEMON_FOLDER


def socket_path(state: Path) -> Path:
    return Path(protocol.socket_file(str(state)))


def lock_path(state: Path) -> Path:
    return Path(protocol.lock_file(str(state)))


def log_path(state: Path) -> Path:
    return Path(protocol.log_file(str(state)))
