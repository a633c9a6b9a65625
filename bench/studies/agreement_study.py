"""Does the agreement of the two legs tell a question the memory holds nothing about?

`bench/studies/confidence_study.py` read the vector leg's cosines alone (the best hit's standing
over a background sample, gaps among the top hits): at most 5 % of real questions marked, the
best marks 6-10 % of the foreign ones. This study reads what a hybrid search also has: the
keyword leg, and how the two legs agree. No signal here uses the share of the query's words
nor an absolute cosine; each is relative to the query's own candidates or background.

    python -m bench.studies.agreement_study collect xquad_zh locomo lme_pooled \\
        scifact:locomo lme_pooled:locomo ... [--limit 300]
    python -m bench.studies.agreement_study evaluate xquad_zh locomo ... scifact:locomo ... \\
        [--max-real 0.05] [--out bench/results/<name>.json]

`collect` records, per query, exactly what a default hybrid search reads (application/
queries.py): the keyword leg (`Legs.keyword`, 200 candidates with their bm25 rank), the vector
leg (`Searcher._vector_leg`, 200 candidates with their cosines) and the query's background
(`Searcher._background`: the cosines with the first 256 chunks by id, trimmed, summarised).
Stores are opened without a sync: the harness's stores (copied into `--work-dir`) already hold
every vector, so nothing but the queries is embedded. Pairs as in `bench/studies/foreign.py`
(`<set>`: its own, real questions; `<queries>:<memory>`: foreign ones).

`evaluate` computes every signal of `agreement_signals.py` and splits the queries in two
halves by a hash of the query's set and id: each signal's threshold is chosen on half A (the
highest that flags at most --max-real of every real set's half-A questions), and the shares it
flags are read on half B, per pair and pooled over the foreign pairs (each pair weighing by its
queries, as confidence_study pooled them). A signal is "flag when below the threshold".

Session 22 protocol (`--answered-only`), fixed before its runs: a mark is a false alarm only
on a real question the default search answered (a gold document among its first 5, recorded by
`collect`); a missed question marked is a true warning. Real sets: session 12's six and
`scifact_train`; foreign: session 12's nine pairs. Each threshold is the highest marking at
most 5 % of every real set's answered half-A questions; read on half B. A signal meets the
issue's goal when, on half B and again with the halves swapped, it marks >= 80 % of the
foreign questions pooled and <= 5 % of every real set's answered questions. The English-into-
English foreign pairs (`SAME_LANGUAGE`) are reported apart: there the keyword leg cannot tell a
foreign question by matching nothing at all.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memlane.application.search_legs import Legs
from memlane.bench import metrics
from memlane.bench.datasets import registry
from memlane.bench.runner import memlane_opener, open_unit
from memlane.bench.studies.agreement_signals import SIGNALS, Record, combined_signals
from memlane.bench.studies.foreign import (
    DATA_ROOT,
    DEFAULT_WORK,
    assignments,
    base_config,
    parse_pair,
)
from memlane.bench.workspace import UnitPaths
from memlane.domain.config import candidate_limit

LEGS_DIR = DEFAULT_WORK / "legs-agreement"
# Foreign pairs whose questions are in the memory's language (English into English): no
# cross-language shortcut (the keyword leg matching nothing) helps a signal there.
SAME_LANGUAGE = frozenset(
    {
        "locomo:lme_pooled",
        "scifact:lme_pooled",
        "scifact:locomo",
        "lme_pooled:locomo",
        "scifact_train:locomo",
        "scifact_train:lme_pooled",
    }
)


def legs_path(legs_dir: Path, pair: str) -> Path:
    return legs_dir / f"{pair.replace(':', '__')}.json"


def collect(pairs: Sequence[str], work_dir: Path, legs_dir: Path, limit: int | None) -> None:
    """Record both legs and the background of every query of each pair (see the module doc)."""
    opener = memlane_opener()
    legs_dir.mkdir(parents=True, exist_ok=True)
    for pair in pairs:
        queries_name, memory_name = parse_pair(pair)
        records: list[dict[str, Any]] = []
        for unit, queries in assignments(queries_name, memory_name, limit):
            paths = UnitPaths.for_unit(work_dir, memory_name, unit.unit_id)
            if not paths.store_path("local").exists():
                raise SystemExit(f"no store at {paths.store_path('local')}: copy the harness's")
            manager: Any = open_unit(opener, paths, base_config(paths.store_path("local"), {}))
            doc_of_path = unit.doc_of_path()
            try:
                # A study tool: it reaches into the searcher to read what a search reads.
                searcher = manager._searching._searcher
                store, provider = searcher._store, searcher._runtime.provider
                sources = manager.settings.sources
                hybrid = manager.settings.query.hybrid
                limit_per_leg = candidate_limit(hybrid, 6, fused=True)
                for q in queries:
                    legs = Legs(None, store)
                    keyword = legs.keyword(q.text, sources, limit_per_leg)
                    warnings: list[str] = []
                    vector, failed, embedded = searcher._vector_leg(
                        provider, q.text, sources, limit_per_leg, warnings, legs
                    )
                    if failed or embedded is None:
                        raise SystemExit(f"{pair} {q.qid}: the vector leg failed: {warnings}")
                    bg = searcher._background(provider, embedded)
                    answered = None
                    if queries_name == memory_name:
                        # Did the default search answer it: a gold document in its first 5?
                        found = manager.search(q.text, as_of=q.as_of)
                        hits = [(r.path, r.start_line, r.end_line) for r in found.results]
                        ranked = metrics.distinct_ids(hits, doc_of_path)
                        answered = metrics.recall_any(ranked, q.gold_docs, 5) > 0
                    records.append(
                        {
                            "unit": unit.unit_id,
                            "qid": q.qid,
                            "keyword": [[str(c.chunk_id), c.score] for c in keyword],
                            "vector": [[str(c.chunk_id), c.score] for c in vector],
                            "background": None if bg is None else [bg.mean, bg.spread, bg.size],
                            "limit": limit_per_leg,
                            "answered": answered,
                        }
                    )
            finally:
                manager.close()
        target = legs_path(legs_dir, pair)
        target.write_text(json.dumps({"pair": pair, "records": records}))
        print(f"{pair}: {len(records)} queries -> {target}", flush=True)


def half_of(queries_name: str, qid: str) -> str:
    """A fixed split by the query's set and id: a question is in the same half in every memory."""
    return "A" if hashlib.sha256(f"{queries_name}/{qid}".encode()).digest()[0] % 2 == 0 else "B"


