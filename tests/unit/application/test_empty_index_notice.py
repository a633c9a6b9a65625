"""A search of an index holding no file says so: "no matches" alone reads as "the memory has
nothing on this", when it has nothing at all (a wrong or empty workspace)."""

from __future__ import annotations

from memlane.application.ports.file_source import ScanResult
from tests.fakes.file_source import FakeFileSource
from tests.unit.application.conftest import World


def _empty(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if w.startswith("the index holds no files")]


class TestEmptyIndexNotice:
    def test_a_search_of_an_empty_workspace_says_the_index_holds_nothing(
        self, world: World
    ) -> None:
        response = world.manager().search("deploy rollback")

        assert response.results == []
        (notice,) = _empty(response.warnings)
        assert "no notes (MEMORY.md, memory.md, memory/**/*.md" in notice

    def test_no_notice_when_the_index_holds_files(self, world: World) -> None:
        world.embedder = None  # keyword-only: a query sharing no word finds nothing
        world.memory.write("MEMORY.md", "# Pets\n\nThe office cat is Miso.\n")

        response = world.manager().search("zebra crossing")

        assert response.results == [] and _empty(response.warnings) == []

    def test_no_notice_when_a_time_window_explains_the_empty_answer(self, world: World) -> None:
        response = world.manager().search("deploy", since="2026-01-01", until="2026-01-02")

        assert _empty(response.warnings) == []

    def test_no_notice_when_the_first_sync_failed(self, world: World) -> None:
        """The first sync's own notice says why nothing is found; "the index holds no files"
        would blame the workspace for it."""
        world.memory = _UnreadableScan(source_name="memory")

        response = world.manager().search("deploy rollback")

        assert response.results == []
        assert any("first sync" in w for w in response.warnings), response.warnings
        assert _empty(response.warnings) == []


class _UnreadableScan(FakeFileSource):
    """A notes folder whose listing fails: the first sync cannot run."""

    def scan(self) -> ScanResult:
        raise OSError("the disk went away")
