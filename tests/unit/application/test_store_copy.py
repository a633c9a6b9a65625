"""Unit: `copy_agents` is all or nothing; what a failed run wrote leaves the target again."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memlane.application.ports.index_transfer import TransferCounts, TransferTargetNotEmpty
from memlane.application.store_copy import CopyFailed, CopyNotUndone, copy_agents
from tests.fakes.index_transfer import FakeIndexTransfer

AGENTS = ["a", "b", "c"]


class Target:
    """The target store: `fail` makes agent c's load raise it; `stubborn` refuses removal."""

    def __init__(self, fail: BaseException | None, *, stubborn: bool = False) -> None:
        self.rows: dict[str, int] = {"kept": 7}  # held before the run
        self.cached: dict[str, int] = {}  # agents with an embedding cache and no index
        self.fail = fail
        self.stubborn = stubborn

    def __call__(self, agent: str) -> FakeIndexTransfer:
        return FakeIndexTransfer(
            self.rows,
            agent,
            fail_load=self.fail if agent == "c" else None,
            fail_remove=OSError("connection lost") if self.stubborn else None,
            cached=self.cached.get(agent, 0),
        )


def source(agent: str) -> FakeIndexTransfer:
    return FakeIndexTransfer({agent: 2}, agent)


def report(seen: list[str]) -> Callable[[str, TransferCounts], None]:
    def copied(agent: str, counts: TransferCounts) -> None:
        assert counts.chunks == 2
        seen.append(agent)

    return copied


class TestCopyAgents:
    def test_every_agent_is_copied(self) -> None:
        target = Target(None)
        seen: list[str] = []

        copy_agents(AGENTS, source, target, report(seen))

        assert seen == AGENTS
        assert target.rows == {"kept": 7, "a": 2, "b": 2, "c": 2}

    @pytest.mark.parametrize("fail", [OSError("disk full"), KeyboardInterrupt()])
    def test_a_failure_removes_every_agent_the_run_wrote(self, fail: BaseException) -> None:
        target = Target(fail)

        with pytest.raises(CopyFailed, match=r"copying c (failed: disk full|was interrupted)"):
            copy_agents(AGENTS, source, target, report([]))

        assert target.rows == {"kept": 7}

    def test_a_target_written_by_another_since_the_check_is_left_alone(self) -> None:
        target = Target(TransferTargetNotEmpty("c already has an index"))
        target.rows["c"] = 5  # another writer, after the caller's check

        with pytest.raises(CopyFailed, match=r"what this run wrote \(a, b\) was removed"):
            copy_agents(AGENTS, source, target, report([]))

        assert target.rows == {"kept": 7, "c": 5}

    def test_a_removal_that_fails_names_the_agents_left_and_how(self) -> None:
        target = Target(OSError("disk full"), stubborn=True)

        with pytest.raises(CopyNotUndone) as raised:
            copy_agents(AGENTS, source, target, report([]))

        message = str(raised.value)
        assert "a, b, c are left in the target" in message
        assert "a (connection lost): forget a" in message
        assert target.rows == {"kept": 7, "a": 2, "b": 2}

    def test_an_agent_whose_cache_was_there_before_is_kept_and_named(self) -> None:
        target = Target(OSError("disk full"))
        target.cached["b"] = 40  # embeddings paid for once: removing b would lose them

        with pytest.raises(CopyNotUndone) as raised:
            copy_agents(AGENTS, source, target, report([]))

        message = str(raised.value)
        assert "b is left in the target" in message
        assert "b (it held 40 cached embedding(s) before this copy): forget b" in message
        assert target.rows == {"kept": 7, "b": 2}
