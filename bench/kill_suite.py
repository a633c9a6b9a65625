"""Reliability suite (issue #14): SIGKILL `index`, `index --force` and `watch` at random moments
and check the index against the files on disk after the next run.

Each round changes the workspace (notes added, edited, deleted; transcripts grown, added,
deleted), starts the real CLI, kills it with SIGKILL after a seeded random delay between 0 and
that command's typical run time (measured at the start of the run), then runs `memlane index`
and checks: exit 0, `PRAGMA integrity_check`, FTS5 integrity-check, `files` equal to the disk
(hashes included), chunk texts equal to the files' lines, every planted word found in its file
and no retired one anywhere, no temporary rebuild file left, `status --json` counts, a CLI
search, and the same chunks as a clean rebuild. See kill_rounds.py / kill_checks.py.

Run:  .venv/bin/python -m memlane.bench.kill_suite [--kills 36] [--seed 14] [--provider none]
      .venv/bin/python -m memlane.bench.kill_suite --kills 6 --provider local --notes 60
Writes bench/results/<stamp>-kill.json (every round, with the reproduction seed).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memlane.bench.kill_checks import kill_state
from memlane.bench.kill_rounds import (
    TARGETS,
    Cli,
    Outcome,
    Target,
    kill_once,
    log_counts,
    phase_of,
    recover_and_check,
    timed,
)
from memlane.bench.kill_workspace import KillWorkspace, Sizes

BENCH_DIR = Path(__file__).resolve().parent
WATCH_SLACK_S = 1.5  # watcher start-up and debounce on top of a sync: the typical watch cycle


@dataclass(frozen=True, slots=True)
class Plan:
    kills: int = 36
    seed: int = 14
    provider: str = "none"
    sizes: Sizes = field(default_factory=Sizes)
    targets: tuple[Target, ...] = TARGETS
    through_cli: bool = True  # status --json and a search per round (two more processes)
    compare_clean: bool = True  # a clean rebuild per round (one more process)
    deep_every: int = 1  # the two above on every n-th round only (a loaded machine: time)


def schedule(plan: Plan, rng: random.Random) -> list[Target]:
    """As many kills of each target as possible (round robin), in a seeded random order."""
    order = [plan.targets[i % len(plan.targets)] for i in range(plan.kills)]
    rng.shuffle(order)
    return order


def calibrate(cli: Cli) -> dict[str, float]:
    """Typical run times: a first full index (not killed), then one uninterrupted run of an
    incremental index and of a forced rebuild after a round of changes; and the start-up cost
    of any command (`status`: imports, config, opening the index), during which a kill can
    only meet an index that nobody is writing."""
    timed(cli, "index")
    cli.ws.mutate()
    incremental = timed(cli, "index")
    forced = timed(cli, "index", "--force")
    startup = timed(cli, "status", "--json")
    return {
        "index": incremental,
        "force": forced,
        "watch": incremental + WATCH_SLACK_S,
        "startup": startup,
    }


def draw_delay(rng: random.Random, typical: float, startup: float) -> float:
    """A kill delay between 0 and the typical run time. Start-up takes most of a short run on a
    loaded machine, so three draws in four skip it (uniform over the working part) and one in
    four is uniform over the whole run (kills in imports and while opening the index)."""
    if rng.random() < 0.25:
        return rng.uniform(0.0, typical)
    return rng.uniform(min(startup, typical), typical)


def run_suite(plan: Plan, root: Path, progress: bool = False) -> dict[str, object]:
    """Run every round under `root`; return the results document."""
    rng = random.Random(plan.seed)
    ws = KillWorkspace(root / "run", rng, plan.sizes)
    ws.create(plan.provider)
    cli = Cli(ws)
    typical = calibrate(cli)
    kill_failures = 0
    outcomes: list[Outcome] = []
    for n, target in enumerate(schedule(plan, rng), start=1):
        delay = draw_delay(rng, typical[target], typical["startup"])
        log = root / f"round-{n:02d}-{target}.log"
        alive, mutation = kill_once(cli, target, delay, 1.0, log)
        state = kill_state(ws)
        handled, finished = log_counts(log)
        deep = n % max(1, plan.deep_every) == 0
        code, summary, took, failures = recover_and_check(
            cli,
            provider=plan.provider,
            through_cli=plan.through_cli and deep,
            compare_clean=plan.compare_clean and deep,
            keep=root / "failed" / f"round-{n:02d}",
        )
        outcome = Outcome(
            round=n,
            target=target,
            delay_s=round(delay, 3),
            alive_at_kill=alive,
            phase=phase_of(alive, state, finished),
            state=state,
            events_handled_before_kill=handled,
            syncs_finished_before_kill=finished,
            mutation=mutation,
            recovery_exit=code,
            recovery_summary=summary,
            recovery_s=round(took, 2),
            failures=failures,
        )
        outcomes.append(outcome)
        kill_failures += bool(failures)
        if progress:
            mark = "FAIL " + "; ".join(failures) if failures else "ok"
            print(f"{n:>3} {target:<5} {delay:6.2f}s {outcome.phase:<8} {summary}  {mark}")
    return {
        "plan": {**asdict(plan), "sizes": asdict(plan.sizes)},
        "typical_s": {k: round(v, 2) for k, v in typical.items()},
        "summary": summarise(outcomes),
        "rounds": [asdict(o) for o in outcomes],
        "failed_rounds": kill_failures,
    }


def summarise(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Per target: kills, where they landed, and rounds with a failed check."""
    table: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = table.setdefault(
            o.target,
            {"kills": 0, "mid-run": 0, "startup": 0, "idle": 0, "exited": 0, "failed": 0},
        )
        row["kills"] += 1
        row[o.phase] += 1
        row["failed"] += bool(o.failures)
    return table


