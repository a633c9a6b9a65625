"""Integration: the pgvector leg (HNSW, cosine, exact re-scoring, per-agent dimensions)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memlane.adapters.postgres import vectors
from memlane.adapters.postgres.database import PostgresDatabase
from memlane.adapters.postgres.postgres_index_store import PostgresIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.search import TimeWindow
from memlane.domain.sources import ALL_SOURCES
from tests.pg_server import fresh_database, unique_agent

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

MODEL = "m"


@pytest.fixture
def db(pg_database: str) -> Iterator[PostgresDatabase]:
    opened = PostgresDatabase.open(pg_database)
    yield opened
    opened.close()


def put(store: PostgresIndexStore, vectors: np.ndarray, path: str = "memory/v.md") -> None:
    chunks = [
        Chunk(
            id=ChunkId(f"memory:{path}:{i}"),
            source="memory",
            path=path,
            start_line=i + 1,
            end_line=i + 1,
            text=f"chunk {i}",
            hash=ContentHash(f"{path}-{i}"),
        )
        for i in range(len(vectors))
    ]
    store.replace_file(
        IndexedFile("memory", path, ContentHash(path), 1.0, 1),
        chunks,
        [v.tolist() for v in vectors],
        MODEL,
    )


def exact_top(vectors: np.ndarray, query: np.ndarray, k: int) -> list[str]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    return [f"memory:memory/v.md:{i}" for i in np.argsort(-scores, kind="stable")[:k]]


def test_an_hnsw_index_serves_each_dimension(db: PostgresDatabase) -> None:
    """The first vectors of a dimension create its partial HNSW index (cosine)."""
    put(PostgresIndexStore(db, unique_agent()), np.eye(3, 5))

    with db.read() as conn:
        definition = conn.exec_driver_sql(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'memlane_chunks_hnsw_5'"
        ).scalar_one()
    assert "hnsw" in definition
    assert "vector_cosine_ops" in definition
    assert "dims = 5" in definition


def test_agents_keep_their_own_dimensions_in_one_table(db: PostgresDatabase) -> None:
    small, large = PostgresIndexStore(db, unique_agent()), PostgresIndexStore(db, unique_agent())
    put(small, np.eye(4, 4))
    put(large, np.eye(8, 8))

    assert (
        small.search_vector([0, 1, 0, 0], model=MODEL, sources=ALL_SOURCES, limit=1)[0].chunk_id
        == "memory:memory/v.md:1"
    )
    assert (
        large.search_vector([0, 0, 0, 0, 0, 0, 0, 1], model=MODEL, sources=ALL_SOURCES, limit=1)[
            0
        ].chunk_id
        == "memory:memory/v.md:7"
    )


def test_a_small_agent_is_not_starved_by_a_big_one(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the HNSW index, filtering by agent afterwards still fills the result.

    The leg scans an agent this small exactly, and the planner would rather answer it from its
    btree; the test turns the first off and drops the btrees inside its transaction (rolled
    back) so the HNSW path is the one measured, and shows that without the iterative scan the
    same query comes back short.
    """
    monkeypatch.setattr(vectors, "EXACT_ROWS", 0)
    db = PostgresDatabase.open(fresh_database(pg_url))
    rng = np.random.default_rng(7)
    big, small = PostgresIndexStore(db, unique_agent()), PostgresIndexStore(db, unique_agent())
    put(big, rng.normal(size=(3000, 16)).astype(np.float32))
    put(small, rng.normal(size=(6, 16)).astype(np.float32))
    query = rng.normal(size=16).tolist()
    try:
        with db.read() as conn:
            conn.exec_driver_sql(
                "DROP INDEX memlane_chunks_model, memlane_chunks_file, memlane_chunks_stats, "
                "memlane_chunks_time, memlane_chunks_span"
            )
            conn.exec_driver_sql("ALTER TABLE memlane_chunks DROP CONSTRAINT memlane_chunks_pkey")
            conn.exec_driver_sql(
                "ALTER TABLE memlane_chunks DROP CONSTRAINT memlane_chunks_agent_id_key"
            )
            conn.exec_driver_sql("ANALYZE memlane_chunks")
            conn.exec_driver_sql("SET LOCAL enable_seqscan = off")

            hits = vectors.top(
                conn, small.agent, query, dims=16, model=MODEL, sources=ALL_SOURCES, limit=5
            )
            plan = " ".join(
                str(r[0])
                for r in conn.exec_driver_sql(
                    "EXPLAIN SELECT rid FROM memlane_chunks WHERE dims = 16 AND agent = %s "
                    "ORDER BY embedding::vector(16) <=> %b::vector(16) LIMIT 25",
                    (small.agent, vectors.to_wire(query)),
                )
            )
            conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = off")
            conn.exec_driver_sql("SET LOCAL hnsw.ef_search = 40")
            plain = conn.exec_driver_sql(
                "SELECT rid FROM memlane_chunks WHERE dims = 16 AND agent = %s "
                "ORDER BY embedding::vector(16) <=> %b::vector(16) LIMIT 5",
                (small.agent, vectors.to_wire(query)),
            ).all()
            conn.rollback()
    finally:
        db.close()

    assert "memlane_chunks_hnsw_16" in plan
    assert len(hits) == 5
    assert len(plain) < 5  # what the iterative scan prevents


