"""The inotify change journal counts a change as soon as the writer's system call returned
(no sleep between the write and `seen()`), follows new folders, and ignores what the scan
ignores: files beside a file root and ignored folders."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlane.adapters.sources.change_journal import InotifyChangeJournal


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "memory").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Notes\n")
    (tmp_path / "memory" / "a.md").write_text("a\n")
    return tmp_path


@pytest.fixture
def journals() -> Iterator[list[InotifyChangeJournal]]:
    """Every journal a test makes, closed after it (other tests count this process's watches)."""
    made: list[InotifyChangeJournal] = []
    yield made
    for journal in made:
        journal.close()


def _journal(ws: Path, journals: list[InotifyChangeJournal]) -> InotifyChangeJournal:
    journal = InotifyChangeJournal([str(ws / "MEMORY.md"), str(ws / "memory")])
    journals.append(journal)
    return journal


def test_a_write_is_counted_before_the_writer_could_do_anything_else(
    ws: Path, journals: list[InotifyChangeJournal]
) -> None:
    journal = _journal(ws, journals)
    start = journal.seen()
    assert start == 0
    for round_ in range(20):
        before = journal.seen()
        with (ws / "memory" / "a.md").open("a") as f:
            f.write(f"line {round_}\n")
        after = journal.seen()
        assert before is not None and after is not None and after > before, round_
    assert journal.seen() == journal.seen()  # nothing happened in between


def test_file_roots_count_their_own_name_only(
    ws: Path, journals: list[InotifyChangeJournal]
) -> None:
    journal = _journal(ws, journals)
    start = journal.seen()
    (ws / "README.md").write_text("not a memory file\n")  # beside the MEMORY.md root
    assert journal.seen() == start
    (ws / "MEMORY.md").write_text("# Notes\n\nchanged\n")
    after = journal.seen()
    assert start is not None and after is not None and after > start


def test_new_folders_are_followed_and_ignored_ones_are_not(
    ws: Path, journals: list[InotifyChangeJournal]
) -> None:
    journal = _journal(ws, journals)
    (ws / "memory" / "x" / "y").mkdir(parents=True)
    created = journal.seen()
    assert created is not None and created > 0
    (ws / "memory" / "x" / "y" / "n.md").write_text("new\n")  # inside the new folder
    inside = journal.seen()
    assert inside is not None and inside > created
    (ws / "memory" / ".git").mkdir()
    (ws / "memory" / ".git" / "HEAD").write_text("ref\n")
    assert journal.seen() == inside


def test_a_missing_root_is_counted_when_it_appears(
    tmp_path: Path, journals: list[InotifyChangeJournal]
) -> None:
    journal = InotifyChangeJournal([str(tmp_path / "memory")])
    journals.append(journal)
    (tmp_path / "other").mkdir()  # another name in the parent: not ours
    assert journal.seen() == 0
    (tmp_path / "memory").mkdir()
    appeared = journal.seen()
    assert appeared is not None and appeared > 0
    (tmp_path / "memory" / "n.md").write_text("new\n")
    later = journal.seen()
    assert later is not None and later > appeared


def test_deletes_and_renames_count_and_a_closed_journal_vouches_for_nothing(
    ws: Path, journals: list[InotifyChangeJournal]
) -> None:
    journal = _journal(ws, journals)
    os.replace(ws / "memory" / "a.md", ws / "memory" / "b.md")
    renamed = journal.seen()
    assert renamed is not None and renamed > 0
    (ws / "memory" / "b.md").unlink()
    deleted = journal.seen()
    assert deleted is not None and deleted > renamed
    journal.close()
    assert journal.seen() is None


def test_lost_events_count_as_a_change_and_later_folders_are_still_followed(
    ws: Path, journals: list[InotifyChangeJournal]
) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 40_000:
        pytest.skip(f"the kernel queues {limit} events: too many to overflow in a test")
    journal = _journal(ws, journals)
    start = journal.seen()
    burst = ws / "memory" / "burst"
    burst.mkdir()
    for n in range(limit // 2 + 10):  # each new file: create, modify, close: over the limit
        (burst / f"{n}.md").write_text("x")
    (ws / "memory" / "made-during").mkdir()
    overflowed = journal.seen()
    assert start is not None and overflowed is not None and overflowed > start
    (ws / "memory" / "made-during" / "n.md").write_text("new\n")
    later = journal.seen()
    assert later is not None and later > overflowed


class TestARootThatIsALink:
    """An extra path that is a symlink is given by the source as its real path and as the link;
    pointing the link elsewhere is seen (before, only the old target was watched)."""

    def _roots(self, ws: Path, link: Path) -> list[str]:
        from memlane.adapters.sources.filesystem import FilesystemMemorySource

        roots = FilesystemMemorySource(workspace=str(ws), extra_paths=[str(link)]).watch_roots()
        assert str(link) in roots  # the link itself, beside its real path
        return roots

    def test_a_folder_link_pointed_elsewhere_stops_the_journal_vouching(
        self, ws: Path, tmp_path: Path, journals: list[InotifyChangeJournal]
    ) -> None:
        for name in ("one", "two"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "n.md").write_text(f"{name}\n")
        link = tmp_path / "shared"
        link.symlink_to(tmp_path / "one")
        journal = InotifyChangeJournal(self._roots(ws, link))
        journals.append(journal)
        assert journal.seen() == 0

        (tmp_path / "tmp-link").symlink_to(tmp_path / "two")
        (tmp_path / "tmp-link").replace(link)

        assert journal.seen() is None  # its new target is not watched: the caller must scan

    def test_a_file_link_pointed_elsewhere_is_counted_and_its_new_target_watched(
        self, ws: Path, tmp_path: Path, journals: list[InotifyChangeJournal]
    ) -> None:
        (tmp_path / "t").mkdir()
        for name in ("a.md", "b.md"):
            (tmp_path / "t" / name).write_text(f"{name}\n")
        link = tmp_path / "note.md"
        link.symlink_to(tmp_path / "t" / "a.md")
        journal = InotifyChangeJournal(self._roots(ws, link))
        journals.append(journal)
        start = journal.seen()
        assert start == 0

        (tmp_path / "tmp.md").symlink_to(tmp_path / "t" / "b.md")
        (tmp_path / "tmp.md").replace(link)
        relinked = journal.seen()
        with (tmp_path / "t" / "b.md").open("a") as note:
            note.write("edited\n")
        edited = journal.seen()

        assert relinked is not None and relinked > start
        assert edited is not None and edited > relinked
