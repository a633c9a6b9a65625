"""Foreign queries: one data set's queries searched in another data set's memory.

An agent asking about something its memory does not hold should get few or no hits. The
harness's own queries cannot show that (every one has an answer in its index), so this module
searches set A's queries in set B's stores, which hold nothing about them, and counts the hits
a default search returns (6 results, the configured `minScore`).

    python -m bench.studies.foreign run scifact:locomo lme_pooled:locomo ... [--config JSON]
    python -m bench.studies.foreign collect locomo lme_pooled scifact:locomo ...
    python -m bench.studies.foreign calibrate --fit locomo,scifact:locomo --check lme_pooled,...

`run` goes through the public API (`memlane.open`, `search`) with the default settings and
writes `bench/results/<stamp>-foreign.json` (per pair: hits per query, share of queries with
no hit). `collect` records both legs of every search (the 200 candidates per leg a default
search fetches, with their raw cosine and bm25 evidence) for real (`<set>`) and foreign
(`<queries>:<memory>`) pairs; `calibrate` replays the shipped pipeline over those records for
a grid of floors, so a floor can be chosen on some pairs and read on the others. Stores are
opened as the harness opens them (same workspaces, a sync that finds nothing to do); foreign
query i goes to the memory set's unit i mod n, and at most --limit queries are drawn from a
set (the ones with the smallest sha256 of their id, as `--limit-queries` does).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memlane.bench.cli import BENCH_DIR, machine
from memlane.bench.datasets import registry
from memlane.bench.datasets.model import Query, Unit
from memlane.bench.runner import (
    deep_merge,
    memlane_opener,
    open_unit,
    score_query,
    select_queries,
)
from memlane.bench.studies.fusion_study import half_of
from memlane.bench.workspace import UnitPaths, materialize
from memlane.domain.chunks import ChunkId
from memlane.domain.index_meta import vector_label
from memlane.domain.keywords import build_fts_query, fts_query_terms, quote_fts_term
from memlane.domain.relevance import RelevanceFloor, apply_relevance_floor, floor_for
from memlane.domain.scoring import Fused, apply_min_score, rrf_merge, weighted_merge, zscore_merge
from memlane.domain.search import Candidate

DEFAULT_WORK = BENCH_DIR / "work"
MAX_RESULTS = 6  # the default `query.maxResults`
POOL = 200  # candidates per leg of a default fused search (`minCandidates`)
DATA_ROOT = [registry.DEFAULT_DATA_ROOT]  # --data-root replaces it


def parse_pair(text: str) -> tuple[str, str]:
    """`queries:memory` -> the two set names; a bare `<set>` is its own (real) queries."""
    queries, _, memory = text.partition(":")
    return queries, memory or queries


def foreign_queries(name: str, limit: int | None) -> list[Query]:
    dataset = registry.load(name, None, DATA_ROOT[0])
    queries = [q for unit in dataset.units() for q in unit.queries]
    return list(select_queries(queries, limit))


def assignments(
    queries_name: str, memory_name: str, limit: int | None
) -> list[tuple[Unit, Sequence[Query]]]:
    """(memory unit, the queries searched in it): a unit's own queries for a real pair, else
    the foreign queries dealt round-robin over the memory set's units."""
    memory = list(registry.load(memory_name, None, DATA_ROOT[0]).units())
    if queries_name == memory_name:
        return [(u, select_queries(u.queries, limit)) for u in memory]
    queries = foreign_queries(queries_name, limit)
    return [(u, queries[i :: len(memory)]) for i, u in enumerate(memory)]


def base_config(store: Path, extra: dict[str, Any]) -> dict[str, Any]:
    """A default search (no `minScore` override) on the harness's store, syncing only on demand."""
    cfg: dict[str, Any] = {
        "provider": "local",
        "query": {"maxResults": MAX_RESULTS},
        "sync": {"watch": False, "onSearch": False, "onSessionStart": False},
    }
    return deep_merge(deep_merge(cfg, extra), {"store": {"path": str(store)}})


