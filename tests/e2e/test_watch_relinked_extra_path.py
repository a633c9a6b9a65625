"""An extra path that is a symlink, pointed elsewhere while `memlane watch` runs: searches find
the new target's notes, and the watcher does not say every change is indexed meanwhile.

Before, the watcher and its change journal watched only the old target (the roots were real
paths): the lease said "fresh", searches skipped their scan and answered from the old target,
while `get` of the same path read the new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlane.adapters.sources.watch_lease import FileWatchLease
from tests.e2e._daemon_support import until

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_a_relinked_extra_path_is_searched_where_it_now_leads(tmp_path: Path, kind: str) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# M\n")
    for name, word in (("target1", "hoopoe"), ("target2", "lemming")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "h.md").write_text(f"# H\n\n{name} {word}\n")
    link = tmp_path / ("extlink" if kind == "folder" else "extlink.md")
    first, second = tmp_path / "target1", tmp_path / "target2"
    if kind == "file":
        first, second = first / "h.md", second / "h.md"
    link.symlink_to(first)
    config = tmp_path / "config.json5"
    block = {"provider": "none", "extraPaths": [str(link)], "sync": {"watchDebounceMs": 200}}
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config)]
    base += ["--state-dir", str(state), "--workspace", str(ws)]
    lease = FileWatchLease(str(state / "agents" / "main" / "watch.lease"))

    def search(word: str) -> list[str]:
        done = subprocess.run(
            [*base, "search", "--json", word],
            capture_output=True, text=True, env=env, timeout=120, check=True,
        )  # fmt: skip
        return [r["snippet"] for r in json.loads(done.stdout)["results"]]

    def fresh() -> bool:
        holder = lease.holder()
        return holder is not None and holder.fresh

    with subprocess.Popen([*base, "watch"], env=env, stderr=subprocess.PIPE, text=True) as watch:
        try:
            assert watch.stderr is not None
            while "watching" not in watch.stderr.readline():
                assert watch.poll() is None
            assert until(fresh)
            assert any("hoopoe" in s for s in search("hoopoe"))

            relinked = tmp_path / "relinked"
            relinked.symlink_to(second)
            relinked.replace(link)  # `ln -sfn`: a new link renamed over the old one

            assert until(lambda: any("lemming" in s for s in search("lemming")))
            assert search("hoopoe") == []  # the old target's notes are gone from the index
        finally:
            watch.terminate()
            watch.wait(timeout=60)
