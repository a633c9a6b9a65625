"""Benchmark: a first index of a large history, keyword rows first (issue #18).

Runs the real CLI (`memlane index`, the bundled model unless `--provider` says otherwise) on a
fresh workspace in a subprocess and watches the database file from outside (plain SQLite reads,
once a second): when the keyword rows are committed, a `memlane search --json` runs in a second
process, so **time to first answer** is the index start to that search's answer, as a user
would see it. Then the vector backfill is followed: vectors committed over time, the measured
rate, and **time to full vectors**, measured when the backfill finishes within
`--backfill-seconds`, else extrapolated from the measured rate (and the index process is
SIGKILLed: the backfill resumes on the next run, see tests/integration/flows/
test_backfill_kill.py).

Workspaces:
  lme-s       the haystack of the first `--questions` LongMemEval-S questions (transcripts);
  synthetic   `--chunks` chunks of notes whose text is drawn from the LongMemEval-S turns.

Run (one heavy job at a time, niced):
  nice .venv/bin/python -m memlane.bench.backfill_bench lme-s --questions 1
  nice .venv/bin/python -m memlane.bench.backfill_bench synthetic --chunks 100000 \
      --backfill-seconds 240
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from memlane.bench.datasets import longmemeval
from memlane.bench.workspace import UnitPaths, materialize

LME_S = Path("/work/shared/data/longmemeval_s/longmemeval_s_cleaned_subset48.json")
RESULTS = Path(__file__).parent / "results"
AGENT = "bench"
NOTE_CHARS = 5 * 1600  # ~8.5k characters once the last turn is added: seven chunks per note
CHUNKS_PER_NOTE = 7  # the default chunker's windows of 1,600 characters every 1,280


def _lme_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(LME_S.read_text(encoding="utf-8"))
    return items


def _write_lme(root: Path, questions: int) -> tuple[UnitPaths, str]:
    """The haystacks of the first `questions` questions as transcripts; the first question."""
    paths = UnitPaths(root)
    units = list(longmemeval.dataset(LME_S).units())[:questions]
    files = {f.name: f for unit in units for f in unit.files}
    merged = units[0].__class__(
        unit_id="backfill", files=tuple(files.values()), queries=units[0].queries
    )
    materialize(merged, paths)
    return paths, units[0].queries[0].text


def _write_synthetic(root: Path, chunks: int) -> tuple[UnitPaths, str]:
    """Notes of ~seven chunks, their paragraphs drawn (seeded) from the LongMemEval-S turns."""
    paths = UnitPaths(root)
    paths.notes_dir.mkdir(parents=True, exist_ok=True)
    paths.sessions_dir.mkdir(parents=True, exist_ok=True)
    turns = [
        str(t["content"]).strip()
        for item in _lme_items()
        for session in item["haystack_sessions"]
        for t in session
        if len(str(t["content"])) > 80
    ]
    rng = random.Random(18)
    notes = max(1, chunks // CHUNKS_PER_NOTE)
    for n in range(notes):
        target = paths.notes_dir / f"note-{n:06}.md"
        if target.exists():
            continue
        parts = [f"# Note {n}\n"]
        size = 0
        while size < NOTE_CHARS:
            turn = rng.choice(turns)[:1200]
            parts.append(turn)
            size += len(turn)
        target.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return paths, "what did I say about my commute to work"


def _counts(db: Path) -> tuple[int, int, bool] | None:
    """(chunks, chunks with a vector, whether the index is complete: its meta record is written
    last) read below the adapter; None before the schema exists."""
    if not db.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            (total,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            (done,) = conn.execute(
                "SELECT count(*) FROM chunks WHERE model != 'fts-only'"
            ).fetchone()
            complete = conn.execute("SELECT 1 FROM meta WHERE key = 'index_meta'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return int(total), int(done), complete is not None


def _progress_query_ms(db: Path) -> dict[str, float] | None:
    """Median ms of the two statements of the SQLite store's `vector_progress` (every search
    runs them): as the index stands (partial), and the total alone (what is left of the cost
    when nothing is missing: the range scan around the model then reads no row)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT model FROM chunks WHERE model != 'fts-only' LIMIT 1").fetchone()
        if row is None:
            return None
        model = str(row[0])
        partial, total_only = [], []
        for _ in range(21):
            t = time.perf_counter()
            conn.execute(
                "SELECT count(*) FROM chunks WHERE model < ? OR model > ?", (model, model)
            ).fetchone()
            conn.execute("SELECT count(*) FROM chunks").fetchone()
            partial.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            conn.execute("SELECT count(*) FROM chunks").fetchone()
            total_only.append((time.perf_counter() - t) * 1000)
    finally:
        conn.close()
    return {
        "partial_ms": round(sorted(partial)[10], 2),
        "total_count_ms": round(sorted(total_only)[10], 2),
    }


def _argv(paths: UnitPaths, config: Path, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "memlane.entrypoints", "--config", str(config),
        "--state-dir", str(paths.state_dir), "--workspace", str(paths.workspace),
        "--agent", AGENT, *args,
    ]  # fmt: skip


