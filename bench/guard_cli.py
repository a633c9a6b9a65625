"""`python -m bench guard [SETS]`: the guard tables on stdout (Markdown), the runs as JSON.

Exit status 0 when nothing is over the budget and every set and mode was measured; 1 when a
primary metric of some set, mode and category fell by more than the budget against the baseline
or against the rules off; 3 when nothing is over the budget but some vector mode was not
measured (its texts have no cached vector: `--embed` embeds them, or `python -m bench run SET
--modes vector` first), so a fresh machine's keyword-only run never passes for a full guard.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from memlane.bench import guard, report
from memlane.bench.datasets import registry
from memlane.bench.embed_cache import SharedCache
from memlane.bench.runner import DatasetRun, RunOptions, memlane_opener


def add_parser(sub: Any, *, bench_dir: Path) -> None:
    p = sub.add_parser(
        "guard", help="re-run the sets; what moved against the baseline and against rules off"
    )
    p.add_argument("datasets", nargs="*", help="data sets (default: all of them)")
    p.add_argument("--modes", default=",".join(guard.GUARD_MODES))
    p.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    p.add_argument("--work-dir", type=Path, default=bench_dir / "work")
    p.add_argument("--results-dir", type=Path, default=bench_dir / "results")
    p.add_argument("--baseline", type=Path, default=guard.BASELINES)
    p.add_argument(
        "--write-baseline",
        action="store_true",
        help="make this run the baseline of every set and mode it measured",
    )
    p.add_argument(
        "--embed",
        action="store_true",
        help="embed the texts without a cached vector (into the shared cache) instead of "
        "leaving the vector modes of their sets unmeasured",
    )
    p.add_argument("--provider", default="local")
    p.add_argument("--max-results", type=int, help="hits per query (default: per data set)")
    p.add_argument("--limit-units", type=int)
    p.add_argument("--limit-queries", type=int)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resamples", type=int, default=10_000)


def run(args: argparse.Namespace, bench_dir: Path) -> int:
    names = args.datasets or list(registry.SPECS)
    unknown = [n for n in names if n not in registry.SPECS]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad_modes = [m for m in modes if m not in guard.GUARD_MODES]
    if unknown or bad_modes:
        print(f"unknown data sets {unknown} or modes {bad_modes}", file=sys.stderr)
        return 2
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    options = RunOptions(
        work_dir=args.work_dir,
        provider=args.provider,
        max_results=args.max_results or 50,
        limit_units=args.limit_units,
        limit_queries=args.limit_queries,
        shared_cache=SharedCache.in_work_dir(args.work_dir),
    )
    runs: list[DatasetRun] = []
    off: list[DatasetRun] = []
    not_measured: dict[str, str] = {}
    for name in names:
        spec_results = args.max_results or registry.load(name, None, args.data_root).max_results
        one = guard.run_sets(
            [name],
            replace(options, max_results=spec_results),
            memlane_opener(),
            data_root=args.data_root,
            modes=modes,
            log=lambda s: print(s, flush=True),
            embed_missing=args.embed,
        )
        runs += one.default
        off += one.rules_off
        not_measured.update(one.not_measured)
    meta = {"stamp": stamp, "command": "python -m bench guard " + " ".join(names)}
    default_file = args.results_dir / f"{stamp}-guard.json"
    report.write_json(default_file, {**meta, "variant": "default"}, runs)
    if off:
        report.write_json(
            args.results_dir / f"{stamp}-guard-rules-off.json",
            {**meta, "variant": "rules off", "config": guard.RULES_OFF},
            off,
        )
    over = _print(runs, off, not_measured, args, bench_dir)
    if args.write_baseline:
        rel = str(default_file.resolve().relative_to(bench_dir))
        current = guard.read_baselines(args.baseline)
        guard.write_baselines(args.baseline, current, rel, guard.GuardRun(runs, off, not_measured))
        print(f"baseline written: {args.baseline} -> {rel}")
        print(
            "README's results table comes from the baselines: paste `python -m bench table` "
            "into it (tests/bench/test_readme_table.py fails until then)"
        )
    print(f"\nresults: {default_file}")
    return exit_status(over, not_measured)


def exit_status(over: int, not_measured: dict[str, str]) -> int:
    """1: something over the budget; 3: within it, but some set and mode not measured; 0."""
    if over:
        return 1
    return 3 if not_measured else 0


def _print(
    runs: list[DatasetRun],
    off: list[DatasetRun],
    not_measured: dict[str, str],
    args: argparse.Namespace,
    bench_dir: Path,
) -> int:
    over = 0
    baselines = guard.read_baselines(args.baseline)
    for name, why in not_measured.items():
        print(f"{name}: {why}")
    for run in runs:
        for mode in dict.fromkeys(r["mode"] for r in run.records):
            file = baselines.get(run.name, {}).get(mode)
            if file is None:
                print(f"\n{run.name}/{mode}: no baseline in {args.baseline}")
                continue
            base = guard.baseline_run(bench_dir, file, run.name)
            if base is None or not any(r["mode"] == mode for r in base.records):
                print(f"\n{run.name}/{mode}: the baseline {file} has no {mode} run of this set")
                continue
            moved = guard.compare(run, base, mode, seed=args.seed, resamples=args.resamples)
            over += sum(1 for m in moved if not m.within_budget)
            title = f"{run.name}, {mode}: A = this run, B = baseline {file}"
            print(report.format_table(title, guard.HEADER, guard.rows(moved)))
    off_by_name = {r.name: r for r in off}
    for run in runs:
        rules_off = off_by_name.get(run.name)
        if rules_off is None:
            continue
        for mode in dict.fromkeys(r["mode"] for r in rules_off.records):
            moved = guard.compare(run, rules_off, mode, seed=args.seed, resamples=args.resamples)
            over += sum(1 for m in moved if not m.within_budget)
            title = f"{run.name}, {mode}: A = default, B = every hit-removing rule off"
            print(report.format_table(title, guard.HEADER, guard.rows(moved)))
    print("(a category's row is shown only where some query of it moved)")
    marking = [row for run in runs for row in guard.marking_rows(run)]
    if marking:
        title = "noStrongMatch: questions marked (reported, not held to the budget)"
        print(report.format_table(title, guard.MARKING_HEADER, marking))
    print(
        f"\n{over} comparison(s) over the {guard.BUDGET} budget"
        if over
        else f"\nnothing over the {guard.BUDGET} budget"
    )
    if not_measured:
        print(
            f"{len(not_measured)} set/mode pair(s) not measured ({', '.join(not_measured)}): "
            "run again with --embed, or `python -m bench run SET --modes vector` first",
            file=sys.stderr,
        )
    return over
