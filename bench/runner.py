"""Runs data sets through memlane's public API (files on disk, sync, search) and scores the hits.

Each unit is indexed once per embedding store: the vector modes share one store (they differ
only in query-time settings, so re-opening with another config re-uses the index), keyword-only
mode has its own store so switching providers never forces a re-index. Stores live under
`bench/work/` and keep their embedding cache between runs; with `--driver postgres` they are
PostgreSQL databases filled from those files (store_driver.py).
"""

from __future__ import annotations

import hashlib
import importlib
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from memlane.bench import metrics
from memlane.bench.datasets.model import Dataset, Query, Unit
from memlane.bench.embed_cache import SharedCache
from memlane.bench.store_driver import SqliteDriver, StoreDriver
from memlane.bench.vector_engine import (
    EngineReport,
    check_engine,
    engine_state,
    forced_code_engine,
)
from memlane.bench.workspace import (
    AGENT_ID,
    UnitPaths,
    estimated_chunks,
    indexed_chars,
    materialize,
)
from memlane.domain.search import SearchResult

DOC_KS = (1, 5, 10, 50, 100)
TURN_KS = (5, 10)
LINE_BUDGETS = (1, 2, 5, 10, 15, 25, 50)
PROGRESS_EVERY = 250

# Query-time settings per mode, merged over the base config (JSON5 camelCase keys).
MODES: dict[str, dict[str, Any]] = {
    "keyword": {"provider": "none"},
    "vector": {"query": {"hybrid": {"enabled": False}}},
    "hybrid": {},
    "weighted": {"query": {"hybrid": {"fusion": "weighted"}}},
    "hybrid_mmr": {"query": {"hybrid": {"mmr": {"enabled": True}}}},
    "rrf": {"query": {"hybrid": {"fusion": "rrf"}}},
}


class SearchOutcome(Protocol):
    @property
    def results(self) -> Sequence[SearchResult]: ...


class Manager(Protocol):
    """The slice of `memlane.application.memory.MemoryManager` the harness uses."""

    def sync(self, *, force: bool = False, wait_for_vectors: bool = True) -> object: ...

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        as_of: str | None = None,
    ) -> SearchOutcome: ...

    def status(self) -> EngineReport: ...

    def close(self) -> None: ...


Opener = Callable[..., Manager]


def memlane_opener() -> Opener:
    """`memlane.open`, or a clear error while the API does not exist yet."""
    module = importlib.import_module("memlane")
    opener = getattr(module, "open", None)
    if opener is None:
        raise RuntimeError("memlane.open is not available yet; use --dry-run")
    return cast(Opener, opener)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def open_unit(opener: Opener, paths: UnitPaths, config: Mapping[str, Any]) -> Manager:
    """A manager on the unit's workspace and state dir with `config`."""
    return opener(
        workspace=str(paths.workspace),
        state_dir=str(paths.state_dir),
        agent_id=AGENT_ID,
        config=config,
        # A unit's store may be a copy of another work dir's (a private copy for a side run):
        # the unit's own workspace is the right one, so the recorded one is moved, not refused.
        move_workspace=True,
    )


def store_key(mode_config: Mapping[str, Any]) -> str:
    provider = str(mode_config.get("provider", "auto"))
    return "fts" if provider == "none" else provider


