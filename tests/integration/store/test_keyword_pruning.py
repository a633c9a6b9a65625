"""The pruned keyword leg returns exactly FTS5's ranking: same rows, same scores (float
equality), same order (ties by rowid), on random corpora with deletions, CJK n-grams and source
filters, and the pruning does happen."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memlane.adapters.store import fts5_numbers, keyword_search, rows
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.application.ports.index_store import IndexedFile
from memlane.domain.chunks import Chunk, ChunkId, ContentHash
from memlane.domain.keywords import build_fts_query
from memlane.domain.sources import ALL_SOURCES, Source

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _prune_small_corpora(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the pruned path on corpora this small (by default its cost rule leaves them to
    FTS5, which ranks a few thousand rows faster than Python re-scores them)."""
    monkeypatch.setattr(keyword_search, "COST_RATIO", 1)


_LATIN = [f"w{i}" for i in range(400)] + ["running", "runs", "ran", "generalization", "général"]
_HAN = "猫狗鱼鸟山水火土木金日月星云雨风"


def _word(rng: random.Random) -> str:
    # Zipf-like: a few words in most chunks, a long tail of rare ones.
    return _LATIN[min(int(rng.paretovariate(0.7)) - 1, len(_LATIN) - 1)]


def _text(rng: random.Random) -> str:
    words = [_word(rng) for _ in range(rng.randint(3, 40))]
    if rng.random() < 0.3:
        words.append("".join(rng.choice(_HAN) for _ in range(rng.randint(1, 6))))
    return " ".join(words)


def _fill(store: SqliteIndexStore, rng: random.Random, files: int) -> None:
    for f in range(files):
        source: Source = "memory" if f % 3 else "sessions"
        path = f"f{f}.md"
        version = "v1"
        for _ in range(2 if f % 5 == 0 else 1):  # some files replaced: FTS5 tombstones
            chunks = [
                Chunk(ChunkId(f"{path}#{version}#{i}"), source, path, i + 1, i + 1,
                      _text(rng), ContentHash(f"{path}{version}{i}"))
                for i in range(rng.randint(1, 12))
            ]  # fmt: skip
            file = IndexedFile(source, path, ContentHash(path + version), 1.0, 10)
            store.replace_file(file, chunks, [None] * len(chunks), "m")
            version = "v2"
    for f in range(0, files, 7):
        store.delete_file("memory" if f % 3 else "sessions", f"f{f}.md")


def _reference(
    store: SqliteIndexStore, match: str, sources: list[Source], limit: int
) -> list[tuple[int, float]]:
    """FTS5 ranking every match, ordered by (rank, rowid): the unpruned answer."""
    every = set(ALL_SOURCES) <= set(sources)
    with store.database.read() as conn:
        return rows.keyword_top(conn, match, sources, every_source=every, limit=limit)


