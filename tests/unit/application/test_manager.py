"""MemoryManager behaviours around the use cases: first search, progress, get, status, events."""

from __future__ import annotations

from typing import ClassVar

import pytest

from memlane.application.ports.file_source import FileRefused
from memlane.application.reports import SyncProgress
from memlane.domain.config import HybridSettings, MemorySettings, QuerySettings, SyncSettings
from memlane.domain.errors import InvalidQuery
from tests.unit.application.conftest import World, message


class TestFirstSearch:
    def test_the_first_search_on_an_empty_index_waits_for_the_first_sync(
        self, world: World
    ) -> None:
        """No empty answer just because indexing has not run yet."""
        world.memory.write("MEMORY.md", "# Pets\n\nThe office cat is called Miso.\n")
        manager = world.manager()

        response = manager.search("office cat")

        assert [r.path for r in response.results] == ["MEMORY.md"]


class TestProgress:
    def test_a_sync_reports_files_and_embeddings(self, world: World) -> None:
        for i in range(3):
            world.memory.write(f"memory/n{i}.md", f"# Note {i}\n\nabout topic {i}\n")
        seen: list[SyncProgress] = []

        world.manager().sync(progress=seen.append)

        rebuild = [p for p in seen if p.phase == "rebuild"]
        assert rebuild and rebuild[-1].files_done == rebuild[-1].files_total == 3
        assert seen[-1].chunks_embedded == 3


class TestSearchValidation:
    @pytest.mark.parametrize(
        "kwargs",
        [{"max_results": 0}, {"max_results": 101}, {"min_score": 1.5}, {"min_score": float("nan")}],
    )
    def test_out_of_range_limits_are_refused(self, world: World, kwargs: dict[str, float]) -> None:
        manager = world.manager()
        manager.sync()

        with pytest.raises(InvalidQuery):
            manager.search("anything", **kwargs)  # type: ignore[arg-type]

    def test_a_blank_query_is_refused(self, world: World) -> None:
        with pytest.raises(InvalidQuery, match="query required"):
            world.manager().search("   ")

    def test_min_score_filters_but_the_top_keyword_hit_survives(self, world: World) -> None:
        """An exact keyword hit is never lost to the default min score."""
        world.embedder = None
        world.settings = MemorySettings(query=QuerySettings(min_score=0.35))
        world.memory.write("MEMORY.md", "# Codes\n\nThe door code changed to QX-4471 in May.\n")
        manager = world.manager()
        manager.sync()

        assert [r.path for r in manager.search("QX-4471").results] == ["MEMORY.md"]


class TestSpansCountBackFromTheQuestion:
    def test_since_7d_is_the_week_before_as_of_not_before_the_clock(self, world: World) -> None:
        """The clock reads 2026-11-20; asked as of 2026-10-05, `7d` used to start on 11-13,
        after the day the question is asked, and a note from 10-02 was filtered out unsaid."""
        world.embedder = None
        world.memory.write("memory/2026-10-02.md", "# Parts\n\nOrdered the xray parts.\n")
        world.memory.write("memory/2026-09-01.md", "# Parts\n\nLooked at xray parts.\n")
        manager = world.manager()

        asked = manager.search("xray parts", since="7d", as_of="2026-10-05")
        by_clock = manager.search("xray parts", since="7d")

        assert [r.path for r in asked.results] == ["memory/2026-10-02.md"]
        assert list(by_clock.results) == []

    def test_a_span_with_as_of_ends_then(self, world: World) -> None:
        """`--since 7d --as-of D` is the week up to D: a note written after D is not in it."""
        world.embedder = None
        world.memory.write("memory/2026-10-02.md", "# Parts\n\nOrdered the xray parts.\n")
        world.memory.write("memory/2026-10-20.md", "# Parts\n\nReturned the xray parts.\n")
        manager = world.manager()

        span = manager.search("xray parts", since="7d", as_of="2026-10-05")
        dated = manager.search("xray parts", since="2026-09-28", as_of="2026-10-05")
        on_the_day = manager.search("xray parts", since="7d", as_of="2026-10-02")

        assert [r.path for r in span.results] == ["memory/2026-10-02.md"]
        # A date as as_of ends the window at its last second: the day asked is in it.
        assert [r.path for r in on_the_day.results] == ["memory/2026-10-02.md"]
        # A date written out is the caller's own bound: as_of does not end it.
        assert {r.path for r in dated.results} == {"memory/2026-10-02.md", "memory/2026-10-20.md"}


