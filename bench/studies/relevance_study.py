"""Relevance-floor study: replays recorded legs (`bench.studies.foreign collect`) under candidate
rules.

Each rule decides, per fused hit, from raw signals that do not depend on the other hits kept:
the hit's cosine, its bm25 evidence, the index size, the query's background cosine (its cosine
to every chunk, or the median of its vector candidates) and the share of the query's terms the
hit contains. Like the shipped floor a rule only removes hits. Grids are picked on half A (the
fusion study's sha256 split) and read on half B.

    python -m bench.studies.relevance_study --legs-dir bench/work [--fusion zscore]
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from memlane.bench.datasets import registry
from memlane.bench.studies import foreign
from memlane.bench.studies.relevance_legs import (
    FOREIGN,
    REAL,
    Hit,
    Query,
    Rule,
    load,
)
from memlane.bench.studies.relevance_rules import grid


def evaluate(queries: Sequence[Query], rule: Rule | None) -> dict[str, dict[str, list[float]]]:
    """Per pair, per half: per-query value (real: target metric; foreign: hits returned)."""
    out: dict[str, dict[str, list[float]]] = {}
    for q in queries:
        kept: list[Hit] = []
        for h in q.hits:
            if rule is None or rule(q, h):
                kept.append(h)
                if len(kept) == foreign.MAX_RESULTS:
                    break
        value = q.score([h.lines for h in kept]) if q.score else float(len(kept))
        out.setdefault(q.pair, {"A": [], "B": []})[q.half].append(value)
    return out


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def summary(
    res: dict[str, dict[str, list[float]]], base: dict[str, dict[str, list[float]]], half: str
) -> dict[str, float]:
    """Losses of the two real sets, and the foreign reduction pooled over the foreign pairs."""

    def vals(r: dict[str, dict[str, list[float]]], p: str) -> list[float]:
        return r[p]["A"] + r[p]["B"] if half == "all" else r[p][half]

    out = {f"loss_{p}": mean(vals(base, p)) - mean(vals(res, p)) for p in REAL if p in res}
    before = sum(sum(vals(base, p)) for p in FOREIGN if p in res)
    after = sum(sum(vals(res, p)) for p in FOREIGN if p in res)
    out["reduction"] = 1 - after / before if before else math.nan
    for p in FOREIGN:
        if p in res:
            out[p] = 1 - sum(vals(res, p)) / max(1e-9, sum(vals(base, p)))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.relevance_study", description=__doc__)
    p.add_argument("--legs-dir", type=Path, default=foreign.DEFAULT_WORK)
    p.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    p.add_argument("--fusion", default="zscore", choices=("zscore", "weighted", "rrf"))
    p.add_argument("--families", default="current,scaled,gap_mean,gap_median")
    p.add_argument(
        "--pick-on",
        default="A",
        choices=("A", "all"),
        help="the half whose losses bound a rule (all: every query)",
    )
    p.add_argument("--max-loss", type=float, default=0.007, help="LoCoMo")
    p.add_argument("--max-loss-lme", type=float, default=0.0, help="LME pooled")
    p.add_argument("--max-loss-other", type=float, default=0.005, help="the other real sets")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--out", type=Path, help="JSON lines: every rule's summary per half")
    args = p.parse_args(argv)
    foreign.DATA_ROOT[0] = args.data_root
    pairs = [p for p in (*REAL, *FOREIGN) if foreign.legs_path(args.legs_dir, p).exists()]
    queries = load(args.legs_dir, pairs, args.fusion)
    base = evaluate(queries, None)
    sink = args.out.open("a") if args.out else None
    for family in args.families.split(","):
        rows = []
        for label, rule in grid(family):
            res = evaluate(queries, rule)
            halves = {half: summary(res, base, half) for half in ("A", "B", "all")}
            if sink is not None:
                sink.write(__import__("json").dumps({"family": family, "rule": label, **halves}))
                sink.write("\n")
                sink.flush()
            a = halves[args.pick_on]
            ok = (
                a.get("loss_locomo", 0) <= args.max_loss + 1e-9
                and a.get("loss_lme_pooled", 0) <= args.max_loss_lme + 1e-9
                and all(
                    v <= args.max_loss_other + 1e-9
                    for k, v in a.items()
                    if k.startswith("loss_") and k not in ("loss_locomo", "loss_lme_pooled")
                )
            )
            if ok or family.endswith("_short"):
                rows.append((a["reduction"], label, halves))
        rows.sort(key=lambda r: -r[0])
        print(f"\n== {family}: best on {args.pick_on} within the losses ({len(rows)} admissible)")
        for _, label, halves in rows[: args.top]:
            for half, s in halves.items():
                cells = " ".join(f"{k.replace('_pooled', '')}={v:+.3f}" for k, v in s.items())
                print(f"  {label:42} {half:3} {cells}", flush=True)


if __name__ == "__main__":
    main()
