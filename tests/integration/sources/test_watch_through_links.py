"""Symlinked notes and folders, which the scan follows, are followed by the change journal and
the watcher too: an edit behind a link is a change like any other (real files, real inotify).

The roots come from `FilesystemMemorySource.watch_roots()`, as in the running process. A folder
link made while watching, to a folder no root covers, cannot be watched from the roots: the
journal then vouches for nothing (searches scan) until that link is gone.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from memlane.adapters.sources.change_journal import InotifyChangeJournal
from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.adapters.sources.watcher import WatchdogChangeWatcher

pytestmark = [
    pytest.mark.integration,
    # watchdog's inotify thread may warn (harmlessly) when a folder races its registration.
    pytest.mark.filterwarnings("ignore:Callback with id .* already exists:RuntimeWarning"),
]

DEADLINE = 30.0  # an upper bound only: under a loaded CI run a poll took over 10 s


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """memory/link.md -> ../other/x.md and memory/linkdir -> ../notesdir, both followed by the
    scan; memory/away -> a folder outside the workspace, refused by it."""
    workspace = (tmp_path / "ws").resolve()
    for folder in ("memory", "other", "notesdir"):
        (workspace / folder).mkdir(parents=True)
    (workspace / "memory" / "n.md").write_text("# N\n")
    (workspace / "other" / "x.md").write_text("# X\n")
    (workspace / "notesdir" / "a.md").write_text("# A\n")
    (tmp_path / "outside").mkdir()
    (workspace / "memory" / "link.md").symlink_to("../other/x.md")
    (workspace / "memory" / "linkdir").symlink_to("../notesdir")
    (workspace / "memory" / "away").symlink_to(tmp_path / "outside")
    return workspace


def _roots(ws: Path) -> list[str]:
    return FilesystemMemorySource(workspace=str(ws)).watch_roots()


def _append(path: Path, text: str) -> None:
    with path.open("a") as out:
        out.write(text)


# ------------------------------------------------------------------------------------ journal


@pytest.fixture
def journal(ws: Path) -> Iterator[InotifyChangeJournal]:
    made = InotifyChangeJournal(_roots(ws))
    yield made
    made.close()


def _grew(journal: InotifyChangeJournal, before: int | None) -> int:
    after = journal.seen()
    assert before is not None and after is not None and after > before
    return after


def test_an_edit_behind_a_linked_note_counts_and_its_neighbours_do_not(
    ws: Path, journal: InotifyChangeJournal
) -> None:
    start = journal.seen()
    _append(ws / "other" / "x.md", "echidna\n")  # no sleep: counted once the write returned
    edited = _grew(journal, start)
    (ws / "other" / "y.md").write_text("not linked\n")
    assert journal.seen() == edited
    (ws / "other" / "x.tmp").write_text("# X\n\nsaved whole\n")  # an editor's atomic save
    os.replace(ws / "other" / "x.tmp", ws / "other" / "x.md")
    _grew(journal, edited)


def test_a_chain_of_links_and_a_target_not_there_yet_are_followed(
    ws: Path, journal: InotifyChangeJournal
) -> None:
    start = journal.seen()
    (ws / "hop").mkdir()
    (ws / "hop" / "mid.md").symlink_to("../other/later.md")  # missing for now
    (ws / "memory" / "chain.md").symlink_to("../hop/mid.md")
    made = _grew(journal, start)  # the new link
    (ws / "other" / "later.md").write_text("# Later\n")  # the chain's target appears
    appeared = _grew(journal, made)
    _append(ws / "other" / "later.md", "platypus\n")
    edited = _grew(journal, appeared)
    (ws / "hop" / "mid.md").unlink()  # a hop of the chain retargeted
    (ws / "hop" / "mid.md").symlink_to("../notesdir/a.md")
    retargeted = _grew(journal, edited)
    _append(ws / "notesdir" / "a.md", "wombat\n")
    _grew(journal, retargeted)


def test_a_note_link_made_while_watching_is_followed(
    ws: Path, journal: InotifyChangeJournal
) -> None:
    start = journal.seen()
    (ws / "other2").mkdir()
    (ws / "other2" / "z.md").write_text("# Z\n")
    (ws / "memory" / "late.md").symlink_to("../other2/z.md")
    made = _grew(journal, start)
    _append(ws / "other2" / "z.md", "quokka\n")
    _grew(journal, made)


def test_a_folder_link_made_while_watching_to_an_unwatched_folder_vouches_for_nothing(
    ws: Path, journal: InotifyChangeJournal
) -> None:
    start = journal.seen()  # the refused memory/away, there from the start, changes nothing
    assert start is not None
    (ws / "memory" / "sub").mkdir()
    (ws / "memory" / "alias").symlink_to("sub")  # inside memory/: watched already
    (ws / "memory" / "more").symlink_to("../notesdir")  # a root of its own already
    inside = _grew(journal, start)
    (ws / "later").mkdir()
    (ws / "later" / "b.md").write_text("# B\n")
    (ws / "memory" / "laterlink").symlink_to("../later")  # the next scan follows it
    assert journal.seen() is None  # its files are not watched: the caller must scan
    _append(ws / "later" / "b.md", "numbat\n")
    assert journal.seen() is None
    (ws / "memory" / "laterlink").unlink()
    _grew(journal, inside)


# ------------------------------------------------------------------------------------ watcher


class Batches:
    """The paths the watcher delivered, from its thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[str] = set()

    def __call__(self, paths: Sequence[str]) -> None:
        with self._lock:
            self._seen.update(paths)

    def has(self, path: Path) -> bool:
        with self._lock:
            return str(path) in self._seen

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


