"""A sync while another process rebuilds the index aside is skipped, not run twice.

`index --force` in one process logs the rebuild and fills a temporary database; a search in
another process used to pick up the same pending rebuild and run it again (twice the CPU, the
search held for the whole of it). It now answers from the index as it was and says why.
"""

from __future__ import annotations

from memlane.application.sync_report import REBUILD_ELSEWHERE
from tests.unit.application.conftest import World

NOTE = "# Ops\n\nThe harbour crane is serviced on Mondays.\n"


def _indexed_paths(world: World) -> list[str]:
    return [f.path for f in world.store.files("memory")]


def test_a_sync_skips_while_another_process_rebuilds_and_the_search_says_so(
    world: World,
) -> None:
    world.memory.write("MEMORY.md", NOTE)
    world.manager().sync()
    world.memory.write("memory/new.md", "# New\n\nThe walrus tank is cleaned on Fridays.\n")
    world.store.rebuilding_elsewhere = True
    manager = world.manager()

    report = manager.sync()
    response = manager.search("harbour crane")

    assert report.warnings == (REBUILD_ELSEWHERE,) and report.events_handled == 0
    assert "memory/new.md" not in _indexed_paths(world)  # left to the rebuild under way
    assert REBUILD_ELSEWHERE in response.warnings and response.results

    world.store.rebuilding_elsewhere = False  # swapped in (its temp database gone)
    assert REBUILD_ELSEWHERE not in manager.search("harbour crane").warnings
    assert manager.sync().files_indexed == 1
    assert "memory/new.md" in _indexed_paths(world)


def test_a_forced_rebuild_is_run_whatever_another_process_does(world: World) -> None:
    world.memory.write("MEMORY.md", NOTE)
    world.manager().sync()
    world.store.rebuilding_elsewhere = True

    report = world.manager().sync(force=True)

    assert report.full_reindex and REBUILD_ELSEWHERE not in report.warnings
