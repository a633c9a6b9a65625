"""Helpers of the daemon tests: a workspace, the real `memlane` command, a daemon to stop."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memlane.entrypoints.daemon.control import lock_holder

CONFIG = "{agents: {defaults: {memorySearch: {provider: 'none', sync: {watchDebounceMs: 200}}}}}"


@dataclass
class Home:
    """A workspace, a config and a state dir; `run` is the console script in a subprocess."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def config(self) -> Path:
        return self.root / "config.json5"

    def base(self) -> list[str]:
        return ["--config", str(self.config), "--state-dir", str(self.state)]

    def run(
        self, *args: str, env: dict[str, str] | None = None, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memlane.entrypoints", *args],
            capture_output=True,
            text=True,
            env=self.env if env is None else env,
            cwd=self.ws,
            timeout=180,
            check=check,
        )

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "memlane.entrypoints", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env if env is None else env,
            cwd=self.ws,
        )

    def answered(self) -> int:
        """How many requests the running daemon has answered (`daemon status --json`)."""
        done = self.run(*self.base(), "daemon", "status", "--json", check=True)
        count = json.loads(done.stdout)["answered"]
        assert isinstance(count, int)
        return count


def make_home(root: Path) -> Home:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Deploys\n\nA rollback uses the previous image tag.\n")
    (ws / "memory" / "pets.md").write_text("# Pets\n\nThe cat is named Tofu.\n")
    (root / "config.json5").write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(root)
    return Home(root=root, env=env)


@contextlib.contextmanager
def stopped_at_end(home: Home) -> Iterator[None]:
    """Whatever daemon holds this home's lock at the end is ended (by its pid, ours alone)."""
    try:
        yield
    finally:
        pid = lock_holder(home.state)
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            until(lambda: lock_holder(home.state) is None)


def start_daemon(home: Home, env: dict[str, str] | None = None) -> int:
    done = home.run(*home.base(), "--workspace", str(home.ws), "daemon", "start", env=env)
    assert done.returncode == 0, done.stderr
    pid = lock_holder(home.state)
    assert pid, done.stdout
    assert f"(pid {pid})" in done.stdout
    return pid


def until(check: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()
