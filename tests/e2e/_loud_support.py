"""Shared helpers of the issue-14 end-to-end tests: a workspace and the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

NOTES = {
    "MEMORY.md": "# Preferences\n\nThe user prefers tabs over spaces and dark mode.\n",
    "memory/2026-11-17.md": "# Deploy\n\npgbouncer runs in transaction mode.\n",
}


def make_home(root: Path, notes: Mapping[str, str] = NOTES) -> Path:
    """`root/ws` with the notes, an empty `root/state`; returns `root`."""
    for name, text in notes.items():
        path = root / "ws" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "state").mkdir(exist_ok=True)
    return root


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI run: no user config, no provider keys, keyword-only by default."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMLANE_", "OPENAI_", "GEMINI_", "GOOGLE_", "VOYAGE_", "MISTRAL_"))
    }
    env["HOME"] = str(home)
    env.setdefault("MEMLANE_PROVIDER", "none")
    env.update(extra)
    return env


def memlane(
    home: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    state: bool = True,
    stdin: str | None = None,
    timeout: float = 120,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m memlane.entrypoints [--state-dir S --workspace W] args...` (in `cwd`, by
    default the test run's own folder)."""
    where = ["--state-dir", str(home / "state"), "--workspace", str(home / "ws")] if state else []
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", *where, *args],
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else cli_env(home),
        input=stdin,
        timeout=timeout,
        cwd=cwd,
        check=False,
    )


def no_traceback(done: subprocess.CompletedProcess[str]) -> bool:
    """Neither stream carries a Python traceback."""
    return "Traceback" not in done.stderr and "Traceback" not in done.stdout
