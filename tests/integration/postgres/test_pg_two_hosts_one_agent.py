"""Two hosts sync one agent into one PostgreSQL database, with different absolute paths.

Simulated with two state dirs and two workspace folders (same notes, same transcript, an extra
path beside each workspace), driven through the real CLI. The scope fingerprint records what
defines the index (extra paths as the index names them), not host paths, so the hosts take
turns without rebuilding each other's index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pg_server import fresh_database, unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

NOTES = {
    "ws/MEMORY.md": "# Memory\n\nWe deploy on Fridays.\n",
    "ws/memory/2026-03-01.md": "# 2026-03-01\n\nThe VPN keys rotate monthly.\n",
    "shared/runbook.md": "# Runbook\n\nRestart the queue worker first.\n",
}
SESSION = {"type": "message", "message": {"role": "user", "content": "When is the freeze?"}}
CONFIG = {
    "agents": {
        "defaults": {
            "memorySearch": {
                "provider": "none",
                "sources": ["memory", "sessions"],
                "extraPaths": ["../shared"],
                "store": {"driver": "postgres"},
            }
        }
    }
}


def _host(root: Path, agent: str) -> Path:
    for relative, text in NOTES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    sessions = root / "state" / "agents" / agent / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "chat.jsonl").write_text(json.dumps(SESSION) + "\n", encoding="utf-8")
    (root / "config.json5").write_text(json.dumps(CONFIG), encoding="utf-8")
    return root


def _memlane(host: Path, agent: str, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(host), MEMLANE_STORE_URL=url)
    return subprocess.run(
        [sys.executable, "-m", "memlane.entrypoints", "--config", str(host / "config.json5"),
         "--state-dir", str(host / "state"), "--agent", agent, "--workspace", str(host / "ws"),
         *args],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip


class TestTwoHostsOneAgent:
    def test_hosts_with_different_paths_take_turns_without_rebuilding(
        self, tmp_path: Path, pg_url: str
    ) -> None:
        url = fresh_database(pg_url)
        agent = unique_agent()
        first = _host(tmp_path / "host-a" / "deep" / "path", agent)
        second = _host(tmp_path / "b", agent)

        runs = [_memlane(host, agent, url, "index") for host in (first, second, first, second)]
        events = _memlane(first, agent, url, "events", "--limit", "1000", "--json")
        found = _memlane(second, agent, url, "search", "queue worker", "--json")

        for run in runs:
            assert run.returncode == 0, run.stderr
        assert runs[0].stdout.startswith("full reindex: 4 file(s) indexed")
        assert [r.stdout.split(":")[0] for r in runs[1:]] == ["sync", "sync", "sync"]
        types = [e["type"] for e in json.loads(events.stdout)]
        assert types.count("index_rebuilt") == 1
        assert types.count("reindex_required") == 1
        assert json.loads(found.stdout)["results"][0]["path"] == "../shared/runbook.md"