def run(name: str, paths: UnitPaths, query: str, provider: str, budget: float) -> dict[str, Any]:
    config = paths.root / "config.json5"
    block = {"provider": provider,
             "sync": {"watch": False, "onSearch": False, "onSessionStart": False}}  # fmt: skip
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env["HOME"] = str(paths.root)
    db = paths.state_dir / "agents" / AGENT / "memory.db"
    log = paths.root / "index.log"
    started = time.monotonic()
    with log.open("wb") as err:
        child = subprocess.Popen(
            _argv(paths, config, "index"), env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    samples: list[tuple[float, int, int]] = []
    first_rows_at: float | None = None  # the first keyword rows a search can read
    keyword_at: float | None = None  # every file's keyword rows (the index meta written)
    search: dict[str, Any] = {}
    searching: threading.Thread | None = None
    killed = False
    while True:
        now = time.monotonic() - started
        counts = _counts(db)
        if counts is not None and counts[0] > 0:
            samples.append((round(now, 2), counts[0], counts[1]))
            if first_rows_at is None:
                first_rows_at = now
                # The search runs while the index process goes on (in a thread, so the
                # samples go on too): it answers from the rows committed so far.
                searching = threading.Thread(
                    target=lambda: search.update(_search(paths, config, env, query, started))
                )
                searching.start()
            if keyword_at is None and counts[2]:
                keyword_at = now
        finished = child.poll() is not None
        if finished:
            break
        if keyword_at is not None and now - keyword_at > budget:
            child.send_signal(signal.SIGKILL)
            child.wait()
            killed = True
            break
        time.sleep(1.0)
    if searching is not None:
        searching.join()
    final = _counts(db) or (0, 0, False)
    if keyword_at is None and final[2]:
        keyword_at = time.monotonic() - started
    samples.append((round(time.monotonic() - started, 2), final[0], final[1]))
    total, done = final[0], final[1]
    rate = _rate(samples)
    full = None if killed else samples[-1][0]
    return {
        "workspace": name,
        "provider": provider,
        "chunks": total,
        "files": sum(1 for _ in paths.notes_dir.iterdir())
        + sum(1 for _ in paths.sessions_dir.iterdir()),
        "first_keyword_rows_s": None if first_rows_at is None else round(first_rows_at, 2),
        "keyword_rows_committed_s": None if keyword_at is None else round(keyword_at, 2),
        "first_answer": search,
        "vectors_done": done,
        "backfill_rate_chunks_per_s": None if rate is None else round(rate, 3),
        "full_vectors_s_measured": full,
        "full_vectors_s_extrapolated": (
            None
            if not killed or not rate or keyword_at is None
            else round(samples[-1][0] + (total - done) / rate, 1)
        ),
        "index_killed_after_budget": killed,
        "vector_progress_query": _progress_query_ms(db),
        "index_exit": child.returncode,
        "samples": samples,
        "load_average": os.getloadavg(),
    }


def _search(
    paths: UnitPaths, config: Path, env: dict[str, str], query: str, started: float
) -> dict[str, Any]:
    """One CLI search, as soon as the keyword rows are there; when it answered, and what."""
    begun = time.monotonic()
    done = subprocess.run(
        _argv(paths, config, "search", "--json", query),
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    answered = time.monotonic()
    out: dict[str, Any] = {
        "answered_s": round(answered - started, 2),
        "search_wall_s": round(answered - begun, 2),
        "exit": done.returncode,
    }
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        out["stderr"] = done.stderr[-500:]
        return out
    out |= {
        "results": len(payload.get("results", [])),
        "top_paths": [r.get("path") for r in payload.get("results", [])[:3]],
        "mode": payload.get("mode"),
        "warnings": payload.get("warnings", []),
    }
    return out


def _rate(samples: list[tuple[float, int, int]]) -> float | None:
    """Vectors per second between the first committed batch and the last sample (the model
    load and the first batch are outside the window)."""
    started = next((s for s in samples if s[2] > 0), None)
    if started is None or samples[-1][0] <= started[0] or samples[-1][2] <= started[2]:
        return None
    return (samples[-1][2] - started[2]) / (samples[-1][0] - started[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", choices=["lme-s", "synthetic"])
    parser.add_argument("--questions", type=int, default=1)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--provider", default="local")
    parser.add_argument("--backfill-seconds", type=float, default=3600.0)
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / "work" / "backfill")
    args = parser.parse_args()
    if args.workspace == "lme-s":
        name = f"lme-s-{args.questions}q"
        paths, query = _write_lme(args.work / name, args.questions)
    else:
        name = f"synthetic-{args.chunks}"
        paths, query = _write_synthetic(args.work / name, args.chunks)
    state = paths.state_dir / "agents" / AGENT
    if state.exists():  # a first index each run
        for leftover in state.glob("memory.db*"):
            leftover.unlink()
    doc = run(name, paths, query, args.provider, args.backfill_seconds)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"backfill_bench-{name}.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    first = doc["first_answer"]
    print(f"{name}: {doc['chunks']:,} chunks in {doc['files']:,} files")
    print(f"  first keyword rows       {doc['first_keyword_rows_s']} s")
    print(f"  keyword rows committed   {doc['keyword_rows_committed_s']} s (index complete)")
    print(f"  first answer (CLI)       {first.get('answered_s')} s, mode {first.get('mode')}, "
          f"{first.get('results')} results, warnings {first.get('warnings')}")  # fmt: skip
    print(f"  backfill rate            {doc['backfill_rate_chunks_per_s']} chunks/s")
    print(f"  full vectors             measured {doc['full_vectors_s_measured']} s, "
          f"extrapolated {doc['full_vectors_s_extrapolated']} s")  # fmt: skip
    print(f"  -> {out}")


if __name__ == "__main__":
    main()