def _until(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


@pytest.fixture(params=["native", "polling"])
def batches(ws: Path, request: pytest.FixtureRequest) -> Iterator[Batches]:
    """A watcher on inotify, or on its fallback, polling (links listed as links, not entered)."""
    delivered = Batches()
    polling = request.param == "polling"
    watcher = WatchdogChangeWatcher(force_polling=polling, polling_interval=0.1)
    watcher.start(_roots(ws), delivered)
    assert watcher.mode == request.param
    yield delivered
    watcher.stop()


def test_an_edit_behind_a_linked_note_is_delivered(ws: Path, batches: Batches) -> None:
    _append(ws / "other" / "x.md", "echidna\n")
    assert _until(lambda: batches.has(ws / "other" / "x.md"))
    _append(ws / "notesdir" / "a.md", "dingo\n")  # a linked folder: a root of its own
    assert _until(lambda: batches.has(ws / "notesdir" / "a.md"))


def test_links_made_or_removed_while_watching_are_delivered_and_followed(
    ws: Path, batches: Batches
) -> None:
    (ws / "other2").mkdir()
    (ws / "other2" / "z.md").write_text("# Z\n")
    (ws / "memory" / "late.md").symlink_to("../other2/z.md")
    assert _until(lambda: batches.has(ws / "memory" / "late.md"))
    _append(ws / "other2" / "z.md", "quokka\n")  # behind the new link
    assert _until(lambda: batches.has(ws / "other2" / "z.md"))
    (ws / "later").mkdir()
    (ws / "memory" / "laterlink").symlink_to("../later")  # its files are new notes
    assert _until(lambda: batches.has(ws / "memory" / "laterlink"))
    batches.clear()
    (ws / "memory" / "linkdir").unlink()  # notesdir's notes leave the index
    assert _until(lambda: batches.has(ws / "memory" / "linkdir"))


def test_a_link_removed_before_a_replan_walked_the_tree_is_still_delivered(ws: Path) -> None:
    """The race CI met under load: a re-plan (started by an earlier change) walks the tree after
    a link is removed but before that removal's event arrives; the event, checked against the
    new plan, no longer names a followed link. The re-plan itself says the link changed."""
    watcher = WatchdogChangeWatcher(force_polling=True, polling_interval=3600)  # no polls here
    watcher.start(_roots(ws), lambda _paths: None)
    try:
        (ws / "memory" / "linkdir").unlink()
        (ws / "memory" / "newlink").symlink_to("../other")

        changed = watcher._replan()  # the step the race went through

        assert str(ws / "memory" / "linkdir") in changed
        assert str(ws / "memory" / "newlink") in changed
    finally:
        watcher.stop()