def run(pairs: Sequence[str], work_dir: Path, limit: int | None, extra: dict[str, Any]) -> None:
    opener = memlane_opener()
    out: dict[str, Any] = {}
    for pair in pairs:
        queries_name, memory_name = parse_pair(pair)
        counts: list[int] = []
        flags: list[bool | None] = []
        best: list[float | None] = []
        for unit, queries in assignments(queries_name, memory_name, limit):
            paths = UnitPaths.for_unit(work_dir, memory_name, unit.unit_id)
            materialize(unit, paths)
            manager = open_unit(opener, paths, base_config(paths.store_path("local"), extra))
            try:
                manager.sync(force=False)
                for q in queries:
                    response = manager.search(q.text)
                    counts.append(len(response.results))
                    flags.append(getattr(response, "no_strong_match", None))
                    standings = [
                        c
                        for r in response.results
                        if (c := getattr(r, "confidence", None)) is not None
                    ]
                    best.append(max(standings) if standings else None)
            finally:
                manager.close()
        out[pair] = {**summary(counts), **marking(flags, best)}
        print(f"{pair}: {json.dumps(out[pair])}", flush=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    path = BENCH_DIR / "results" / f"{stamp}-foreign.json"
    meta = {"stamp": stamp, "config": extra, "limit": limit, "machine": machine()}
    path.write_text(json.dumps({"meta": meta, "pairs": out}, indent=1))
    print(f"results: {path}")


def summary(counts: Sequence[int]) -> dict[str, float]:
    return {
        "queries": len(counts),
        "hits_per_query": statistics.fmean(counts) if counts else 0.0,
        "share_zero": sum(1 for c in counts if c == 0) / len(counts) if counts else 0.0,
    }


def marking(flags: Sequence[bool | None], best: Sequence[float | None]) -> dict[str, Any]:
    """The share of queries marked `no_strong_match`, of those not judged, and the share a
    threshold T would mark, by the best standing among the hits (domain/confidence.py)."""
    n = len(flags) or 1
    judged = [b for b in best if b is not None]
    sweep = {
        f"{t:g}": sum(1 for b in judged if b < t) / (len(judged) or 1)
        for t in (2, 3, 4, 5, 6, 7, 8, 10, 12)
    }
    return {
        "share_no_strong_match": sum(1 for f in flags if f is True) / n,
        "share_not_judged": sum(1 for f in flags if f is None) / n,
        "best_standing_quantiles": _quantiles(judged) if judged else {},
        "share_below_threshold": sweep,
    }


# --- recorded legs, for calibration ----------------------------------------------------------


def legs_path(work_dir: Path, pair: str) -> Path:
    return work_dir / "legs-foreign" / f"{pair.replace(':', '__')}.json"


def collect(pairs: Sequence[str], work_dir: Path, legs_dir: Path, limit: int | None) -> None:
    """Record, per query, the `POOL` best candidates of each leg with their raw scores."""
    opener = memlane_opener()
    for pair in pairs:
        queries_name, memory_name = parse_pair(pair)
        records: list[dict[str, Any]] = []
        for unit, queries in assignments(queries_name, memory_name, limit):
            paths = UnitPaths.for_unit(work_dir, memory_name, unit.unit_id)
            materialize(unit, paths)
            manager: Any = open_unit(opener, paths, base_config(paths.store_path("local"), {}))
            try:
                manager.sync(force=False)
                # A study tool: it reaches into the manager for the store and provider.
                searcher = manager._searching._searcher
                store, provider = searcher._store, searcher._runtime.provider
                sources = manager.settings.sources
                label = vector_label(provider.model, provider.key)
                size = sum(c.chunks for c in store.counts() if c.source in sources)
                for q in queries:
                    match = build_fts_query(q.text)
                    kw = store.search_keyword(match, sources=sources, limit=POOL) if match else []
                    embedded = provider.embed_query(q.text)
                    # Every chunk's cosine (the stores here are small): the query's background.
                    every = store.search_vector(
                        embedded, model=label, sources=sources, limit=max(size, 1)
                    )
                    vec = every[:POOL]
                    records.append(
                        {
                            "unit": unit.unit_id,
                            "qid": q.qid,
                            "vector": [_row(c) for c in vec],
                            "keyword": [_row(c) for c in kw],
                            "n_chunks": size,
                            "all_cosines": _quantiles([c.score for c in every]),
                            "terms": _term_presence(store, sources, q.text, vec, kw),
                        }
                    )
            finally:
                manager.close()
        target = legs_path(legs_dir, pair)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(records))
        print(f"{pair}: {len(records)} queries -> {target}", flush=True)


def _quantiles(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}

    def at(f: float) -> float:
        return ordered[min(len(ordered) - 1, int(f * len(ordered)))]

    return {
        "mean": statistics.fmean(ordered),
        "std": statistics.pstdev(ordered),
        "p50": at(0.5),
        "p90": at(0.9),
        "p99": at(0.99),
    }


def _term_presence(
    store: Any, sources: Any, text: str, vec: Sequence[Any], kw: Sequence[Any]
) -> list[list[Any]]:
    """Per analysed query term: [term, document frequency, the candidates (of either leg) that
    contain it], read from the FTS index itself (one MATCH per term)."""
    wanted = {str(c.chunk_id) for c in [*vec, *kw]}
    out: list[list[Any]] = []
    for term in fts_query_terms(text):
        found = store.search_keyword(quote_fts_term(term), sources=sources, limit=100_000)
        ids = {str(c.chunk_id) for c in found}
        out.append([term, len(ids), sorted(ids & wanted)])
    return out


