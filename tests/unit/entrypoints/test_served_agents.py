"""The daemon's register of served managers: one per agent, none added once it stops, and only
the ones it opened are its to close."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from memlane.entrypoints.daemon.served_agents import (
    ServedAgents,
    stored_agents,
    without_workspace,
)

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager


def _manager() -> MemoryManager:
    return cast("MemoryManager", object())  # the register never calls its managers


def test_the_first_claim_is_served_and_started_once() -> None:
    agents, first, started = ServedAgents(), _manager(), []
    assert agents.claim("a", first, start=lambda: started.append(1), stopping=lambda: False)
    assert agents.claim("a", first, start=lambda: started.append(2), stopping=lambda: False)
    assert started == [1]
    assert agents.get("a") is first


def test_a_second_manager_for_a_served_agent_is_refused_unstarted() -> None:
    agents, started = ServedAgents(), []
    agents.claim("a", _manager(), start=lambda: None, stopping=lambda: False)
    other = _manager()
    assert not agents.claim("a", other, start=lambda: started.append(1), stopping=lambda: False)
    assert started == []
    assert agents.get("a") is not other


def test_nothing_is_claimed_once_the_daemon_stops() -> None:
    agents, started = ServedAgents(), []
    assert not agents.claim("a", _manager(), start=lambda: started.append(1), stopping=lambda: True)
    assert started == []
    assert agents.get("a") is None


def test_release_hands_back_only_the_managers_it_opened() -> None:
    agents, own, lent = ServedAgents(), _manager(), _manager()
    agents.adopt("host", lent)
    agents.claim("b", own, start=lambda: None, stopping=lambda: False)
    assert agents.adopted == frozenset({"host"})
    assert agents.release_owned() == [own]
    assert agents.get("host") is None and agents.get("b") is None


def test_stored_agents_are_the_index_files_of_the_state_dir(tmp_path: Path) -> None:
    for agent in ("zed", "alpha"):
        (tmp_path / "agents" / agent).mkdir(parents=True)
        (tmp_path / "agents" / agent / "memory.db").write_bytes(b"")
    (tmp_path / "agents" / "empty").mkdir()
    assert stored_agents(tmp_path) == ["alpha", "zed"]


def test_the_other_agents_are_opened_without_the_first_ones_workspace() -> None:
    argv = ["--state-dir", "/s", "--workspace", "/w", "--agent", "a"]
    assert without_workspace(argv) == ["--state-dir", "/s", "--agent", "a"]