def mode_config(
    mode: str,
    provider: str,
    store: Path | Mapping[str, Any],
    max_results: int,
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """The config of one mode; `store` is the SQLite file or a whole `store` block."""
    base: dict[str, Any] = {
        "provider": provider,
        # minScore is left at the product's default, so the guard measures what ships.
        "query": {"maxResults": max_results},
        "sync": {"watch": False, "onSearch": False, "onSessionStart": False},
    }
    merged = deep_merge(deep_merge(base, MODES[mode]), extra)
    block = {"path": str(store)} if isinstance(store, Path) else dict(store)
    return deep_merge(merged, {"store": block})


@dataclass(frozen=True, slots=True)
class RunOptions:
    work_dir: Path
    modes: tuple[str, ...] = tuple(MODES)
    provider: str = "local"
    max_results: int = 50
    limit_units: int | None = None
    limit_queries: int | None = None
    extra_config: Mapping[str, Any] = field(default_factory=dict)
    passages_per_second: float = 1.5
    queries_per_second: float = 15.0
    driver: StoreDriver = field(default_factory=SqliteDriver)
    # Bench only: the code-file vector engine at any store size (vector_engine.py).
    force_vector_codes: bool = False
    # The cache shared by every unit, mode and set (embed_cache.py); None: each store's own.
    shared_cache: SharedCache | None = None


@dataclass(frozen=True, slots=True)
class Estimate:
    units: int
    files: int
    queries: int
    chars: int
    chunks: int
    embed_seconds: float


def select_units(units: Iterator[Unit], limit: int | None) -> list[Unit]:
    """All units, or `limit` of them; single-query units are taken round-robin over categories
    so a limited LongMemEval run still covers every question type."""
    chosen = list(units)
    if limit is None or limit >= len(chosen):
        return chosen
    if all(len(u.queries) == 1 for u in chosen):
        by_cat: dict[str, list[Unit]] = {}
        for u in chosen:
            by_cat.setdefault(u.queries[0].category, []).append(u)
        picked: list[Unit] = []
        while len(picked) < limit:
            for group in by_cat.values():
                if group and len(picked) < limit:
                    picked.append(group.pop(0))
        return picked
    return chosen[:limit]


def select_queries(queries: Sequence[Query], limit: int | None) -> tuple[Query, ...]:
    """All queries, or a reproducible sample: the `limit` with the smallest sha256(qid)."""
    if limit is None or limit >= len(queries):
        return tuple(queries)
    ranked = sorted(queries, key=lambda q: hashlib.sha256(q.qid.encode()).hexdigest())
    keep = {q.qid for q in ranked[:limit]}
    return tuple(q for q in queries if q.qid in keep)


def limited_units(dataset: Dataset, options: RunOptions) -> list[Unit]:
    units = select_units(dataset.units(), options.limit_units)
    return [
        Unit(u.unit_id, u.files, select_queries(u.queries, options.limit_queries)) for u in units
    ]


def estimate(units: Sequence[Unit], options: RunOptions) -> Estimate:
    sizes = [s for u in units for s in indexed_chars(u)]
    chunks = estimated_chunks(sizes)
    queries = sum(len(u.queries) for u in units)
    embedded_modes = [m for m in options.modes if store_key(MODES[m]) != "fts"]
    seconds = 0.0
    if embedded_modes:
        seconds = chunks / options.passages_per_second + queries / options.queries_per_second
    return Estimate(
        units=len(units),
        files=sum(len(u.files) for u in units),
        queries=queries,
        chars=sum(sizes),
        chunks=chunks,
        embed_seconds=seconds,
    )


def score_query(
    query: Query, hits: Sequence[metrics.Hit], doc_of_path: Mapping[str, str], *, turn_level: bool
) -> dict[str, float]:
    ranked = metrics.distinct_ids(hits, doc_of_path)
    gold = query.gold_docs
    out: dict[str, float] = {}
    for k in DOC_KS:
        out[f"recall_any@{k}"] = metrics.recall_any(ranked, gold, k)
        out[f"recall_all@{k}"] = metrics.recall_all(ranked, gold, k)
        out[f"recall@{k}"] = metrics.recall(ranked, gold, k)
    out["ndcg@10"] = metrics.ndcg(ranked, gold, 10)
    out["mrr@10"] = metrics.mrr(ranked, gold, 10)
    out["lines_per_hit@5"] = metrics.mean_lines_per_hit(hits, 5)
    out["lines_per_hit"] = metrics.mean_lines_per_hit(hits)
    if turn_level and query.gold_lines:
        gl = query.gold_lines
        for k in TURN_KS:
            out[f"turn_recall@{k}"] = metrics.turn_recall(hits, gl, k)
            out[f"turn_hit@{k}"] = metrics.turn_hit(hits, gl, k)
        out["turn_ndcg@10"] = metrics.turn_ndcg(hits, gl, 10)
        for budget in LINE_BUDGETS:
            out[f"turn_recall@L{budget}"] = metrics.turn_recall_at_budget(hits, gl, budget)
    return out


def ranking_digests(hits: Sequence[metrics.Hit]) -> dict[str, str]:
    """Short digests of the ranked hits (top 10, all): two runs agree on a query's ranking
    exactly when its digests match, which equal metrics alone do not show."""

    def digest(part: Sequence[metrics.Hit]) -> str:
        return hashlib.sha256(repr([tuple(h) for h in part]).encode()).hexdigest()[:16]

    return {"top10": digest(hits[:10]), "all": digest(hits)}


@dataclass(slots=True)
class UnitRun:
    unit_id: str
    files: int
    chars: int
    queries: int
    sync_seconds: dict[str, float] = field(default_factory=dict)
    search_p50_ms: dict[str, float] = field(default_factory=dict)
    # What answered the vector leg, per mode with one, as the store's status said after the
    # queries ("codes: no file, exact: 270 vectors, below 20000").
    vector_engine: dict[str, str] = field(default_factory=dict)
    # Per vector store (store key): texts the shared cache gave the store, texts embedded.
    cache_seeded: dict[str, int] = field(default_factory=dict)
    embedded: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class DatasetRun:
    name: str
    turn_level: bool
    units: list[UnitRun] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)