def load(pairs: Sequence[str], legs_dir: Path, swap: bool = False) -> dict[str, list[Record]]:
    """The recorded queries; `swap` exchanges the halves (tune on B, read on A)."""
    out: dict[str, list[Record]] = {}
    for pair in pairs:
        queries_name, _ = parse_pair(pair)
        raw = json.loads(legs_path(legs_dir, pair).read_text())["records"]
        flip = {"A": "B", "B": "A"} if swap else {"A": "A", "B": "B"}
        out[pair] = [Record.of(r, flip[half_of(queries_name, r["qid"])]) for r in raw]
    return out


def _share(values: Sequence[float], threshold: float) -> float:
    return sum(1 for v in values if v < threshold) / len(values) if values else float("nan")


def choose_threshold(real_values: Sequence[Sequence[float]], max_real: float) -> float:
    """The highest threshold that flags at most `max_real` of every real set (flag: below)."""
    best = float("inf")
    for values in real_values:
        ordered = sorted(values)
        allowed = int(max_real * len(ordered))  # this many may be flagged
        # Flagging the `allowed` lowest: the threshold is the next value (strictly below flags).
        cut = ordered[allowed] if allowed < len(ordered) else float("inf")
        best = min(best, cut)
    return best


def evaluate(
    records: dict[str, list[Record]],
    max_real: float,
    fixed: dict[str, float] | None = None,
    *,
    answered_only: bool = False,
) -> dict[str, Any]:
    """Per signal: its threshold (chosen on half A, or `fixed`'s, e.g. chosen with other real
    sets) and the shares it flags on each half. With `answered_only` (session 22) the budget
    counts only the real questions the default search answered (a gold document in its first
    5): marking a question whose answer is missing anyway is no false alarm. The shares of
    answered and of missed real questions flagged are reported either way."""
    real = [p for p in records if ":" not in p]
    foreign = [p for p in records if ":" in p]
    values = {
        p: {name: [fn(r) for r in rs] for name, fn in SIGNALS.items()} for p, rs in records.items()
    }
    halves = {p: [r.half for r in rs] for p, rs in records.items()}
    # Combinations chosen on half A (their parts' thresholds or weights fitted there).
    for p, extra in combined_signals(values, halves, real, foreign).items():
        values[p].update(extra)
    table: dict[str, Any] = {}
    for name in values[next(iter(records))]:

        def part(p: str, half: str, name: str = name, answered: bool | None = None) -> list[float]:
            return [
                v
                for v, h, r in zip(values[p][name], halves[p], records[p], strict=True)
                if h == half and (answered is None or r.answered is answered)
            ]

        if fixed is not None and name not in fixed:
            continue  # a combination's values depend on the real sets it was fitted with
        threshold = (
            fixed[name]
            if fixed is not None
            else choose_threshold(
                [part(p, "A", answered=True if answered_only else None) for p in real], max_real
            )
        )
        row: dict[str, Any] = {"threshold": threshold}
        for half in ("A", "B"):
            flagged = {p: _share(part(p, half), threshold) for p in records}
            pooled = [v for p in foreign for v in part(p, half)]
            row[half] = {
                "foreign_pooled": _share(pooled, threshold),
                "foreign_mean_of_pairs": statistics.fmean(flagged[p] for p in foreign),
                "real_max": max(flagged[p] for p in real),
                "real_answered_max": max(
                    _share(part(p, half, answered=True), threshold) for p in real
                ),
                "real_answered_flagged": {
                    p: _share(part(p, half, answered=True), threshold) for p in real
                },
                "real_missed_pooled": _share(
                    [v for p in real for v in part(p, half, answered=False)], threshold
                ),
                "same_language_pooled": _share(
                    [v for p in foreign if p in SAME_LANGUAGE for v in part(p, half)], threshold
                ),
                "flagged": flagged,
                "queries": {p: len(part(p, half)) for p in records},
            }
        table[name] = row
    return table


