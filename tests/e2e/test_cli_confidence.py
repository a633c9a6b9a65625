"""The CLI shows each hit's confidence and says when it found no strong match (`noStrongMatch`).

The real `memlane` CLI as a subprocess, real files, the real store and the bundled model. The
memory: ten near-identical weather notes (a plateau of look-alikes for any question about the
weather, which its words still find) and one note about pgbouncer (which stands out for a
question about it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

PGBOUNCER = (
    "# Database\n\nFixed the prepared statement error: pgbouncer runs in transaction mode, so "
    "asyncpg needs statement_cache_size=0.\n"
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("confidence")
    notes = root / "ws" / "memory"
    notes.mkdir(parents=True)
    for day in range(1, 11):
        text = f"# Day {day}\n\nThe weather on day {day} was mild and cloudy.\n"
        (notes / f"day-{day:02d}.md").write_text(text, encoding="utf-8")
    (root / "ws" / "MEMORY.md").write_text(PGBOUNCER, encoding="utf-8")
    return root


def memlane(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env["HOME"] = str(home)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "memlane.entrypoints",
            "--state-dir",
            str(home / "state"),
            "--workspace",
            str(home / "ws"),
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


def test_a_hit_that_stands_out_is_a_strong_match(home: Path) -> None:
    done = memlane(home, "search", "--json", "pgbouncer transaction mode asyncpg statement cache")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["mode"] == "hybrid" and payload["noStrongMatch"] is False
    results = payload["results"]
    assert results[0]["path"] == "MEMORY.md"
    assert all(isinstance(r["confidence"], float) for r in results)
    assert results[0]["confidence"] == max(r["confidence"] for r in results)


def test_a_plateau_its_words_find_is_not_marked(home: Path) -> None:
    done = memlane(home, "search", "--json", "what was the weather like")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["mode"] == "hybrid" and payload["noStrongMatch"] is False
    assert payload["results"][0]["path"].startswith("memory/day-")


def test_a_question_the_memory_holds_nothing_on_is_marked_in_json_and_text(home: Path) -> None:
    query = "who won the chess tournament in Oslo"
    as_json = memlane(home, "search", "--json", query)
    text = memlane(home, "search", query)
    assert as_json.returncode == 0 and text.returncode == 0, as_json.stderr + text.stderr
    payload = json.loads(as_json.stdout)
    assert payload["noStrongMatch"] is True
    assert payload["results"]  # marked, not removed
    assert text.stdout.startswith("No strong match:")
    assert "(confidence " in text.stdout