def _pruned(
    store: SqliteIndexStore, match: str, sources: list[Source], limit: int
) -> tuple[list[tuple[int, float]], str]:
    search = store._keywords
    every = set(ALL_SOURCES) <= set(sources)
    with store.database.read() as conn:
        got = search.top(conn, match, sources, every_source=every, limit=limit)
    return got, search.last_plan


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_ranking_equals_fts5_ranking(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    store = SqliteIndexStore.open(tmp_path / "index.db")
    _fill(store, rng, files=220)
    plans: list[str] = []
    try:
        for _ in range(120):
            terms = [_word(rng) for _ in range(rng.randint(1, 5))]
            if rng.random() < 0.25:
                terms.append("".join(rng.choice(_HAN) for _ in range(rng.randint(2, 5))))
            match = build_fts_query(" ".join(terms))
            assert match is not None
            limit = rng.choice([1, 3, 10, 40])
            sources: list[Source] = rng.choice([list(ALL_SOURCES), ["memory"], ["sessions"]])
            got, plan = _pruned(store, match, sources, limit)
            plans.append(plan)
            assert got == _reference(store, match, sources, limit), (match, limit, sources)
    finally:
        store.close()
    # The test is about the pruned path: most queries must have taken it.
    assert plans.count("pruned") > len(plans) // 3, plans


def test_ties_come_by_rowid_and_duplicated_phrases_count_twice(tmp_path: Path) -> None:
    store = SqliteIndexStore.open(tmp_path / "index.db")
    rng = random.Random(9)
    _fill(store, rng, files=60)
    same = [
        Chunk(ChunkId(f"t#{i}"), "memory", "t.md", i + 1, i + 1, "zebra w0 w0", ContentHash(f"t{i}"))
        for i in range(30)
    ]  # fmt: skip
    store.replace_file(IndexedFile("memory", "t.md", ContentHash("t"), 1.0, 1), same,
                       [None] * 30, "m")  # fmt: skip
    try:
        for match in ['"zebra" OR "w0"', '"zebra" OR "w0" OR "zebra"', '"w0" OR "zebra"']:
            got, plan = _pruned(store, match, list(ALL_SOURCES), 12)
            assert plan == "pruned"
            assert got == _reference(store, match, list(ALL_SOURCES), 12)
            assert [rid for rid, _ in got] == sorted(rid for rid, _ in got)  # all tied
    finally:
        store.close()


def test_queries_it_does_not_model_are_answered_by_fts5(tmp_path: Path) -> None:
    store = SqliteIndexStore.open(tmp_path / "index.db")
    _fill(store, random.Random(4), files=40)
    try:
        for match in ['"w1" AND "w2"', "w1 OR w2", '"w1"', 'NEAR("w1" "w2")']:
            got, plan = _pruned(store, match, list(ALL_SOURCES), 5)
            assert plan.startswith("fts5:")
            assert got == _reference(store, match, list(ALL_SOURCES), 5)
    finally:
        store.close()


def test_a_stale_count_cache_is_dropped_when_the_index_changes(tmp_path: Path) -> None:
    store = SqliteIndexStore.open(tmp_path / "index.db")
    rng = random.Random(5)
    _fill(store, rng, files=80)
    match = '"w0" OR "w1" OR "zebra"'
    try:
        zebras = [
            Chunk(ChunkId(f"z#{i}"), "memory", "z.md", i + 1, i + 1, "zebra w0", ContentHash(f"z{i}"))
            for i in range(20)
        ]  # fmt: skip
        file = IndexedFile("memory", "z.md", ContentHash("z"), 1.0, 1)
        store.replace_file(file, zebras[:15], [None] * 15, "m")
        first, _ = _pruned(store, match, list(ALL_SOURCES), 10)
        assert first == _reference(store, match, list(ALL_SOURCES), 10)
        store.replace_file(file, zebras, [None] * 20, "m")  # more zebras: idf of zebra drops
        second, plan = _pruned(store, match, list(ALL_SOURCES), 10)
        assert plan == "pruned"
        assert second == _reference(store, match, list(ALL_SOURCES), 10)
        assert second != first
    finally:
        store.close()


def test_varints_decode_like_sqlite() -> None:
    for value in [0, 1, 127, 128, 240, 2287, 67823, 2**32, 2**56 - 1, 2**63 - 1]:
        encoded = _encode_varint(value)
        assert fts5_numbers.read_varint(b"\x00" + encoded, 1) == (value, 1 + len(encoded))


def _encode_varint(value: int) -> bytes:
    """SQLite's varint: big-endian 7-bit groups, the 9th byte carrying 8 bits."""
    if value > 0x00FFFFFFFFFFFFFF:
        body = [(value >> (8 + 7 * i)) & 0x7F for i in range(8)][::-1]
        return bytes([b | 0x80 for b in body] + [value & 0xFF])
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(groups[::-1])


def test_the_cost_rule_leaves_big_candidate_sets_to_fts5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_search, "MAX_CANDIDATES", 3)
    store = SqliteIndexStore.open(tmp_path / "index.db")
    _fill(store, random.Random(6), files=40)
    try:
        got, plan = _pruned(store, '"w0" OR "w1" OR "w2"', list(ALL_SOURCES), 5)
        assert plan == "fts5: too many candidate rows for the rows it saves"
        assert got == _reference(store, '"w0" OR "w1" OR "w2"', list(ALL_SOURCES), 5)
    finally:
        store.close()
