"""Bench: a new agent's first index and `index --force` on PostgreSQL, by the real CLI.

Each file's postings are deleted before its rows are written again. For an agent the table
statistics did not know yet (a new agent, a rebuild's temporary id) the planner once looped over
all of the agent's postings per file, so these two runs grew with the square of the notes. The
notes are keyword-only (provider none): the time is the store's, not a model's.

    python -m bench.pg_first_index_bench [--notes 800] [--out bench/results/pg_first_index.json]

Prints one line per run (wall seconds) and writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.pg_server import bench_server, fresh_database


def _workspace(root: Path, notes: int) -> Path:
    memory = root / "ws" / "memory"
    memory.mkdir(parents=True)
    for i in range(notes):
        (memory / f"n{i}.md").write_text(
            f"# Note {i}\nTopic alpha{i} deploy {i}.\nMore text line {i} banana cherry.\n"
        )
    return root / "ws"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pg_first_index_bench")
    parser.add_argument("--notes", type=int, default=800)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    runs: list[dict[str, object]] = []
    with bench_server() as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = _workspace(root, args.notes)
        config = root / "config.json5"
        config.write_text('{agents: {defaults: {memorySearch: {provider: "none", '
                          'store: {driver: "postgres"}}}}}')  # fmt: skip
        env = dict(os.environ, MEMLANE_STORE_URL=fresh_database(server, "first_index_bench"))
        env["MEMLANE_NO_DAEMON"] = "1"
        cli = [sys.executable, "-m", "memlane.entrypoints", "--config", str(config),
               "--state-dir", str(root / "state"), "--workspace", str(workspace)]  # fmt: skip
        # p1 fills the tables; p2's first index and rebuild are an agent the statistics lack.
        for agent, extra, what in (
            ("p1", [], "first index, empty database"),
            ("p2", [], "first index, second agent"),
            ("p2", ["--force"], "index --force"),
        ):
            started = time.perf_counter()
            done = subprocess.run([*cli, "--agent", agent, "index", *extra], env=env,
                                  capture_output=True, text=True, check=False)  # fmt: skip
            seconds = round(time.perf_counter() - started, 2)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            runs.append({"run": what, "notes": args.notes, "seconds": seconds})
            print(f"{what:<28} {args.notes} notes  {seconds:6.1f} s")
    if args.out is not None:
        args.out.write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
