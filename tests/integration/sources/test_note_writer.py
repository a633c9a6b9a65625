"""FilesystemNoteWriter on real files: atomic replace, appends, symlink escapes, limits."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memlane.adapters.sources.note_writer import FilesystemNoteWriter
from memlane.application.ports.file_source import FileRefused, FileTooLarge
from memlane.application.ports.note_writer import NoteWriteFailed

pytestmark = pytest.mark.integration


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


class TestFilesystemNoteWriter:
    def test_append_creates_folders_and_ends_an_unterminated_last_line(
        self, workspace: Path
    ) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))
        note = workspace / "memory" / "projects" / "atlas.md"
        note.parent.mkdir()
        note.write_bytes(b"no newline")

        size = writer.write("memory/projects/atlas.md", b"second\n", append=True, max_bytes=100)

        assert note.read_bytes() == b"no newline\nsecond\n"
        assert size == len(note.read_bytes())

    def test_replace_leaves_no_temporary_file_and_keeps_the_mode(self, workspace: Path) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))
        note = workspace / "MEMORY.md"
        note.write_bytes(b"old\n")
        note.chmod(0o600)

        writer.write("MEMORY.md", b"new\n", append=False, max_bytes=100)

        assert note.read_bytes() == b"new\n"
        assert note.stat().st_mode & 0o777 == 0o600
        assert sorted(p.name for p in workspace.iterdir()) == ["MEMORY.md", "memory"]

    def test_over_the_limit_nothing_changes(self, workspace: Path) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))
        note = workspace / "memory" / "a.md"
        note.write_bytes(b"12345\n")

        with pytest.raises(FileTooLarge):
            writer.write("memory/a.md", b"67890\n", append=True, max_bytes=8)

        assert note.read_bytes() == b"12345\n"

    def test_a_symlinked_memory_folder_leading_outside_is_refused(self, tmp_path: Path) -> None:
        ws, outside = tmp_path / "ws", tmp_path / "outside"
        ws.mkdir()
        outside.mkdir()
        (ws / "memory").symlink_to(outside)
        writer = FilesystemNoteWriter(workspace=str(ws))

        with pytest.raises(FileRefused, match="symlink"):
            writer.write("memory/x.md", b"x\n", append=True, max_bytes=100)

        assert list(outside.iterdir()) == []

    def test_a_symlinked_note_leading_outside_is_refused(
        self, workspace: Path, tmp_path: Path
    ) -> None:
        target = tmp_path / "secret.md"
        target.write_bytes(b"secret\n")
        (workspace / "memory" / "link.md").symlink_to(target)
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(FileRefused):
            writer.write("memory/link.md", b"x\n", append=True, max_bytes=100)

        assert target.read_bytes() == b"secret\n"

    def test_a_symlink_inside_the_workspace_is_written_through(self, workspace: Path) -> None:
        real = workspace / "memory" / "real.md"
        real.write_bytes(b"one\n")
        (workspace / "memory" / "alias.md").symlink_to(real)
        writer = FilesystemNoteWriter(workspace=str(workspace))

        writer.write("memory/alias.md", b"two\n", append=True, max_bytes=100)

        assert real.read_bytes() == b"one\ntwo\n"
        assert (workspace / "memory" / "alias.md").is_symlink()

    def test_an_extra_path_root_is_an_allowed_symlink_target(self, tmp_path: Path) -> None:
        ws, notes = tmp_path / "ws", tmp_path / "notes"
        ws.mkdir()
        notes.mkdir()
        (ws / "memory").symlink_to(notes)
        writer = FilesystemNoteWriter(workspace=str(ws), allowed_roots=[str(notes)])

        writer.write("memory/x.md", b"x\n", append=True, max_bytes=100)

        assert (notes / "x.md").read_bytes() == b"x\n"

    @pytest.mark.parametrize(
        ("link", "target", "reason"),
        [
            ("memory/env.md", ".env", "not a .md note"),
            ("memory/app.md", "src/app.py", "not a .md note"),
            ("memory/new.md", ".bashrc", "not a .md note"),  # a dangling link: would create it
            ("memory/git.md", ".git/notes.md", "hidden or tool folder"),
        ],
    )
    def test_a_link_to_a_workspace_file_that_is_no_note_is_refused(
        self, workspace: Path, link: str, target: str, reason: str
    ) -> None:
        """Issue #32 item 4: the allow-list applies to the link's real target."""
        real = workspace / target
        real.parent.mkdir(parents=True, exist_ok=True)
        if target != ".bashrc":
            real.write_bytes(b"SECRET=1\n")
        (workspace / link).symlink_to(real)
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(FileRefused, match=reason):
            writer.write(link, b"x\n", append=True, max_bytes=100)

        assert real.read_bytes() == b"SECRET=1\n" if target != ".bashrc" else not real.exists()

    def test_a_linked_folder_into_a_tool_folder_is_refused(self, workspace: Path) -> None:
        (workspace / ".git" / "hooks").mkdir(parents=True)
        (workspace / "memory" / "hooks").symlink_to(workspace / ".git" / "hooks")
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(FileRefused, match="hidden or tool folder"):
            writer.write("memory/hooks/pre-commit.md", b"x\n", append=False, max_bytes=100)

        assert list((workspace / ".git" / "hooks").iterdir()) == []

    def test_appending_to_a_note_the_indexer_skips_as_binary_is_refused(
        self, workspace: Path
    ) -> None:
        """Issue #32 item 3: an append would land in a note no search ever finds."""
        note = workspace / "memory" / "broken.md"
        note.write_bytes(b"before\x00after\n")
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(NoteWriteFailed, match="NUL byte"):
            writer.write("memory/broken.md", b"more\n", append=True, max_bytes=100)
        writer.write("memory/broken.md", b"clean\n", append=False, max_bytes=100)

        assert note.read_bytes() == b"clean\n"

    def test_parent_segments_are_refused(self, workspace: Path) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(FileRefused):
            writer.write("../x.md", b"x\n", append=True, max_bytes=100)

    def test_a_folder_where_the_note_should_be_fails_cleanly(self, workspace: Path) -> None:
        (workspace / "memory" / "dir.md").mkdir()
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(NoteWriteFailed):
            writer.write("memory/dir.md", b"x\n", append=False, max_bytes=100)

    def test_concurrent_appends_all_land(self, workspace: Path) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))

        threads = [
            threading.Thread(
                target=writer.write,
                args=("memory/log.md", f"line {i}\n".encode()),
                kwargs={"append": True, "max_bytes": 10_000},
            )
            for i in range(16)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        lines = (workspace / "memory" / "log.md").read_text().splitlines()
        assert sorted(lines) == sorted(f"line {i}" for i in range(16))

    def test_a_name_too_long_for_the_disk_fails_cleanly(self, workspace: Path) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(NoteWriteFailed, match="too long"):
            writer.write("memory/" + "a" * 300 + ".md", b"x\n", append=True, max_bytes=100)

    def test_a_new_note_gets_the_umask_like_any_new_file(self, workspace: Path) -> None:
        writer = FilesystemNoteWriter(workspace=str(workspace))
        previous = os.umask(0o077)
        try:
            writer.write("memory/private.md", b"x\n", append=True, max_bytes=100)
        finally:
            os.umask(previous)

        assert (workspace / "memory" / "private.md").stat().st_mode & 0o777 == 0o600

    def test_appends_from_two_processes_all_land(self, workspace: Path) -> None:
        script = (
            "import sys\n"
            "from memlane.adapters.sources.note_writer import FilesystemNoteWriter\n"
            "w = FilesystemNoteWriter(workspace=sys.argv[1])\n"
            "for i in range(100):\n"
            "    w.write('memory/log.md', f'{sys.argv[2]} {i}\\n'.encode(),"
            " append=True, max_bytes=100_000)\n"
        )
        procs = [
            subprocess.Popen([sys.executable, "-c", script, str(workspace), tag])
            for tag in ("a", "b")
        ]
        assert [p.wait() for p in procs] == [0, 0]

        lines = (workspace / "memory" / "log.md").read_text().splitlines()
        assert sorted(lines) == sorted(f"{tag} {i}" for tag in ("a", "b") for i in range(100))

    def test_lines_another_program_appends_meanwhile_are_all_kept(self, workspace: Path) -> None:
        """A script appending with `>>` in a tight loop while the agent appends: every line of
        both lands. Appending by a copy renamed over the note lost the script's lines written
        between the copy and the rename, or gave up with "kept changing"."""
        note = workspace / "memory" / "log.md"
        note.write_bytes(b"")
        stop = workspace / "stop"
        script = (
            "import os, sys\n"
            "path, stop, i = sys.argv[1], sys.argv[2], 0\n"
            "while not os.path.exists(stop) or i < 200:\n"
            "    i += 1\n"
            "    with open(path, 'ab') as f:\n"
            "        f.write(f'ext {i}\\n'.encode())\n"
            "print(i)\n"
        )
        appender = subprocess.Popen(
            [sys.executable, "-c", script, str(note), str(stop)], stdout=subprocess.PIPE, text=True
        )
        writer = FilesystemNoteWriter(workspace=str(workspace))
        try:
            for i in range(200):
                writer.write("memory/log.md", f"agent {i}\n".encode(), append=True, max_bytes=10**8)
        finally:
            stop.touch()
            written = int(appender.communicate(timeout=60)[0])

        lines = note.read_text().splitlines()
        assert sorted(lines) == sorted(
            [f"ext {i}" for i in range(1, written + 1)] + [f"agent {i}" for i in range(200)]
        )

    def test_an_edit_saved_in_place_before_the_append_is_kept(self, workspace: Path) -> None:
        note = workspace / "memory" / "shared.md"
        note.write_bytes(b"first\n")
        writer = FilesystemNoteWriter(workspace=str(workspace))
        writer.write("memory/shared.md", b"agent\n", append=True, max_bytes=100)
        note.write_bytes(note.read_bytes() + b"user edit")  # no newline at its end
        writer.write("memory/shared.md", b"agent again\n", append=True, max_bytes=100)

        assert note.read_bytes() == b"first\nagent\nuser edit\nagent again\n"

    def test_a_loop_of_symlinks_fails_cleanly(self, workspace: Path) -> None:
        (workspace / "memory" / "one.md").symlink_to("two.md")
        (workspace / "memory" / "two.md").symlink_to("one.md")
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(NoteWriteFailed, match="loop"):
            writer.write("memory/one.md", b"x\n", append=True, max_bytes=100)

    def test_a_file_where_a_folder_should_be_fails_cleanly(self, workspace: Path) -> None:
        (workspace / "memory" / "a.md").write_bytes(b"note\n")
        writer = FilesystemNoteWriter(workspace=str(workspace))

        with pytest.raises(NoteWriteFailed, match="a file stands where a folder"):
            writer.write("memory/a.md/b.md", b"x\n", append=True, max_bytes=100)

        assert (workspace / "memory" / "a.md").read_bytes() == b"note\n"
