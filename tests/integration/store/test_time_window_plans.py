"""The `since` / `until` filter's fast plans give the pre-filter's rows (issue #26).

Keyword leg: a window wider than `keyword_window.NARROW_ROWS` is ranked as if unfiltered, with
an over-fetch, and the ranked rows inside it kept; a second, larger round or the pre-filter
answers when too few fall inside. Vector leg: the code file masks the window with its time
arrays, and the rows written since the file was built are filtered by a rid-range read.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from memlane.adapters.store import code_file_place, keyword_window, vector_code_index
from memlane.adapters.store.code_file_place import code_path
from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
from memlane.adapters.store.vector_codes import MAGIC
from memlane.domain.chunks import Chunk
from memlane.domain.search import TimeWindow
from memlane.domain.sources import ALL_SOURCES
from tests.integration.store.helpers import DIMS, make_chunks, make_file

pytestmark = pytest.mark.integration

DAY = 86_400.0
WORDS = ["apples", "pears", "plums", "figs", "kiwis", "limes", "dates", "grapes"]


def _dated(chunks: list[Chunk], days: list[float | None]) -> list[Chunk]:
    return [
        replace(
            c,
            time_start=None if d is None else d * DAY,
            time_end=None if d is None else d * DAY + 3_600,
        )
        for c, d in zip(chunks, days, strict=True)
    ]


def _corpus(store: SqliteIndexStore, files: int, seed: int, undated_every: int = 0) -> None:
    """`files` files of 10 chunks, random words and vectors, each chunk dated a random day in
    0..99 (every `undated_every`-th undated)."""
    rng = random.Random(seed)
    for f in range(files):
        name = f"memory/s{seed}-f{f}.md"
        chunks = [
            replace(c, text=" ".join(rng.choices(WORDS, k=rng.randrange(3, 12))))
            for c in make_chunks(name, 10)
        ]
        days: list[float | None] = [
            None
            if undated_every and (f * 10 + i) % undated_every == 0
            else float(rng.randrange(100))
            for i in range(10)
        ]
        vectors = [[rng.uniform(-1, 1) for _ in range(DIMS)] for _ in chunks]
        store.replace_file(make_file(name), _dated(chunks, days), vectors, "m")


def _keyword(
    store: SqliteIndexStore, match: str, window: TimeWindow, limit: int
) -> list[tuple[str, float]]:
    hits = store.search_keyword(match, sources=ALL_SOURCES, limit=limit, window=window)
    return [(h.chunk_id, h.score) for h in hits]


def _plan(store: SqliteIndexStore) -> str:
    return store._keywords.last_plan  # which plan answered is what is tested


class TestKeywordLegByWindowWidth:
    def test_a_wide_window_is_ranked_first_and_gives_the_pre_filters_rows(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        store = SqliteIndexStore.open(tmp_path / "index.db")
        _corpus(store, files=40, seed=3, undated_every=7)
        cases = [
            ('"apples" OR "figs"', TimeWindow(since=10 * DAY, until=99 * DAY), 10),
            ('"pears"', TimeWindow(since=30 * DAY), 25),
            ('"kiwis" OR "dates" OR "limes"', TimeWindow(until=80 * DAY), 5),
        ]
        monkeypatch.setattr(keyword_window, "NARROW_ROWS", 10**9)  # every window: pre-filter
        expected = [_keyword(store, m, w, k) for m, w, k in cases]
        assert all(_plan(store) == "fts5: time window (narrow)" for _ in cases)
        monkeypatch.setattr(keyword_window, "NARROW_ROWS", 1)  # every window: ranked first

        for (match, window, limit), want in zip(cases, expected, strict=True):
            assert _keyword(store, match, window, limit) == want
            assert "kept those within the time window" in _plan(store)
            assert len(want) == limit
        store.close()

    def test_a_second_larger_round_when_the_first_keeps_too_few(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # 100 equal matches, ranked by rid; one in five is inside the window: 20 ranked rows
        # keep 4, so the second round asks for 20 * 5 / 4 * 1.25 = 32 and keeps 7.
        store = SqliteIndexStore.open(tmp_path / "index.db")
        chunks = [replace(c, text="apples apples apples") for c in make_chunks("memory/a.md", 100)]
        days: list[float | None] = [50.0 if i % 5 == 0 else 5.0 for i in range(100)]
        store.replace_file(make_file("memory/a.md"), _dated(chunks, days), [None] * 100, "m")
        window = TimeWindow(since=40 * DAY, until=60 * DAY)
        monkeypatch.setattr(keyword_window, "NARROW_ROWS", 1)

        hits = _keyword(store, '"apples"', window, 5)

        assert _plan(store).endswith("ranked 32, kept those within the time window")
        assert [h for h, _ in hits] == [chunks[i].id for i in (0, 5, 10, 15, 20)]
        store.close()

    def test_the_pre_filter_answers_when_the_ranked_rows_fall_outside(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The 60 best matches are outside the window, its 4 weaker ones inside.
        store = SqliteIndexStore.open(tmp_path / "index.db")
        chunks = [
            replace(c, text="apples apples apples" if i < 60 else f"apples pears plums figs {i}")
            for i, c in enumerate(make_chunks("memory/a.md", 64))
        ]
        days: list[float | None] = [5.0 if i < 60 else 50.0 for i in range(64)]
        store.replace_file(make_file("memory/a.md"), _dated(chunks, days), [None] * 64, "m")
        monkeypatch.setattr(keyword_window, "NARROW_ROWS", 1)

        hits = _keyword(store, '"apples"', TimeWindow(since=40 * DAY), 3)

        assert _plan(store) == "fts5: time window (ranked rows fell outside)"
        assert [h for h, _ in hits] == [c.id for c in chunks[60:63]]
        store.close()


class TestVectorLegMasksTheCodeFile:
    @pytest.fixture(autouse=True)
    def _small_pools(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A code file at any size, and pools small enough that a window of a few hundred
        rows takes the masked scan rather than the exact scoring of its every row."""
        monkeypatch.setattr(code_file_place, "MIN_ROWS", 0)
        monkeypatch.setattr(vector_code_index, "BITS_FLOOR", 1)
        monkeypatch.setattr(vector_code_index, "POOL_FLOOR", 1)

    def _both(
        self, path: Path, window: TimeWindow, limit: int, seed: int
    ) -> tuple[list[str], list[str]]:
        query = [random.Random(seed).uniform(-1, 1) for _ in range(DIMS)]
        results: list[list[str]] = []
        for engine in ("codes", "numpy"):  # numpy: the window's rids from the time index
            store = SqliteIndexStore.open(path, vector_search=engine)
            hits = store.search_vector(
                query, model="m", sources=ALL_SOURCES, limit=limit, window=window
            )
            results.append([str(h.chunk_id) for h in hits])
            store.close()
        return results[0], results[1]

    def test_the_file_rows_the_newer_rows_and_the_undated_ones(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _corpus(store, files=150, seed=5, undated_every=5)
        # ~240 dated rows of the file, a fifth: most of an unmasked scan's pool would be outside.
        window = TimeWindow(since=20 * DAY, until=39 * DAY)
        codes, exact = self._both(path, window, 5, seed=1)  # builds the file
        assert codes == exact and len(codes) == 5
        _corpus(store, files=8, seed=6, undated_every=3)  # newer rows, beyond the file
        store.delete_file("memory", "memory/s5-f0.md")  # rows the file holds, now dead

        for seed in range(2, 8):
            codes, exact = self._both(path, window, 5, seed=seed)
            assert codes == exact and len(codes) == 5
        store.close()

    def test_a_code_file_of_the_previous_layout_is_rebuilt_with_times(self, tmp_path: Path) -> None:
        path = tmp_path / "index.db"
        store = SqliteIndexStore.open(path)
        _corpus(store, files=60, seed=7)
        window = TimeWindow(since=50 * DAY)
        self._both(path, window, 5, seed=1)
        with code_path(path).open("r+b") as f:
            f.write(b"MLVCODE1")  # what version 1 wrote: no time arrays
        assert MAGIC != b"MLVCODE1"

        reader = SqliteIndexStore.open(path)
        reader.search_vector([1.0] * DIMS, model="m", sources=ALL_SOURCES, limit=5, window=window)
        rebuilt = reader.vector_index_state().state
        reader.close()
        codes, exact = self._both(path, window, 5, seed=2)

        assert rebuilt == "rebuilt: an unreadable or older-layout code file"
        assert codes == exact and len(codes) == 5
        with code_path(path).open("rb") as f:
            assert f.read(len(MAGIC)) == MAGIC
        store.close()
