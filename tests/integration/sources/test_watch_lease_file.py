"""Integration: the watch lease file between real processes: a live holder is seen with its
last word, a killed one is not (its state file left behind is ignored), and one holder only."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlane.adapters.sources.watch_lease import FileWatchLease

pytestmark = pytest.mark.integration

HOLDER = """
import sys, time
from memlane.adapters.sources.watch_lease import FileWatchLease
lease = FileWatchLease(sys.argv[1])
print("acquired" if lease.acquire("scope-a") else "refused", flush=True)
lease.set_fresh(sys.argv[2] == "fresh")
print("said", flush=True)
time.sleep(120)
"""


def _hold(path: Path, word: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), word], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "acquired"
    assert child.stdout.readline().strip() == "said"
    return child


def _end(child: subprocess.Popen[str], sig: int = signal.SIGKILL) -> None:
    child.send_signal(sig)
    child.wait()
    if child.stdout is not None:
        child.stdout.close()


def test_a_live_holder_is_seen_with_its_word(tmp_path: Path) -> None:
    path = tmp_path / "agents" / "main" / "watch.lease"
    child = _hold(path, "fresh")
    try:
        holder = FileWatchLease(str(path)).holder()
        assert holder is not None
        assert (holder.pid, holder.scope, holder.fresh) == (child.pid, "scope-a", True)
    finally:
        _end(child)


def test_a_killed_holder_holds_nothing_whatever_it_left(tmp_path: Path) -> None:
    path = tmp_path / "watch.lease"
    child = _hold(path, "fresh")
    _end(child)

    assert Path(f"{path}.state").exists()  # no chance to clean up
    assert FileWatchLease(str(path)).holder() is None


def test_one_holder_at_a_time_and_the_next_after_release(tmp_path: Path) -> None:
    path = tmp_path / "watch.lease"
    child = _hold(path, "stale")
    second = FileWatchLease(str(path))
    try:
        assert second.acquire("scope-b") is False
        holder = second.holder()
        assert holder is not None and holder.fresh is False and holder.scope == "scope-a"
    finally:
        _end(child)
    deadline = time.monotonic() + 10
    while not second.acquire("scope-b") and time.monotonic() < deadline:
        time.sleep(0.05)
    second.set_fresh(True)
    try:
        holder = FileWatchLease(str(path)).holder()
        assert holder is not None and holder.scope == "scope-b" and holder.fresh is True
    finally:
        second.release()
    assert FileWatchLease(str(path)).holder() is None
    assert not Path(f"{path}.state").exists()


def test_no_lease_file_means_no_holder(tmp_path: Path) -> None:
    assert FileWatchLease(str(tmp_path / "never" / "watch.lease")).holder() is None


def test_a_reader_checking_at_the_watchers_start_does_not_cost_it_the_lease(
    tmp_path: Path,
) -> None:
    import fcntl
    import os
    import threading

    path = tmp_path / "watch.lease"
    path.touch()
    reader = os.open(path, os.O_RDONLY)
    fcntl.flock(reader, fcntl.LOCK_SH)  # a search's holder() check, caught mid-way
    threading.Timer(0.05, lambda: os.close(reader)).start()
    watcher = FileWatchLease(str(path))
    try:
        assert watcher.acquire("scope-a") is True
        holder = FileWatchLease(str(path)).holder()
        assert holder is not None and holder.scope == "scope-a"
    finally:
        watcher.release()


ANSWERER = """
import sys, time
from pathlib import Path
from memlane.adapters.sources.watch_lease import FileWatchLease
lease = FileWatchLease(sys.argv[1])
lease.acquire("scope-a")
lease.set_fresh(True)
word = Path(sys.argv[2])
lease.answer(lambda: word.read_text() == "fresh")  # read when asked, not before
print("answering", flush=True)
time.sleep(120)
"""


def test_the_holder_answers_when_asked_and_nobody_answers_for_a_dead_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "watch.lease"
    word = tmp_path / "word"
    word.write_text("fresh")
    child = subprocess.Popen(
        [sys.executable, "-c", ANSWERER, str(path), str(word)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "answering"
    reader = FileWatchLease(str(path))
    try:
        assert Path(f"{path}.sock").stat().st_mode & 0o777 == 0o600
        assert reader.confirm() is True
        word.write_text("stale")  # the holder's journal counted a change
        assert reader.confirm() is False
        word.write_text("fresh")
        assert reader.confirm() is True
    finally:
        _end(child)
    assert reader.confirm() is False  # killed: its socket is left, nobody listens
    successor = FileWatchLease(str(path))
    assert successor.acquire("scope-b") is True
    try:
        successor.answer(lambda: True)  # replaces the dead holder's socket
        assert reader.confirm() is True
    finally:
        successor.release()
    assert reader.confirm() is False
    assert not Path(f"{path}.sock").exists()


def test_a_holder_that_does_not_answer_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "watch.lease"
    child = _hold(path, "fresh")  # says fresh, never answers (an older memlane)
    try:
        reader = FileWatchLease(str(path))
        holder = reader.holder()
        assert holder is not None and holder.fresh is True
        assert reader.confirm() is False
    finally:
        _end(child)


def test_a_lease_deeper_than_af_unix_path_limit_still_answers(tmp_path: Path) -> None:
    """The socket's path is past AF_UNIX's 107 bytes: bound and reached through its folder."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = deep / "watch.lease"
    assert len(f"{path}.sock") > 107
    holder = FileWatchLease(str(path))
    assert holder.acquire("scope-a") is True
    try:
        holder.answer(lambda: True)
        assert Path(f"{path}.sock").stat().st_mode & 0o777 == 0o600
        assert FileWatchLease(str(path)).confirm() is True
    finally:
        holder.release()
    assert not Path(f"{path}.sock").exists()
    assert FileWatchLease(str(path)).confirm() is False
