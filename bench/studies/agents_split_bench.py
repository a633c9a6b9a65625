"""Benchmark: does a search across two agents rank like one index holding both agents' notes?

A data set's embedded store is copied into a private state dir: `all` (every document),
`even` and `odd` (every other document, by sorted path), `small` and `large` (every fourth
document, and the rest); what a copy should not hold is deleted through the store, so each
agent has its own bm25 statistics. For each query, agent `all`'s process runs
its own search and the search across `even,odd`; both are scored against the gold documents,
and the per-query latency is timed side by side. Nothing is embedded again and nothing is
synced: the copies are read as they are. The shared store under /work/main/bench/work is only
read (copied).

    .venv/bin/python -m bench.studies.agents_split_bench --dataset xquad_zh --limit 400
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import memlane
from memlane.adapters.embedding.local import LocalEmbeddingProvider
from memlane.adapters.store.database import SqliteDatabase
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.bench import metrics
from memlane.bench.datasets import registry
from memlane.bench.datasets.model import Query
from memlane.bench.runner import mode_config, select_queries
from memlane.domain.agents import agent_of, qualified
from memlane.domain.embedding import query_embedding_input
from memlane.domain.index_meta import vector_label
from memlane.domain.keywords import build_fts_query
from memlane.domain.scoring import Fused, weighted_merge, z_to_unit, zscore_merge
from memlane.domain.search import Candidate

SHARED_WORK = Path("/work/main/bench/work")
DATA_ROOT = Path("/work/shared/data")
MODES = ("keyword", "vector", "hybrid")
# Two splits of one corpus: halves (similar statistics) and a quarter beside three quarters.
PAIRS = (("even", "odd"), ("small", "large"))
AGENTS = tuple(a for pair in PAIRS for a in pair)
KS = (1, 5, 10)


def _split(store_file: Path, keep: set[str]) -> int:
    """Delete every memory file not in `keep` from the index copy at `store_file`."""
    store = SqliteIndexStore(SqliteDatabase.open(store_file))
    try:
        gone = [f.path for f in store.files("memory") if f.path not in keep]
        for path in gone:
            store.delete_file("memory", path)
        return len(gone)
    finally:
        store.close()


def _prepare(dataset: str, work: Path) -> tuple[Path, Path, dict[str, int]]:
    """The private state dir (with all/even/odd copies) and the workspace the copies record."""
    unit_dir = SHARED_WORK / dataset / dataset
    source = unit_dir / "state" / "memory" / "bench-local.sqlite"
    state = work / dataset / "state"
    if state.exists():
        shutil.rmtree(state)
    (state / "memory").mkdir(parents=True)
    for agent in ("all", *AGENTS):
        shutil.copyfile(source, state / "memory" / f"{agent}.sqlite")
    store = SqliteIndexStore(SqliteDatabase.open(state / "memory" / "all.sqlite"))
    try:
        paths = sorted(f.path for f in store.files("memory"))
    finally:
        store.close()
    sizes = {
        "all": len(paths),
        "even": len(paths) - _split(state / "memory" / "even.sqlite", set(paths[0::2])),
        "odd": len(paths) - _split(state / "memory" / "odd.sqlite", set(paths[1::2])),
        "small": len(paths) - _split(state / "memory" / "small.sqlite", set(paths[0::4])),
        "large": len(paths)
        - _split(state / "memory" / "large.sqlite", set(paths) - set(paths[0::4])),
    }
    return state, unit_dir / "workspace", sizes


def _hits(results: Sequence[memlane.SearchResult]) -> list[metrics.Hit]:
    return [(r.path, r.start_line, r.end_line) for r in results]


def _scores(
    ranked: Sequence[str], gold: dict[str, int], out: dict[str, list[float]], prefix: str
) -> None:
    for k in KS:
        out.setdefault(f"{prefix}recall@{k}", []).append(metrics.recall(ranked, gold, k))
    out.setdefault(f"{prefix}ndcg@10", []).append(metrics.ndcg(ranked, gold, 10))


def run(dataset: str, work: Path, limit: int | None) -> dict[str, Any]:
    """Score one data set in every mode; return the figures (also printed as a table)."""
    data = registry.load(dataset, data_root=DATA_ROOT)
    (unit,) = list(data.units())
    doc_of_path = unit.doc_of_path()
    queries = select_queries(unit.queries, limit)
    state, workspace, sizes = _prepare(dataset, work)
    store = state / "memory" / "{agentId}.sqlite"
    figures: dict[str, Any] = {"dataset": dataset, "queries": len(queries), "files": sizes}
    for mode in MODES:
        provider = "none" if mode == "keyword" else "local"
        config = mode_config(mode, provider, store, data.max_results, {})
        with memlane.open(
            workspace=workspace, agent_id="all", state_dir=state, config=config
        ) as memory:
            for pair in PAIRS:
                figures[f"{mode}:{'+'.join(pair)}"] = _compare(memory, pair, queries, doc_of_path)
    for pair in PAIRS:
        figures[f"fusion_replay:{'+'.join(pair)}"] = _replay(state, pair, queries, doc_of_path)
    return figures


def _compare(
    memory: memlane.MemoryManager,
    pair: tuple[str, str],
    queries: Sequence[Query],
    doc_of_path: dict[str, str],
) -> dict[str, float]:
    """Agent `all`'s own search against the search across `pair`, query by query."""
    values: dict[str, list[float]] = {}
    same_top = 0
    memory.search("warm-up", agents=pair)
    for query in queries:
        started = time.perf_counter()
        one = memory.search(query.text, max_results=10)
        middle = time.perf_counter()
        two = memory.search(query.text, max_results=10, agents=pair)
        ended = time.perf_counter()
        values.setdefault("one_ms", []).append((middle - started) * 1000)
        values.setdefault("two_ms", []).append((ended - middle) * 1000)
        ranked_one = metrics.distinct_ids(_hits(one.results), doc_of_path)
        ranked_two = metrics.distinct_ids(_hits(two.results), doc_of_path)
        _scores(ranked_one, query.gold_docs, values, "one_")
        _scores(ranked_two, query.gold_docs, values, "two_")
        same_top += ranked_one[:1] == ranked_two[:1]
    row = {
        name: round(statistics.median(v) if name.endswith("_ms") else statistics.fmean(v), 4)
        for name, v in values.items()
    }
    row["same_top1_share"] = round(same_top / len(queries), 4)
    return row


