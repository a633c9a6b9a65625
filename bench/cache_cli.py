"""`python -m bench cache stats|export|import|count`: the harness's shared embedding cache.

`count` measures what a full re-run has to embed: it indexes every unit keyword-only (chunking,
no embedding) and compares the texts embedded per unit store (what each run embedded when every
store had only its own cache) with the distinct texts of all units and sets together (what the
shared cache embeds), and how many of those the shared cache already holds.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections.abc import Iterable
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memlane.bench.datasets import registry
from memlane.bench.embed_cache import CacheFileError, SharedCache, chunk_hashes
from memlane.bench.runner import memlane_opener, mode_config, open_unit
from memlane.bench.store_driver import SqliteDriver
from memlane.bench.workspace import UnitPaths, materialize


def add_parser(sub: Any, *, default_work_dir: Path) -> None:
    cache = sub.add_parser("cache", help="the shared embedding cache: stats, export, import, count")
    cache.add_argument("action", choices=("stats", "export", "import", "count"))
    cache.add_argument("target", nargs="*", help="FILE (export, import) or data sets (count)")
    cache.add_argument("--work-dir", type=Path, default=default_work_dir)
    cache.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    cache.add_argument("--out", type=Path, help="count: write the figures to this JSON file")


@dataclass(frozen=True, slots=True)
class SetCount:
    name: str
    units: int
    per_unit_texts: int  # sum over units of each unit's distinct chunk texts
    distinct_texts: int  # distinct over the set's units
    cached: int  # of the distinct texts, held by the shared cache


def run(args: argparse.Namespace) -> int:
    shared = SharedCache.in_work_dir(args.work_dir)
    if args.action == "stats":
        print(f"{shared.path}: {shared.size():,} vectors")
        for key in shared.counts_by_key():
            print(f"  {key.provider} / {key.model} / {key.provider_key}: {key.vectors:,}")
        return 0
    if args.action in ("export", "import"):
        if len(args.target) != 1:
            print(f"bench cache {args.action} takes one FILE", file=sys.stderr)
            return 2
        target = Path(args.target[0])
        try:
            if args.action == "export":
                n = shared.export(target)
                print(f"exported {n:,} vectors to {target}")
            else:
                n = shared.import_file(target)
                print(f"imported {n:,} new vectors from {target} into {shared.path}")
        except (FileExistsError, CacheFileError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    names = args.target or sorted(registry.SPECS)
    unknown = [n for n in names if n not in registry.SPECS]
    if unknown:
        print(f"unknown data sets: {unknown}; known: {sorted(registry.SPECS)}", file=sys.stderr)
        return 2
    counts, overall = count(names, args.work_dir, args.data_root, shared, log=print)
    print(render(counts, overall))
    if args.out is not None:
        args.out.write_text(
            json.dumps(
                {
                    "stamp": time.strftime("%Y%m%d-%H%M%S", time.gmtime()),
                    "sets": [asdict(c) for c in counts],
                    "overall": asdict(overall),
                },
                indent=1,
            ),
            encoding="utf-8",
        )
        print(f"written: {args.out}")
    return 0


def count(
    names: Iterable[str],
    work_dir: Path,
    data_root: Path,
    shared: SharedCache,
    *,
    log: Any = lambda _: None,
) -> tuple[list[SetCount], SetCount]:
    """Per set and overall, the texts a full re-run embeds with and without the shared cache."""
    opener = memlane_opener()
    driver = SqliteDriver()
    everything: set[str] = set()
    counts: list[SetCount] = []
    units_total = per_unit_total = 0
    for name in names:
        dataset = registry.load(name, None, data_root)
        seen: set[str] = set()
        per_unit = units = 0
        for unit in dataset.units():
            paths = UnitPaths.for_unit(work_dir, name, unit.unit_id)
            materialize(unit, paths)
            store = Path(driver.store_config(paths, "fts")["path"])
            cfg = mode_config("keyword", "none", store, 10, {})
            manager = open_unit(opener, paths, cfg)
            try:
                manager.sync(force=False)
            finally:
                manager.close()
            hashes = chunk_hashes(store)
            per_unit += len(hashes)
            units += 1
            seen |= hashes
        cached = held(shared, seen)
        counts.append(SetCount(name, units, per_unit, len(seen), cached))
        log(f"{name}: {units} units, {per_unit:,} texts per unit, {len(seen):,} distinct")
        everything |= seen
        units_total += units
        per_unit_total += per_unit
    overall = SetCount(
        "all", units_total, per_unit_total, len(everything), held(shared, everything)
    )
    return counts, overall


def held(shared: SharedCache, hashes: set[str]) -> int:
    """How many of `hashes` the shared cache holds under any key."""
    if not shared.path.exists() or not hashes:
        return 0
    with closing(sqlite3.connect(shared.path, timeout=60.0)) as conn:
        known = {str(r[0]) for r in conn.execute("SELECT DISTINCT hash FROM vectors")}
    return len(known & hashes)


def render(counts: list[SetCount], overall: SetCount) -> str:
    lines = [
        "| set | units | texts embedded, one cache per store | distinct texts (shared cache) "
        "| share | in the shared cache now |",
        "|---|---|---|---|---|---|",
    ]
    for c in [*counts, overall]:
        share = c.distinct_texts / c.per_unit_texts if c.per_unit_texts else 0.0
        lines.append(
            f"| {c.name} | {c.units} | {c.per_unit_texts:,} | {c.distinct_texts:,} "
            f"| {share:.3f} | {c.cached:,} |"
        )
    return "\n".join(lines)
