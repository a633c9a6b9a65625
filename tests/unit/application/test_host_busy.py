"""A search on a shared store does not wait for another host's sync of the same agent.

On PostgreSQL one agent's syncs are serialised across hosts by a database lock. A search's sync
used to wait for it, so a search beside another host's long first index or rebuild hung for the
whole of it. It now answers from the index as it is and says why; `index` still waits its turn.
"""

from __future__ import annotations

from memlane.application.sync_report import HOST_BUSY
from tests.fakes.sync_lock import FakeSyncLock
from tests.unit.application.conftest import World

NOTE = "# Ops\n\nThe harbour crane is serviced on Mondays.\n"
NEW = "# New\n\nThe walrus tank is cleaned on Fridays.\n"


def _indexed_paths(world: World) -> list[str]:
    return [f.path for f in world.store.files("memory")]


def test_a_search_answers_at_once_while_another_host_syncs_and_says_so(world: World) -> None:
    world.host_lock = FakeSyncLock()
    world.memory.write("MEMORY.md", NOTE)
    world.manager().sync()
    world.memory.write("memory/new.md", NEW)
    world.host_lock.held_elsewhere = True
    manager = world.manager()

    report = manager.refresh()
    response = manager.search("harbour crane")

    assert report is not None and report.warnings == (HOST_BUSY,)
    assert report.events_handled == 0
    assert "memory/new.md" not in _indexed_paths(world)  # the other host's sync brings it
    assert HOST_BUSY in response.warnings and response.results
    assert HOST_BUSY not in manager.search("harbour crane").warnings  # said once

    world.host_lock.held_elsewhere = False  # that sync ended
    after = manager.refresh()
    assert after is not None and after.files_indexed == 1
    assert "memory/new.md" in _indexed_paths(world)
    assert HOST_BUSY not in manager.search("walrus tank").warnings


def test_an_explicit_sync_waits_for_its_turn(world: World) -> None:
    world.host_lock = FakeSyncLock()
    world.memory.write("MEMORY.md", NOTE)

    world.manager().sync()

    assert world.host_lock.waits == 1 and not world.host_lock.held