def _row(c: Any) -> list[Any]:
    return [c.path, c.start_line, c.end_line, c.score, str(c.chunk_id), c.source]


# --- replay over recorded legs ---------------------------------------------------------------

Floor = tuple[float | None, float | None]  # (min cosine, min keyword evidence)


def _candidates(rows: Sequence[Sequence[Any]]) -> list[Candidate]:
    return [
        Candidate(
            chunk_id=ChunkId(str(cid)),
            source=source,
            path=path,
            start_line=start,
            end_line=end,
            text="",
            score=score,
        )
        for path, start, end, score, cid, source in rows
    ]


def fused_pool(record: dict[str, Any], fusion: str) -> list[Fused]:
    """What the Searcher fuses for this record (default weights per fusion)."""
    vec, kw = _candidates(record["vector"]), _candidates(record["keyword"])
    if fusion == "rrf":
        return rrf_merge(vec, kw)
    if fusion == "weighted":
        return weighted_merge(vec, kw, vector_weight=0.7, text_weight=0.3)
    # As the Searcher fuses: fewer keyword hits than asked for means the leg returned them all.
    return zscore_merge(
        vec, kw, vector_weight=0.5, text_weight=0.5, keyword_exhaustive=len(kw) < POOL
    )


def replay(pool: Sequence[Fused], fusion: str, min_score: float, floor: Floor) -> list[Fused]:
    """The Searcher's steps after fusion: min score, relevance floor, first 6."""
    text_weight = 0.3 if fusion == "weighted" else 0.0
    kept = apply_min_score(pool, min_score, text_weight=text_weight)
    kept = apply_relevance_floor(kept, RelevanceFloor(*floor))
    return kept[:MAX_RESULTS]


REAL_METRIC = {"locomo": "turn_recall@L5", "lme_pooled": "recall_all@5"}


