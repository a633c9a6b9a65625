"""The status line of a live watcher says what searches do in each state."""

from __future__ import annotations

from dataclasses import replace

from memlane.application.ports.watch_lease import LeaseHolder
from memlane.entrypoints.cli_output import status_text
from tests.unit.application.conftest import World


def _line(fresh: bool) -> str:
    holder = LeaseHolder(pid=4242, scope="", fresh=fresh)
    status = replace(World().manager().status(), watcher=holder)
    return next(line for line in status_text(status).splitlines() if line.startswith("Watcher"))


def test_a_fresh_watcher_lets_searches_skip_their_scan() -> None:
    assert _line(fresh=True) == (
        "Watcher: pid 4242, every change indexed (searches skip their scan while so)"
    )


def test_with_changes_pending_searches_scan_first() -> None:
    # It said "(searches skip their scan while so)" here too: the opposite of what happens.
    assert _line(fresh=False) == (
        "Watcher: pid 4242, changes pending (searches scan the files first)"
    )
