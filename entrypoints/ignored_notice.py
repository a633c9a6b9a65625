"""Entry points: name the ignored config keys once per config change, not on every command.

A warning repeated on every search trains people to skip warnings. What was last shown is kept
as a fingerprint per agent in `<state dir>/ignored-keys.json` (beside the agents' folders, so
a disabled agent gets no folder of its own); a config whose ignored keys, reasons or file
differ is shown again, in full. `status --json` lists them always, `status --verbose` prints
them always. The file is a courtesy: when it cannot be read or written the keys are shown on
every command, as before; two processes writing it at once can at worst show them once more.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Final

from memlane.entrypoints.config.runtime import RuntimeConfig

SHOWN_FILE: Final = "ignored-keys.json"


def fingerprint(runtime: RuntimeConfig) -> str:
    """What a warning about `runtime`'s ignored keys says, and about which file."""
    said = [str(runtime.config_path or "")] + [f"{i.key}\0{i.reason}" for i in runtime.ignored]
    return hashlib.sha256("\n".join(said).encode()).hexdigest()


def to_show(runtime: RuntimeConfig, *, always: bool = False) -> bool:
    """Whether to warn about `runtime.ignored` now; records them as shown for this agent."""
    if not runtime.ignored:
        return False
    path = runtime.state_dir / SHOWN_FILE
    shown = _read(path)
    current = fingerprint(runtime)
    if shown.get(runtime.agent_id) == current:
        return always
    _write(path, {**shown, runtime.agent_id: current})
    return True


def _read(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: show (and try to record) again
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()}


def _write(path: Path, shown: dict[str, str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_text(json.dumps(shown, indent=1, sort_keys=True), encoding="utf-8")
        temporary.replace(path)  # a reader sees the old file or the new one, never half
    except OSError:
        pass  # read-only state directory: the keys are shown on every command instead