def test_results_are_re_scored_exactly(db: PostgresDatabase) -> None:
    """Scores are exact cosines, best first, and the top 10 matches an exact scan."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(1500, 16)).astype(np.float32)
    store = PostgresIndexStore(db, unique_agent())
    put(store, vectors)
    found = 0
    for _ in range(10):
        query = rng.normal(size=16).astype(np.float32)
        hits = store.search_vector(query.tolist(), model=MODEL, sources=ALL_SOURCES, limit=10)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        best = int(hits[0].chunk_id.rsplit(":", 1)[1])
        v, q = vectors[best].astype(np.float64), query.astype(np.float64)
        expected = float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))
        assert hits[0].score == pytest.approx(expected, abs=1e-9)
        found += len({h.chunk_id for h in hits} & set(exact_top(vectors, query, 10)))
    assert found / 100 >= 0.9  # recall@10 against the exact scan


def test_a_narrow_window_gets_every_chunk_it_holds(db: PostgresDatabase) -> None:
    """A `since` / `until` window is strict and complete: every chunk inside it comes back,
    ranked exactly, even where the HNSW index's scan budget would run out on rows outside it.

    The budget (`hnsw.max_scan_tuples`, 20,000 by default, met by a day a year back among
    100,000 chunks) is set to 100 here, and the time index is dropped inside the transaction
    with the other btrees (rolled back) so that the planner's way to the window is the HNSW
    index, as it was there.
    """
    rng = np.random.default_rng(5)
    day = 86_400.0
    store = PostgresIndexStore(db, unique_agent())
    stored = rng.normal(size=(2000, 16)).astype(np.float32)
    chunks = [
        Chunk(
            id=ChunkId(f"memory:memory/d.md:{i}"),
            source="memory",
            path="memory/d.md",
            start_line=i + 1,
            end_line=i + 1,
            text=f"chunk {i}",
            hash=ContentHash(f"d-{i}"),
            time_start=i * day,
            time_end=i * day + 60,
        )
        for i in range(len(stored))
    ]
    store.replace_file(
        IndexedFile("memory", "memory/d.md", ContentHash("d"), 1.0, 1),
        chunks,
        [v.tolist() for v in stored],
        MODEL,
    )
    query = rng.normal(size=16).astype(np.float32)
    window = TimeWindow(since=1000 * day, until=1009 * day + 3_600)  # days 1000..1009
    with db.read() as conn:
        conn.exec_driver_sql(
            "DROP INDEX memlane_chunks_model, memlane_chunks_file, memlane_chunks_stats, "
            "memlane_chunks_time, memlane_chunks_span"
        )
        conn.exec_driver_sql("ALTER TABLE memlane_chunks DROP CONSTRAINT memlane_chunks_pkey")
        conn.exec_driver_sql(
            "ALTER TABLE memlane_chunks DROP CONSTRAINT memlane_chunks_agent_id_key"
        )
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        conn.exec_driver_sql("SET LOCAL hnsw.max_scan_tuples = 100")
        hits = vectors.top(
            conn,
            store.agent,
            query.tolist(),
            dims=16,
            model=MODEL,
            sources=ALL_SOURCES,
            limit=50,
            window=window,
        )
        rids = conn.exec_driver_sql(
            "SELECT rid, id FROM memlane_chunks WHERE agent = %s", (store.agent,)
        ).all()
        conn.rollback()
    index_of = {int(rid): int(str(chunk_id).rsplit(":", 1)[1]) for rid, chunk_id in rids}
    found = [index_of[rid] for rid, _ in hits]
    inside = stored[1000:1010].astype(np.float64)
    q = query.astype(np.float64)
    exact = inside @ q / (np.linalg.norm(inside, axis=1) * np.linalg.norm(q))
    assert found == [1000 + int(i) for i in np.argsort(-exact, kind="stable")]
    assert [s for _, s in hits] == pytest.approx(sorted(exact, reverse=True), abs=1e-9)