def _replay(
    state: Path, pair: tuple[str, str], queries: Sequence[Query], doc_of_path: dict[str, str]
) -> dict[str, dict[str, float]]:
    """The fusion step alone, on the two halves' candidates, with keyword scores taken per agent
    (what memlane does) or pooled raw across agents (bm25 of two indexes as if one scale).

    No decay, MMR, min score or relevance floor: only the fusion rule differs between columns.
    """
    provider = LocalEmbeddingProvider()
    label = vector_label(provider.model, provider.key)
    stores = {
        a: SqliteIndexStore(SqliteDatabase.open(state / "memory" / f"{a}.sqlite")) for a in pair
    }
    values: dict[str, list[float]] = {}
    try:
        for query in queries:
            match = build_fts_query(query.text)
            vector = provider.embed_query(
                query_embedding_input(query.text, provider.max_input_tokens)
            )
            keyword: list[Candidate] = []
            near: list[Candidate] = []
            for agent, store in stores.items():
                found = store.search_keyword(match, sources=("memory",), limit=200) if match else []
                keyword += [replace(c, chunk_id=qualified(agent, c.chunk_id)) for c in found]
                close = store.search_vector(vector, model=label, sources=("memory",), limit=200)
                near += [replace(c, chunk_id=qualified(agent, c.chunk_id)) for c in close]
            near.sort(key=lambda c: -c.score)
            rankings = {
                "pooled_raw": {
                    "keyword": _lines(
                        weighted_merge([], keyword, vector_weight=0.0, text_weight=1.0)
                    ),
                    "hybrid": _lines(
                        zscore_merge(near, keyword, vector_weight=0.5, text_weight=0.5)
                    ),
                },
                "per_agent": {
                    "keyword": _per_agent_keyword(keyword),
                    "hybrid": _per_agent_zscore(near, keyword),
                },
            }
            for name, rules in rankings.items():
                for rule, ranked_lines in rules.items():
                    hits = ranked_lines[:10]
                    ranked = metrics.distinct_ids(hits, doc_of_path)
                    _scores(ranked, query.gold_docs, values, f"{rule}:{name}:")
    finally:
        for store in stores.values():
            store.close()
    table: dict[str, dict[str, float]] = {}
    for key, v in values.items():
        rule, name, metric = key.split(":")
        table.setdefault(f"{rule}:{metric}", {})[name] = round(statistics.fmean(v), 4)
    return table


Lines = list[tuple[str, int, int]]


def _lines(fused: Sequence[Fused]) -> Lines:
    return [(f.path, f.start_line, f.end_line) for f in fused]


def _by_agent(cands: Sequence[Candidate]) -> dict[str, list[Candidate]]:
    split: dict[str, list[Candidate]] = {}
    for c in cands:
        split.setdefault(agent_of(c.chunk_id), []).append(c)
    return split