class TestFusion:
    NOTES: ClassVar[dict[str, str]] = {
        "memory/deploy.md": "# Deploy\n\nRoll back the deploy with the blue switch.\n",
        "memory/garden.md": "# Garden\n\nThe tomatoes need water on Sunday.\n",
        "memory/trip.md": "# Trip\n\nThe train to Lyon leaves at nine.\n",
    }

    def search(self, world: World, hybrid: HybridSettings) -> list[tuple[str, float, float]]:
        for path, text in self.NOTES.items():
            world.memory.write(path, text)
        world.settings = MemorySettings(query=QuerySettings(min_score=0.0, hybrid=hybrid))
        manager = world.manager()
        manager.sync()
        results = manager.search("how do I roll back the deploy", explain=True).results
        out = []
        for r in results:
            assert r.explanation is not None
            v, t = r.explanation.vector_score, r.explanation.text_score
            out.append((r.path, r.score, 0.7 * (v or 0.0) + 0.3 * (t or 0.0)))
        return out

    def test_the_weighted_fusion_scores_the_reference_weighted_sum(self, world: World) -> None:
        results = self.search(
            world, HybridSettings(fusion="weighted", vector_weight=0.7, text_weight=0.3)
        )
        assert results[0][0] == "memory/deploy.md"
        assert all(score == pytest.approx(weighted, abs=1e-6) for _, score, weighted in results)

    def test_the_default_fusion_standardises_the_legs(self, world: World) -> None:
        assert HybridSettings().fusion == "zscore"
        results = self.search(world, HybridSettings())
        assert results[0][0] == "memory/deploy.md"
        # relative scores: the best hit is well above the pool's average (0.5), the worst below
        assert results[0][1] > 0.5 > results[-1][1]
        assert any(score != pytest.approx(weighted, abs=1e-3) for _, score, weighted in results)


class TestCandidatePool:
    """A hybrid search judges candidates against a pool of at least `minCandidates` per leg, so
    asking for fewer results returns the head of the same ranking, with the same scores."""

    def search(self, world: World, k: int) -> list[tuple[str, float]]:
        results = world.manager().search("deploy rollback switch", max_results=k).results
        return [(r.path, r.score) for r in results]

    def fill(self, world: World, hybrid: HybridSettings) -> None:
        """40 notes that all match, with different strengths in both legs."""
        for i in range(40):
            extra = " rollback" * (i % 3) + " switch" * (i % 5)
            world.memory.write(f"memory/n{i:02}.md", f"# Note {i}\n\ndeploy{extra} item {i}\n")
        world.settings = MemorySettings(query=QuerySettings(min_score=0.0, hybrid=hybrid))
        world.manager().sync()

    def test_fewer_results_are_the_head_of_the_same_ranking(self, world: World) -> None:
        hybrid = HybridSettings()
        self.fill(world, hybrid)

        assert self.search(world, 3) == self.search(world, 50)[:3]

    def test_without_the_floor_the_pool_follows_max_results(self, world: World) -> None:
        hybrid = HybridSettings(min_candidates=1)
        self.fill(world, hybrid)

        assert self.search(world, 3) != self.search(world, 50)[:3]


class TestGet:
    def test_get_reads_a_line_range(self, world: World) -> None:
        world.memory.write("MEMORY.md", "one\ntwo\nthree\nfour\n")

        got = world.manager().get("MEMORY.md", from_line=2, lines=2)

        assert got.text == "two\nthree"

    def test_get_opens_a_transcript_hit_by_jsonl_lines(self, world: World) -> None:
        world.sessions.write(
            "sessions/a.jsonl",
            message("user", "hello") + '{"type":"session"}\n' + message("assistant", "hi there"),
        )

        got = world.manager().get("sessions/a.jsonl", from_line=3, lines=1)

        assert got.text == "Assistant: hi there"

    def test_get_refuses_paths_outside_the_sources(self, world: World) -> None:
        with pytest.raises(FileRefused):
            world.manager().get("../../etc/passwd")


