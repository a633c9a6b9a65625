"""Shared set-up for the MCP end-to-end tests: a workspace on disk and the command to run."""

from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

NOTES = {
    "MEMORY.md": (
        "# Team memory\n\n"
        "We deploy the backend every Friday afternoon after the integration tests pass.\n"
        "The on-call engineer this quarter is Priya.\n"
    ),
    "memory/2026-01-05.md": (
        "# 2026-01-05\n\n"
        "数据库从 PostgreSQL 迁移到 SQLite，因为部署更简单。\n"
        "The cafeteria closes at 3 pm on Wednesdays.\n"
    ),
}
SESSION = [
    {
        "type": "message",
        "message": {"role": "user", "content": "When is the database migration window?"},
        "timestamp": "2026-11-25T09:00:00Z",
    },
    {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "The migration window is Saturday 02:00 to 02:30."}
            ],
        },
        "timestamp": "2026-11-25T09:00:05Z",
    },
]
KEYWORD_ONLY = "{agents: {defaults: {memorySearch: {provider: 'none', sources: ['memory', 'sessions'], sync: {watchDebounceMs: 200}}}}}"


@dataclass(frozen=True)
class Home:
    """A throw-away HOME with a workspace, a state dir (with one transcript) and a config."""

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def config(self) -> Path:
        return self.root / "config.json5"

    def args(self, *extra: str, keyword_only: bool = True) -> list[str]:
        """Global options then `mcp` and `extra`."""
        config = ["--config", str(self.config)] if keyword_only else []
        return [
            "-m", "memlane.entrypoints", *config,
            "--workspace", str(self.workspace), "--state-dir", str(self.state),
            "mcp", *extra,
        ]  # fmt: skip

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
        env.update(HOME=str(self.root), PYTHONUNBUFFERED="1")
        return env


def make_home(root: Path) -> Home:
    home = Home(root)
    for name, text in NOTES.items():
        path = home.workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    sessions = home.state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    lines = [json.dumps(r, ensure_ascii=False) for r in SESSION]
    (sessions / "chat.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    home.config.write_text(KEYWORD_ONLY, encoding="utf-8")
    return home


def python() -> str:
    return sys.executable


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
