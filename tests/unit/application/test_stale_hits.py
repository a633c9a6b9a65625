"""A search that did not sync first names the hits' files changed since they were indexed."""

from __future__ import annotations

from memlane.application.memory import MemoryManager
from memlane.domain.config import SyncSettings
from memlane.domain.sources import FileStat
from tests.fakes.file_source import FakeFileSource
from tests.unit.application.conftest import World

NOTE = "# Keys\n\nThe staging vault key rotates monthly.\n"
OTHER = "# Vault\n\nThe vault key lives in the staging safe.\n"


class _CountingSource(FakeFileSource):
    """The fake source, counting `stat` calls per path."""

    def __init__(self) -> None:
        super().__init__(source_name="memory")
        self.stats: list[str] = []

    def stat(self, path: str) -> FileStat:
        self.stats.append(path)
        return super().stat(path)


def _indexed(world: World, *, on_search: bool) -> MemoryManager:
    world.memory.write("MEMORY.md", NOTE)
    world.memory.write("memory/vault.md", OTHER)
    world.manager().sync()
    return world.manager(sync=SyncSettings(on_search=on_search))


def _stale(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if "changed since" in w]


class TestStaleHits:
    def test_an_edited_note_is_named_when_the_search_did_not_sync(self, world: World) -> None:
        manager = _indexed(world, on_search=False)
        world.memory.write("MEMORY.md", "\n\n\n" + NOTE)  # its lines moved

        response = manager.search("vault key")

        (warning,) = _stale(response.warnings)
        assert warning.startswith("MEMORY.md changed since it was indexed")
        assert "memory/vault.md" not in warning  # unchanged: not named
        assert {r.path for r in response.results} == {"MEMORY.md", "memory/vault.md"}

    def test_a_deleted_note_is_named_too(self, world: World) -> None:
        manager = _indexed(world, on_search=False)
        world.memory.delete("memory/vault.md")

        response = manager.search("vault key")

        (warning,) = _stale(response.warnings)
        assert warning.startswith("memory/vault.md changed since it was indexed")

    def test_several_changed_notes_are_named_in_one_warning(self, world: World) -> None:
        manager = _indexed(world, on_search=False)
        world.memory.append("MEMORY.md", "More.\n")
        world.memory.set_mtime("memory/vault.md", 1.0)  # same size, new mtime

        (warning,) = _stale(manager.search("vault key").warnings)

        named, _ = warning.split(" changed since they were indexed")
        assert sorted(named.split(", ")) == ["MEMORY.md", "memory/vault.md"]  # in hit order

    def test_unchanged_notes_give_no_warning(self, world: World) -> None:
        manager = _indexed(world, on_search=False)

        assert _stale(manager.search("vault key").warnings) == []

    def test_each_file_is_stated_once_whatever_its_hits(self, world: World) -> None:
        world.memory = _CountingSource()
        filler = "Unrelated words about the office plants and the coffee machine. " * 40
        long_note = "".join(f"# Part {i}\n\nThe vault key part {i}. {filler}\n\n" for i in range(6))
        world.memory.write("MEMORY.md", long_note)
        world.manager().sync()
        manager = world.manager(sync=SyncSettings(on_search=False))
        world.memory.stats.clear()

        response = manager.search("vault key", max_results=5)

        assert len(response.results) > 1  # several hits of one file
        assert world.memory.stats == ["MEMORY.md"]

    def test_a_search_of_an_index_known_fresh_checks_nothing(self, world: World) -> None:
        """The CLI syncs before it searches: the index is then known fresh, and no file is
        stated per search."""
        world.memory = _CountingSource()
        manager = _indexed(world, on_search=True)
        manager.sync()  # as the CLI's refresh does
        world.memory.stats.clear()

        response = manager.search("vault key")

        assert _stale(response.warnings) == []
        assert world.memory.stats == []

    def test_changes_waiting_to_be_indexed_are_said_even_when_searches_sync(
        self, world: World
    ) -> None:
        """A long-running page or server searches while its watcher waits out the debounce:
        the index is read as it was, and its hits' edited files are named."""
        manager = _indexed(world, on_search=True)
        world.memory.write("MEMORY.md", "\n\n\n" + NOTE)
        manager.mark_dirty()  # what the watcher does when it sees the edit

        response = manager.search("vault key")

        (warning,) = _stale(response.warnings)
        assert warning.startswith("MEMORY.md changed since it was indexed")
        assert "the change is being indexed" in warning and "onSearch is off" not in warning


class TestVersionsTheSyncCouldNotIndex:
    """A note that turned binary keeps its indexed rows (nothing is lost), so its hits showed
    the old text with no word about it, and `get` of the hit then failed."""

    def _unindexed(self, warnings: tuple[str, ...]) -> list[str]:
        return [w for w in warnings if w.startswith("not indexed again")]

    def test_a_note_that_turned_binary_is_named_with_its_problem(self, world: World) -> None:
        manager = _indexed(world, on_search=True)
        world.memory.write("memory/vault.md", b"vault\x00key")

        manager.sync()
        response = manager.search("vault key")

        (warning,) = self._unindexed(response.warnings)
        assert "memory/vault.md (binary content (NUL byte))" in warning
        assert "MEMORY.md" not in warning
        assert "memory/vault.md" in {r.path for r in response.results}  # still answered

    def test_it_is_said_by_another_process_from_the_recorded_problem(self, world: World) -> None:
        manager = _indexed(world, on_search=True)
        world.memory.write("memory/vault.md", b"vault\x00key")
        manager.sync()

        response = world.manager().search("vault key")  # a new process, from the index alone

        assert len(self._unindexed(response.warnings)) == 1

    def test_once_the_note_is_text_again_nothing_is_said(self, world: World) -> None:
        manager = _indexed(world, on_search=True)
        world.memory.write("memory/vault.md", b"vault\x00key")
        manager.sync()
        world.memory.write("memory/vault.md", OTHER + "\nMore about the vault key.\n")
        manager.sync()

        assert self._unindexed(manager.search("vault key").warnings) == []