def print_table(table: dict[str, Any], records: dict[str, list[Record]]) -> None:
    real = [p for p in records if ":" not in p]
    foreign = [p for p in records if ":" in p]
    print("held-out half B (threshold chosen on half A); flag = signal < threshold")
    head = [
        "signal",
        "thr",
        "foreign B",
        "same language B",
        "real max B",
        "answered max B",
        "missed B",
        *real,
        *foreign,
    ]
    print(" | ".join(head))
    order = sorted(table, key=lambda n: -table[n]["B"]["foreign_pooled"])
    for name in order:
        row = table[name]
        b = row["B"]
        cells = [f"{b['flagged'][p]:.0%}" for p in [*real, *foreign]]
        print(
            f"{name} | {row['threshold']:.3g} | {b['foreign_pooled']:.1%} | "
            f"{b['same_language_pooled']:.1%} | {b['real_max']:.1%} | "
            f"{b['real_answered_max']:.1%} | {b['real_missed_pooled']:.1%} | " + " | ".join(cells)
        )


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.agreement_study", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    col = sub.add_parser("collect")
    col.add_argument("pairs", nargs="+")
    col.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
    col.add_argument("--limit", type=int, default=300, help="questions drawn per set (per unit)")
    ev = sub.add_parser("evaluate")
    ev.add_argument("pairs", nargs="+")
    ev.add_argument("--max-real", type=float, default=0.05)
    ev.add_argument("--out", type=Path)
    ev.add_argument("--swap-halves", action="store_true", help="tune on half B, read on A")
    ev.add_argument(
        "--answered-only",
        action="store_true",
        help="the budget counts only real questions the default search answered",
    )
    ev.add_argument(
        "--thresholds-from", type=Path, help="an evaluate result: read its thresholds on these sets"
    )
    for c in (col, ev):
        c.add_argument("--legs-dir", type=Path, default=LEGS_DIR)
        c.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    args = p.parse_args(argv)
    DATA_ROOT[0] = args.data_root
    if args.cmd == "collect":
        collect(args.pairs, args.work_dir, args.legs_dir, args.limit)
        return
    records = load(args.pairs, args.legs_dir, args.swap_halves)
    fixed = None
    if args.thresholds_from is not None:
        chosen = json.loads(args.thresholds_from.read_text())["signals"]
        fixed = {name: row["threshold"] for name, row in chosen.items() if name in SIGNALS}
    table = evaluate(records, args.max_real, fixed, answered_only=args.answered_only)
    print_table(table, records)
    if args.out is not None:
        meta = {
            "max_real": args.max_real,
            "pairs": args.pairs,
            "split": "sha256(set/qid)[0] % 2",
            "thresholds_from": str(args.thresholds_from),
            "swapped": args.swap_halves,
            "answered_only": args.answered_only,
        }
        args.out.write_text(json.dumps({"meta": meta, "signals": table}, indent=1))
        print(f"written: {args.out}")


if __name__ == "__main__":
    main()