def _per_agent_keyword(keyword: Sequence[Candidate]) -> Lines:
    """The alternative to pooling bm25 raw: each agent's keyword hits normalised on their own
    (each agent's best hit → 1.0), then one list by that score (ties: agent order, then rank)."""
    fused = [f for group in _by_agent(keyword).values()
             for f in weighted_merge([], group, vector_weight=0.0, text_weight=1.0)]  # fmt: skip
    return _lines(sorted(fused, key=lambda f: -f.score))


def _z(scores: dict[str, float]) -> tuple[dict[str, float], float]:
    """z-scores (population spread) and the floor for a chunk the leg missed, as the domain's
    z-score fusion standardises one leg (no spread: hits 0, misses -1)."""
    if not scores:
        return {}, 0.0
    mean = statistics.fmean(scores.values())
    spread = statistics.pstdev(scores.values())
    if spread <= 1e-9:
        return dict.fromkeys(scores, 0.0), -1.0
    z = {k: (v - mean) / spread for k, v in scores.items()}
    return z, min(z.values())


def _per_agent_zscore(near: Sequence[Candidate], keyword: Sequence[Candidate]) -> Lines:
    """The domain's z-score fusion (0.5 / 0.5) with the keyword leg standardised per agent
    instead of as one pool (cosines stay one pool: one model, one scale); a chunk a leg missed
    takes the lowest of the agents' floors."""
    cosine: dict[str, float] = {}
    for c in near:
        cosine[c.chunk_id] = max(c.score, cosine.get(c.chunk_id, -math.inf))
    z_vector, vector_floor = _z(cosine)
    z_keyword: dict[str, float] = {}
    floors: list[float] = []
    for group in _by_agent(keyword).values():
        evidence: dict[str, float] = {}
        for c in group:
            evidence[c.chunk_id] = max(0.0, -c.score, evidence.get(c.chunk_id, 0.0))
        z, floor = _z(evidence)
        z_keyword.update(z)
        floors.append(floor)
    keyword_floor = min(floors, default=0.0)
    legs = [(z_vector, vector_floor), (z_keyword, keyword_floor)]
    legs = [leg for leg in legs if leg[0]]
    norm = math.sqrt(0.25 * len(legs)) or 1.0
    first: dict[str, Candidate] = {}
    for c in [*near, *keyword]:
        first.setdefault(c.chunk_id, c)
    score = {
        chunk_id: z_to_unit(sum(0.5 * z.get(chunk_id, floor) for z, floor in legs) / norm)
        for chunk_id in first
    }
    ranked = sorted(first, key=lambda chunk_id: -score[chunk_id])
    return [(first[i].path, first[i].start_line, first[i].end_line) for i in ranked]


def _table(figures: dict[str, Any]) -> str:
    lines = [
        f"{figures['dataset']}: {figures['queries']} queries, files {figures['files']}",
        "mode:agents          | metric     | one index | two agents | delta",
        "---------------------|------------|-----------|------------|------",
    ]
    for mode in MODES:
        for pair in PAIRS:
            name = f"{mode}:{'+'.join(pair)}"
            row = figures[name]
            for metric in [*(f"recall@{k}" for k in KS), "ndcg@10", "ms (p50)"]:
                key = "ms" if metric == "ms (p50)" else metric
                one, two = row[f"one_{key}"], row[f"two_{key}"]
                lines.append(
                    f"{name:20} | {metric:10} | {one:9.4f} | {two:10.4f} | {two - one:+.4f}"
                )
            lines.append(f"{name:20} | same top-1 | {row['same_top1_share']:.4f}")
    lines += [
        "",
        "fusion step only: bm25 pooled raw (shipped) vs normalised/standardised per agent",
        "agents:rule:metric         | pooled raw | per agent | delta",
        "---------------------------|------------|-----------|------",
    ]
    for pair in PAIRS:
        for key, row in figures[f"fusion_replay:{'+'.join(pair)}"].items():
            raw, per = row["pooled_raw"], row["per_agent"]
            label = f"{'+'.join(pair)}:{key}"
            lines.append(f"{label:26} | {raw:10.4f} | {per:9.4f} | {raw - per:+.4f}")
    return "\n".join(lines)


def main() -> None:
    """Command line: run, print the table, write the JSON beside the other results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="xquad_zh")
    parser.add_argument("--limit", type=int, default=None, help="queries (default: all)")
    parser.add_argument("--work-dir", type=Path, default=Path("bench/work/agents-split"))
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    figures = run(args.dataset, args.work_dir.resolve(), args.limit)
    print(_table(figures))
    args.out.mkdir(parents=True, exist_ok=True)
    name = f"agents-split-{args.dataset}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    (args.out / name).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"written {args.out / name}")


if __name__ == "__main__":
    main()
