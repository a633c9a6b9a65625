"""What reading the times a memory mentions costs the window boost (domain/time_boost.py).

For every LoCoMo question whose words name a window (read at its `as_of`), every chunk of its
conversation (160-260, the size of a search's candidate pool) goes through `apply_time_boost`
three ways, side by side in one process: as shipped with the mention cache cleared first (a
memory's first question), as shipped again (its lines read before), and with the mention reader
switched off (`mentioned_windows` answering nothing: the boost before session 14). Prints the
median and p90 milliseconds per question of each, their ratios to the last, and how many
chunks a mention lifted.

    python -m bench.studies.time_mentions [--rounds 5] [--out bench/results/time_mentions.json]

Reads the keyword stores `python -m bench run locomo` left under bench/work (run that first).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import sqlean

from memlane.bench.cli import BENCH_DIR
from memlane.bench.datasets import registry
from memlane.bench.workspace import UnitPaths
from memlane.domain import time_boost, time_questions
from memlane.domain.chunks import ChunkId
from memlane.domain.scoring import Fused
from memlane.domain.time_words import TimeIntent, read_time_words


def _chunks(store: Path) -> list[Fused]:
    with sqlean.connect(str(store)) as db:
        rows = db.execute(
            "SELECT id, source, path, start_line, end_line, text, time_start, time_end"
            " FROM chunks ORDER BY rid"
        ).fetchall()
    return [
        Fused(
            chunk_id=ChunkId(r[0]),
            source=r[1],
            path=r[2],
            start_line=r[3],
            end_line=r[4],
            text=r[5],
            vector_score=None,
            text_score=None,
            score=1.0 - i / len(rows),
            time_start=r[6],
            time_end=r[7],
        )
        for i, r in enumerate(rows)
    ]


def _timed(run: Callable[[], list[Fused]], rounds: int) -> tuple[float, list[Fused]]:
    times, out = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = run()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times), out


def _no_mentions(text: str, written: float) -> list[tuple[float, float]]:
    del text, written
    return []


def _without_mentions(pool: Sequence[Fused], intent: TimeIntent) -> list[Fused]:
    reader = time_boost.__dict__["mentioned_windows"]
    setattr(time_boost, "mentioned_windows", _no_mentions)  # noqa: B010 (a study's switch)
    try:
        return time_boost.apply_time_boost(pool, intent, strength=1.0)
    finally:
        setattr(time_boost, "mentioned_windows", reader)  # noqa: B010


def _warm(pool: Sequence[Fused], intent: TimeIntent) -> list[Fused]:
    return time_boost.apply_time_boost(pool, intent, strength=1.0)


def _cold(pool: Sequence[Fused], intent: TimeIntent) -> list[Fused]:
    time_questions._mentioned.cache_clear()
    return time_boost.apply_time_boost(pool, intent, strength=1.0)


def _spread(ms: Sequence[float]) -> dict[str, float]:
    return {"p50": statistics.median(ms), "p90": statistics.quantiles(ms, n=10)[-1]}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.time_mentions")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    dataset = registry.load("locomo", None, registry.DEFAULT_DATA_ROOT)
    cold: list[float] = []
    warm: list[float] = []
    before: list[float] = []
    lifted = pools = 0
    for unit in dataset.units():
        paths = UnitPaths.for_unit(BENCH_DIR / "work", "locomo", unit.unit_id)
        pool = _chunks(paths.store_path("fts"))
        pools = max(pools, len(pool))
        for q in unit.queries:
            assert q.as_of is not None
            as_of = dt.datetime.fromisoformat(q.as_of.replace("Z", "+00:00")).timestamp()
            intent = read_time_words(q.text, as_of)
            if intent is None or intent.since is None:
                continue
            ms_cold, new = _timed(partial(_cold, pool, intent), args.rounds)
            ms_warm, _ = _timed(partial(_warm, pool, intent), args.rounds)
            ms_old, old = _timed(partial(_without_mentions, pool, intent), args.rounds)
            cold.append(ms_cold)
            warm.append(ms_warm)
            before.append(ms_old)
            factor = {item.chunk_id: item.time_boost for item in old}
            lifted += sum(1 for item in new if item.time_boost > factor[item.chunk_id] + 1e-12)
    runs = {"mentions_first_read": cold, "mentions_read_before": warm, "without": before}
    report: dict[str, Any] = {
        "questions_with_a_window": len(before),
        "largest_pool": pools,
        "chunks_lifted_by_a_mention": lifted,
        "ms_per_question": {name: _spread(ms) for name, ms in runs.items()},
        "ratio_p50_to_without": {
            name: statistics.median(ms) / statistics.median(before) for name, ms in runs.items()
        },
    }
    print(json.dumps(report, indent=2))
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