def format_table(summary: dict[str, dict[str, int]]) -> str:
    head = "| target          | kills | mid-run | startup | idle | exited before kill | failed |"
    lines = [head, "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"]
    names = {"index": "index", "force": "index --force", "watch": "watch"}
    total = dict.fromkeys(("kills", "mid-run", "startup", "idle", "exited", "failed"), 0)
    for target in TARGETS:
        if target not in summary:
            continue
        row = summary[target]
        for key in total:
            total[key] += row[key]
        lines.append(_row(names[target], row))
    lines.append(_row("all", total))
    return "\n".join(lines)


def _row(name: str, row: dict[str, int]) -> str:
    return (
        f"| {name:<15} | {row['kills']:>5} | {row['mid-run']:>7} | {row['startup']:>7} "
        f"| {row['idle']:>4} | {row['exited']:>18} | {row['failed']:>6} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--kills", type=int, default=36)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--provider", default="none", help="none (keyword only) or local")
    parser.add_argument("--notes", type=int, default=Sizes().notes)
    parser.add_argument("--transcripts", type=int, default=Sizes().transcripts)
    parser.add_argument("--no-cli-checks", action="store_true", help="skip status/search")
    parser.add_argument("--no-clean-compare", action="store_true")
    parser.add_argument("--deep-every", type=int, default=1, help="CLI/clean checks every n")
    parser.add_argument("--results-dir", type=Path, default=BENCH_DIR / "results")
    parser.add_argument("--work-dir", type=Path, help="keep the workspace here (default: temp)")
    args = parser.parse_args(argv)
    plan = Plan(
        kills=args.kills,
        seed=args.seed,
        provider=args.provider,
        sizes=Sizes(notes=args.notes, transcripts=args.transcripts),
        through_cli=not args.no_cli_checks,
        compare_clean=not args.no_clean_compare,
        deep_every=args.deep_every,
    )
    root = args.work_dir or Path(tempfile.mkdtemp(prefix="memlane-kill-"))
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    doc = run_suite(plan, root, progress=True)
    doc["wall_s"] = round(time.monotonic() - started, 1)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    doc["stamp"] = stamp
    args.results_dir.mkdir(parents=True, exist_ok=True)
    out = args.results_dir / f"{stamp}-kill.json"
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    summary = doc["summary"]
    assert isinstance(summary, dict)
    print(format_table(summary))
    print(f"typical run times (s): {doc['typical_s']}; wall {doc['wall_s']} s; results {out}")
    failed = doc["failed_rounds"]
    if failed:
        print(f"{failed} round(s) failed; killed and recovered states kept under {root}/failed")
    elif args.work_dir is None:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