def calibrate(
    pairs: Sequence[str], legs_dir: Path, fusion: str, floors: Sequence[Floor]
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Per pair, per floor, per half ("A", "B"): the per-query values (hits for a foreign pair,
    the set's target metric for a real one)."""
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for pair in pairs:
        queries_name, memory_name = parse_pair(pair)
        records = json.loads(legs_path(legs_dir, pair).read_text())
        real = queries_name == memory_name
        gold: dict[tuple[str, str], tuple[Query, dict[str, str]]] = {}
        turn_level = False
        if real:
            dataset = registry.load(memory_name, None, DATA_ROOT[0])
            turn_level = dataset.turn_level
            for unit in dataset.units():
                doc_of_path = unit.doc_of_path()
                gold.update({(unit.unit_id, q.qid): (q, doc_of_path) for q in unit.queries})
        metric = REAL_METRIC.get(memory_name, "recall@5" if not turn_level else "turn_recall@L5")
        per_floor: dict[str, dict[str, list[float]]] = {}
        for rec in records:
            pool = fused_pool(rec, fusion)
            half = half_of((rec["unit"], rec["qid"]))  # the fusion study's fixed split
            for floor in floors:
                # Real queries as the harness runs them (minScore 0), foreign at the default.
                hits = replay(pool, fusion, 0.0 if real else 0.35, floor)
                if real:
                    q, doc_of_path = gold[(rec["unit"], rec["qid"])]
                    lines = [(h.path, h.start_line, h.end_line) for h in hits]
                    value = score_query(q, lines, doc_of_path, turn_level=turn_level)[metric]
                else:
                    value = float(len(hits))
                cell = per_floor.setdefault(_label(floor), {"A": [], "B": []})
                cell[half].append(value)
        out[pair] = per_floor
    return out


def _label(floor: Floor) -> str:
    cos, ev = floor
    return f"cos>={'-' if cos is None else f'{cos:.3f}'} | bm25>={'-' if ev is None else f'{ev:g}'}"


def print_calibration(table: dict[str, dict[str, dict[str, list[float]]]], half: str) -> None:
    pairs = list(table)
    labels = list(next(iter(table.values())))
    print(f"\nhalf {half}: mean per query (foreign: hits; real: target metric)")
    print(f"{'floor':28}" + "".join(f"{p[:18]:>19}" for p in pairs))
    for label in labels:
        cells = []
        for p in pairs:
            vals = table[p][label]
            chosen = vals["A"] + vals["B"] if half == "all" else vals[half]
            cells.append(f"{statistics.fmean(chosen) if chosen else math.nan:19.3f}")
        print(f"{label:28}" + "".join(cells))


def pick(table: dict[str, dict[str, dict[str, list[float]]]], real: str, max_loss: float) -> str:
    """On half A: the floor with the fewest foreign hits (all foreign pairs of `table` pooled)
    whose loss of `real`'s target metric against no floor is at most `max_loss`."""
    none = _label((None, None))
    base = statistics.fmean(table[real][none]["A"])
    foreign = [p for p in table if p != real]

    def hits(label: str) -> float:
        return sum(sum(table[p][label]["A"]) for p in foreign)

    allowed = [
        label
        for label in table[real]
        if label != none and base - statistics.fmean(table[real][label]["A"]) <= max_loss
    ]
    return min(allowed, key=hits) if allowed else none


def floor_cost(pairs: Sequence[str], legs_dir: Path, limit: int) -> None:
    """Time the relevance floor alone on recorded pools (texts from the stores): the default
    floor of the bundled model against the cosine-or-bm25 floor without words, side by side
    per query, as the Searcher applies it (after minScore, judging up to 6 kept hits)."""
    from memlane.bench.studies.relevance_legs import chunk_texts  # a study helper, read-only

    # The words rule as a user opts into it (off by default since session 9).
    words = floor_for(0.805, provider="local", model="multilingual-e5-small", vector_leg=True)
    floors = {"cosine or bm25 (no words)": RelevanceFloor(0.805, 6.0), "opt-in (words)": words}
    for pair in pairs:
        queries_name, memory_name = parse_pair(pair)
        texts = chunk_texts(legs_dir, memory_name)
        wanted = {q.qid: q.text for q in foreign_queries(queries_name, None)}
        records = json.loads(legs_path(legs_dir, pair).read_text())[:limit]
        timings: dict[str, list[float]] = {name: [] for name in floors}
        for rec in records:
            pool = [replace(f, text=texts[str(f.chunk_id)]) for f in fused_pool(rec, "zscore")]
            kept = apply_min_score(pool, 0.0 if queries_name == memory_name else 0.35,
                                   text_weight=0.0)  # fmt: skip
            for name, floor in floors.items():
                start = time.perf_counter()
                apply_relevance_floor(kept, floor, wanted[rec["qid"]], limit=MAX_RESULTS)
                timings[name].append((time.perf_counter() - start) * 1000)
        cells = ", ".join(
            f"{name}: p50 {statistics.median(v):.3f} ms, p90 {sorted(v)[int(0.9 * len(v))]:.3f} ms"
            for name, v in timings.items()
        )
        print(f"{pair} ({len(records)} queries): {cells}", flush=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.studies.foreign", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "collect"):
        c = sub.add_parser(name)
        c.add_argument("pairs", nargs="+", help="<queries>:<memory>, or <set> for its own")
        c.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
        c.add_argument("--limit", type=int, default=300, help="queries drawn per set")
        c.add_argument("--config", default="{}", help="JSON merged into the config")
        c.add_argument("--legs-dir", type=Path, default=DEFAULT_WORK)
        c.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    cal = sub.add_parser("calibrate")
    cal.add_argument("pairs", nargs="+")
    cal.add_argument("--legs-dir", type=Path, default=DEFAULT_WORK)
    cal.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    cal.add_argument("--fusion", default="zscore", choices=("zscore", "weighted", "rrf"))
    cal.add_argument("--cosines", default="none,0.80,0.805,0.81,0.815,0.82,0.825,0.83")
    cal.add_argument("--evidence", default="none,6,7,8,9,10,11,12")
    cal.add_argument("--pick-for", help="the real set whose loss bounds the pick (half A)")
    cal.add_argument("--max-loss", type=float, default=0.007)
    cost = sub.add_parser("cost", help="time the floor alone on recorded pools")
    cost.add_argument("pairs", nargs="+")
    cost.add_argument("--legs-dir", type=Path, default=DEFAULT_WORK)
    cost.add_argument("--data-root", type=Path, default=registry.DEFAULT_DATA_ROOT)
    cost.add_argument("--limit", type=int, default=300, help="recorded queries per pair")
    args = p.parse_args(argv)
    DATA_ROOT[0] = args.data_root
    if args.cmd == "calibrate":
        cosines = [None if c == "none" else float(c) for c in args.cosines.split(",")]
        evidence = [None if e == "none" else float(e) for e in args.evidence.split(",")]
        floors = [(c, e) for c in cosines for e in evidence]
        table = calibrate(args.pairs, args.legs_dir, args.fusion, floors)
        for half in ("A", "B", "all"):
            print_calibration(table, half)
        if args.pick_for:
            chosen = pick(table, args.pick_for, args.max_loss)
            print(f"\npicked on half A ({args.pick_for} loss <= {args.max_loss}): {chosen}")
    elif args.cmd == "run":
        run(args.pairs, args.work_dir, args.limit, json.loads(args.config))
    elif args.cmd == "cost":
        floor_cost(args.pairs, args.legs_dir, args.limit)
    elif args.cmd == "collect":
        collect(args.pairs, args.work_dir, args.legs_dir, args.limit)


if __name__ == "__main__":
    main()