class TestStatusAndEvents:
    def test_status_counts_sources_and_events_show_what_happened(self, world: World) -> None:
        world.memory.write("MEMORY.md", "# A\n\nalpha\n")
        world.sessions.write("sessions/s.jsonl", message("user", "beta"))
        manager = world.manager()
        manager.sync()

        status = manager.status()
        names = [type(r.event).__name__ for r in manager.recent_events(10)]

        assert {(s.source, s.files) for s in status.by_source} == {("memory", 1), ("sessions", 1)}
        assert status.provider == "fake" and status.search_mode == "hybrid"
        assert status.events_pending == 0 and not status.dirty
        assert names == ["ReindexRequired", "IndexRebuilt"]

    def test_subscribers_see_new_events(self, world: World) -> None:
        manager = world.manager()
        manager.sync()
        seen: list[str] = []
        unsubscribe = manager.subscribe(lambda r: seen.append(type(r.event).__name__))

        world.memory.write("MEMORY.md", "# A\n\nalpha\n")
        manager.sync()
        unsubscribe()
        world.memory.write("MEMORY.md", "# A\n\nalpha beta\n")
        manager.sync()

        assert seen == ["FileChanged", "FileIndexed"]


class TestDeepStatus:
    def test_a_deep_status_rescans_and_reports_listing_problems(self, world: World) -> None:
        from memlane.domain.sources import SourceIssue

        world.memory.extra_issues.append(SourceIssue(path="memory/link.md", reason="escapes"))
        manager = world.manager()

        shallow = manager.status()
        deep = manager.status(deep=True)

        assert shallow.issues == []
        assert SourceIssue(path="memory/link.md", reason="escapes") in deep.issues
        assert {s.source: s.files_on_disk for s in deep.by_source} == {"memory": 0, "sessions": 0}


class TestSyncBeforeSearch:
    """`refresh` is the sync a fresh process (the CLI) runs before it searches."""

    def test_by_default_a_change_on_disk_is_indexed_before_the_search(self, world: World) -> None:
        world.memory.write("MEMORY.md", "# Keys\n\nThe staging vault key rotates monthly.\n")
        world.manager().sync()
        world.memory.write("memory/new.md", "# Pager\n\nThe pager rota changes on Fridays.\n")

        report = world.manager().refresh()

        assert report is not None and report.files_indexed == 1
        assert "memory/new.md" in {f.path for f in world.store.files("memory")}

    def test_the_sync_is_recorded_as_the_searchs_not_as_an_explicit_one(self, world: World) -> None:
        world.memory.write("MEMORY.md", "# Keys\n\nThe staging vault key rotates monthly.\n")

        report = world.manager().refresh()

        assert report is not None and report.reason == "before-search"
        assert world.application().manager().status().last_sync_reason == "before-search"

    def test_with_on_search_off_an_existing_index_is_searched_as_it_is(self, world: World) -> None:
        world.memory.write("MEMORY.md", "# Keys\n\nThe staging vault key rotates monthly.\n")
        world.manager().sync()
        world.memory.write("memory/new.md", "# Pager\n\nThe pager rota changes on Fridays.\n")
        manager = world.manager(sync=SyncSettings(on_search=False))

        assert manager.refresh() is None
        assert "memory/new.md" not in {f.path for f in world.store.files("memory")}

    def test_with_on_search_off_a_never_built_index_still_gets_its_first_sync(
        self, world: World
    ) -> None:
        world.memory.write("MEMORY.md", "# Keys\n\nThe staging vault key rotates monthly.\n")
        manager = world.manager(sync=SyncSettings(on_search=False))

        report = manager.refresh()

        assert report is not None and report.files_indexed == 1
