"""Study: what the SQLite time index walks for a window, by where the window lies (issue #26).

On a store `bench/time_filter_bench.py --keep DIR` built (DIR/<size>/index.db), times the
window's rid list and the plan's capped count as the store reads them (`idx_chunks_time` on
`time_end >= since AND time_start <= until`) against the same with `time_end` bounded above by
`until` + the largest chunk span (same rids), and what the largest span costs: a full index scan,
or a lookup on an expression index on `time_end - time_start` built in a copy of the store.

    nice -n 5 .venv/bin/python -m bench.studies.time_index_walk /tmp/keep/1000000/index.db

Prints one JSON object; the copy is deleted.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memlane.bench.time_filter_bench import DAY, NEWEST, WINDOWS

_RIDS = "SELECT rid FROM chunks INDEXED BY idx_chunks_time WHERE time_end >= ? AND time_start <= ?"
_COUNT = (
    "SELECT count(*) FROM (SELECT 1 FROM chunks INDEXED BY idx_chunks_time "
    "WHERE time_end >= ? AND time_start <= ? LIMIT 8001)"
)
_BOUNDED = _RIDS + " AND time_end <= ?"
_SPAN = "SELECT max(time_end - time_start) FROM chunks"


def _ms(con: sqlite3.Connection, sql: str, args: tuple[float, ...]) -> tuple[float, list[Any]]:
    """Median ms of 7 runs, and the rows."""
    samples = []
    rows: list[Any] = []
    for _ in range(7):
        start = time.perf_counter()
        rows = con.execute(sql, args).fetchall()
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1000, 3), rows


def main(db: Path) -> dict[str, Any]:
    con = sqlite3.connect(db)
    scan_ms, span_rows = _ms(con, _SPAN.replace("chunks", "chunks INDEXED BY idx_chunks_time"), ())
    span = float(span_rows[0][0])
    out: dict[str, Any] = {"max_span_full_scan_ms": scan_ms, "max_span": span, "windows": {}}
    for name, spec in WINDOWS.items():
        if spec is None or spec[0] > 30:
            continue
        days, end = spec
        since, until = NEWEST - (end + days - 1) * DAY, NEWEST - end * DAY + DAY - 1
        rids_ms, rids = _ms(con, _RIDS, (since, until))
        count_ms, _ = _ms(con, _COUNT, (since, until))
        # + 1 s: a margin over the float rounding of `until + span` (a superset stays exact).
        bounded_ms, bounded = _ms(con, _BOUNDED, (since, until, until + span + 1.0))
        out["windows"][name] = {
            "rids": len(rids),
            "rid_list_ms": rids_ms,
            "capped_count_ms": count_ms,
            "bounded_rid_list_ms": bounded_ms,
            "same_rids": sorted(rids) == sorted(bounded),
        }
    con.close()
    with tempfile.TemporaryDirectory(prefix="time-walk-") as tmp:
        copy = Path(tmp) / "index.db"
        shutil.copyfile(db, copy)
        con = sqlite3.connect(copy)
        start = time.perf_counter()
        con.execute("CREATE INDEX idx_chunks_span ON chunks (time_end - time_start)")
        con.commit()
        out["span_index_build_s"] = round(time.perf_counter() - start, 1)
        out["span_index_plan"] = con.execute("EXPLAIN QUERY PLAN " + _SPAN).fetchall()[0][3]
        out["max_span_indexed_ms"], _ = _ms(con, _SPAN, ())
        con.close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=2))