def run_unit(
    dataset: Dataset,
    unit: Unit,
    options: RunOptions,
    opener: Opener,
    out: DatasetRun,
    log: Callable[[str], None],
    checkpoint: Callable[[], object] = lambda: None,
) -> None:
    """Index `unit` and run its queries in every mode; `checkpoint` is called after each mode
    so a long run that dies keeps what it measured."""
    paths = UnitPaths.for_unit(options.work_dir, dataset.name, unit.unit_id)
    materialize(unit, paths)
    doc_of_path = unit.doc_of_path()
    record = UnitRun(unit.unit_id, len(unit.files), sum(indexed_chars(unit)), len(unit.queries))
    out.units.append(record)
    for mode in options.modes:
        key = store_key({"provider": options.provider, **MODES[mode]})
        store = options.driver.store_config(paths, key)
        cfg = mode_config(mode, options.provider, store, options.max_results, options.extra_config)
        t0 = time.perf_counter()
        shared = options.shared_cache if key != "fts" and set(store) == {"path"} else None
        first_of_store = key not in record.embedded
        with forced_code_engine(options.force_vector_codes):
            if shared is not None and first_of_store:
                record.cache_seeded[key] = seed_store(opener, paths, cfg, shared)
            manager = open_unit(opener, paths, cfg)
            try:
                synced = manager.sync(force=False)
                if shared is not None and first_of_store:
                    record.embedded[key] = int(getattr(synced, "chunks_embedded", 0))
                record.sync_seconds[mode] = time.perf_counter() - t0
                latencies: list[float] = []
                for q in unit.queries:
                    t1 = time.perf_counter()
                    outcome = manager.search(q.text, max_results=options.max_results, as_of=q.as_of)
                    latencies.append((time.perf_counter() - t1) * 1000.0)
                    if len(latencies) % PROGRESS_EVERY == 0:
                        log(f"    {mode}: {len(latencies)}/{len(unit.queries)} queries")
                    hits = [(r.path, r.start_line, r.end_line) for r in outcome.results]
                    out.records.append(
                        {
                            "unit": unit.unit_id,
                            "qid": q.qid,
                            "category": q.category,
                            "mode": mode,
                            "latency_ms": latencies[-1],
                            "n_hits": len(hits),
                            "ranking": ranking_digests(hits),
                            # The marking (domain/confidence.py): the response's flag and the
                            # first hits' standings above the query's background.
                            "no_strong_match": getattr(outcome, "no_strong_match", None),
                            "confidence": [
                                getattr(r, "confidence", None) for r in outcome.results[:10]
                            ],
                            "metrics": score_query(
                                q, hits, doc_of_path, turn_level=dataset.turn_level
                            ),
                        }
                    )
                if latencies:
                    record.search_p50_ms[mode] = statistics.median(latencies)
                engine = ""
                if key != "fts":
                    report = manager.status()
                    record.vector_engine[mode] = engine_state(report)
                    engine = f", vector leg {record.vector_engine[mode]}"
                    if options.force_vector_codes:
                        check_engine(report, f"{dataset.name}/{unit.unit_id} {mode}")
            finally:
                manager.close()
                if shared is not None:
                    shared.harvest(Path(store["path"]))
        log(
            f"  {dataset.name}/{unit.unit_id} {mode}: sync {record.sync_seconds[mode]:.1f}s, "
            f"{len(unit.queries)} queries, p50 {record.search_p50_ms.get(mode, 0.0):.1f} ms"
            f"{engine}"
        )
        checkpoint()


def seed_store(
    opener: Opener, paths: UnitPaths, cfg: Mapping[str, Any], shared: SharedCache
) -> int:
    """Bring the unit's store up to date without embedding (keyword rows and the vectors its own
    cache holds), close it, and seed its cache with the vectors the shared cache holds for its
    chunks; return how many were seeded. The sync that follows embeds only texts neither cache
    holds. The store is closed while seeded: another connection's writes are not reliably seen
    by an open manager."""
    store = Path(cfg["store"]["path"])
    shared.harvest(store)  # a run that died mid-backfill left its vectors here
    manager = open_unit(opener, paths, cfg)
    try:
        manager.sync(force=False, wait_for_vectors=False)
    finally:
        manager.close()
    return shared.seed(store)
