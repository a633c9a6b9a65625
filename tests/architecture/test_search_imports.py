"""A search whose question names no time does not import the time-word parser, whose tables
compile ~50-80 ms of patterns at import, though the window boost is on by default (the gate,
application/time_ranking.py); `--explain` does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys
from memlane.entrypoints.api import close_all, open_manager
manager = open_manager(workspace=sys.argv[1], state_dir=sys.argv[2], config_path=sys.argv[3])
manager.sync()
first = manager.search("backup bucket").results
default = "memlane.domain.time_words" in sys.modules
manager.search("backup bucket last week", explain=True)
explained = "memlane.domain.time_words" in sys.modules
close_all()
print(json.dumps({"hits": len(first), "default": default, "explained": explained}))
"""


def test_the_time_word_parser_is_imported_only_when_a_search_reads_time_words(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# Notes\n\nThe backup bucket is in Oslo.\n")
    config = tmp_path / "config.json5"
    config.write_text("{agents: {defaults: {memorySearch: {provider: 'none'}}}}")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ws), str(tmp_path / "state"), str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"hits": 1, "default": False, "explained": True}
