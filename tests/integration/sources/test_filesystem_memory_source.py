"""Integration: FilesystemMemorySource on real files under tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlane.adapters.sources._paths import IGNORED_DIRS
from memlane.adapters.sources.filesystem import FilesystemMemorySource
from memlane.application.ports.file_source import (
    FileMissing,
    FileRefused,
    FileSource,
    FileTooLarge,
    FileUnreadable,
)
from memlane.domain.sources import Source

pytestmark = pytest.mark.integration


def _write(path: Path, text: str = "note\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _paths(source: FilesystemMemorySource) -> list[str]:
    return [f.path for f in source.scan().files]


def _issue_paths(source: FilesystemMemorySource) -> list[str]:
    return [i.path for i in source.scan().issues]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


class TestListing:
    def test_memory_files_are_listed_sorted_and_nothing_else(self, ws: Path) -> None:
        _write(ws / "MEMORY.md")
        _write(ws / "memory.md")
        _write(ws / "memory" / "2026-01-05.md")
        _write(ws / "memory" / "deep" / "er" / "x.MD")
        _write(ws / "memory" / "notes.txt")
        _write(ws / "README.md")
        _write(ws / "Memory.md")  # top-level names are exact
        _write(ws / "src" / "doc.md")

        assert _paths(FilesystemMemorySource(workspace=str(ws))) == [
            "MEMORY.md",
            "memory.md",
            "memory/2026-01-05.md",
            "memory/deep/er/x.MD",
        ]

    @pytest.mark.parametrize("folder", [*sorted(IGNORED_DIRS), ".obsidian", "Node_Modules"])
    def test_ignored_and_hidden_folders_are_skipped(self, ws: Path, folder: str) -> None:
        _write(ws / "memory" / "kept.md")
        _write(ws / "memory" / folder / "skipped.md")
        _write(ws / "memory" / "a" / folder / "b" / "skipped.md")

        assert _paths(FilesystemMemorySource(workspace=str(ws))) == ["memory/kept.md"]

    def test_hidden_files_themselves_are_listed(self, ws: Path) -> None:
        _write(ws / "memory" / ".draft.md")

        assert _paths(FilesystemMemorySource(workspace=str(ws))) == ["memory/.draft.md"]

    def test_missing_memory_folder_is_not_an_issue_when_memory_md_exists(self, ws: Path) -> None:
        _write(ws / "MEMORY.md")

        assert FilesystemMemorySource(workspace=str(ws)).scan().issues == []

    def test_a_workspace_without_any_memory_is_reported(self, ws: Path) -> None:
        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert result.files == []
        assert [i.path for i in result.issues] == ["memory"]

    def test_odd_file_names_are_listed_and_readable(self, ws: Path) -> None:
        names = ["with space.md", "üñîçødé 日本.md", "new\nline.md", 'quote\'s "x".md', "#1.md"]
        for name in names:
            _write(ws / "memory" / name, name)
        source = FilesystemMemorySource(workspace=str(ws))

        listed = _paths(source)

        assert listed == sorted(f"memory/{n}" for n in names)
        assert [source.read_bytes(p).decode() for p in listed] == sorted(names)

    def test_a_name_that_is_not_utf8_is_reported_not_listed(self, ws: Path) -> None:
        (ws / "memory").mkdir()
        with open(os.path.join(os.fsencode(ws / "memory"), b"bad\xff.md"), "wb") as f:
            f.write(b"x")

        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert result.files == []
        assert [i.reason for i in result.issues] == ["file name is not valid UTF-8"]

    def test_a_fifo_named_like_a_note_is_reported(self, ws: Path) -> None:
        (ws / "memory").mkdir()
        os.mkfifo(ws / "memory" / "pipe.md")

        result = FilesystemMemorySource(workspace=str(ws)).scan()

        assert result.files == []
        assert [(i.path, i.reason) for i in result.issues] == [
            ("memory/pipe.md", "not a regular file")
        ]

    def test_a_folder_named_like_a_note_is_walked_not_listed(self, ws: Path) -> None:
        _write(ws / "memory" / "folder.md" / "inside.md")

        assert _paths(FilesystemMemorySource(workspace=str(ws))) == ["memory/folder.md/inside.md"]


class TestExtraPaths:
    def test_folders_are_walked_and_single_files_added(self, ws: Path, tmp_path: Path) -> None:
        _write(ws / "notes" / "a.md")
        _write(ws / "notes" / "sub" / "b.md")
        _write(ws / "notes" / "node_modules" / "c.md")
        _write(tmp_path / "outside" / "d.md")
        _write(tmp_path / "single.md")
        source = FilesystemMemorySource(
            workspace=str(ws),
            extra_paths=["notes", str(tmp_path / "outside"), "  ../single.md ", ""],
        )

        listed = _paths(source)

        assert listed == ["../outside/d.md", "../single.md", "notes/a.md", "notes/sub/b.md"]
        assert source.read_bytes("../outside/d.md") == b"note\n"
        assert source.read_bytes("../single.md") == b"note\n"

    def test_missing_and_non_markdown_extra_paths_are_reported(
        self, ws: Path, tmp_path: Path
    ) -> None:
        _write(ws / "MEMORY.md")
        _write(tmp_path / "data.txt")
        source = FilesystemMemorySource(
            workspace=str(ws), extra_paths=["gone", str(tmp_path / "data.txt")]
        )

        issues = source.scan().issues

        assert [(i.path, i.reason) for i in issues] == [
            ("gone", "extra path does not exist"),
            ("../data.txt", "extra path is not a .md file"),
        ]

    def test_an_overlapping_extra_path_lists_each_file_once(self, ws: Path) -> None:
        _write(ws / "memory" / "a.md")

        source = FilesystemMemorySource(workspace=str(ws), extra_paths=["memory", "."])

        assert _paths(source) == ["memory/a.md"]

    def test_an_outside_file_not_in_the_extra_paths_is_refused(
        self, ws: Path, tmp_path: Path
    ) -> None:
        _write(tmp_path / "notes" / "a.md")
        _write(tmp_path / "other" / "b.md")
        source = FilesystemMemorySource(workspace=str(ws), extra_paths=[str(tmp_path / "notes")])

        with pytest.raises(FileRefused):
            source.read_bytes("../other/b.md")
        with pytest.raises(FileRefused):
            source.read_bytes("../notes/node_modules/c.md")


class TestAbsolutePathsInGet:
    """`get` of an absolute path in an extra folder, which the reference read, was refused as
    absolute; outside every extra path it is still refused, by the source."""

    def test_an_extra_folders_file_reads_and_others_are_refused(
        self, ws: Path, tmp_path: Path
    ) -> None:
        from memlane.application.reading import read_lines

        _write(tmp_path / "extdir" / "e1.md", "extra note\n")
        _write(tmp_path / "private" / "secret.md", "secret\n")
        source = FilesystemMemorySource(workspace=str(ws), extra_paths=[str(tmp_path / "extdir")])
        sources: dict[Source, FileSource] = {"memory": source}

        got = read_lines(sources, str(tmp_path / "extdir" / "e1.md"), workspace=str(ws))

        assert (got.path, got.text) == ("../extdir/e1.md", "extra note\n")
        for probe in (tmp_path / "private" / "secret.md", ws / ".." / "private" / "secret.md"):
            with pytest.raises(FileRefused):
                read_lines(sources, str(probe), workspace=str(ws))


class TestSymlinks:
    def test_a_link_inside_the_workspace_is_followed(self, ws: Path) -> None:
        _write(ws / "archive" / "old.md", "old")
        (ws / "memory").mkdir()
        (ws / "memory" / "old.md").symlink_to(ws / "archive" / "old.md")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _paths(source) == ["memory/old.md"]
        assert source.read_bytes("memory/old.md") == b"old"

    def test_a_link_leaving_the_allowed_roots_is_skipped_reported_and_refused(
        self, ws: Path, tmp_path: Path
    ) -> None:
        _write(tmp_path / "secret.md", "secret")
        (ws / "memory").mkdir()
        (ws / "memory" / "leak.md").symlink_to(tmp_path / "secret.md")
        source = FilesystemMemorySource(workspace=str(ws))

        result = source.scan()

        assert result.files == []
        assert [i.path for i in result.issues] == ["memory/leak.md"]
        assert "outside" in result.issues[0].reason
        with pytest.raises(FileRefused):
            source.read_bytes("memory/leak.md")

    def test_a_link_into_an_extra_root_is_followed(self, ws: Path, tmp_path: Path) -> None:
        _write(tmp_path / "shared" / "s.md", "shared")
        (ws / "memory").mkdir()
        (ws / "memory" / "shared").symlink_to(tmp_path / "shared")
        source = FilesystemMemorySource(workspace=str(ws), extra_paths=[str(tmp_path / "shared")])

        # Deduplicated by real path: the extra root's own path is found first.
        assert _paths(source) == ["../shared/s.md"]
        assert source.read_bytes("memory/shared/s.md") == b"shared"

    def test_a_symlinked_memory_folder_inside_the_workspace_is_followed(self, ws: Path) -> None:
        _write(ws / "vault" / "daily" / "d.md")
        (ws / "memory").symlink_to(ws / "vault" / "daily")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _paths(source) == ["memory/d.md"]
        assert source.read_bytes("memory/d.md") == b"note\n"
        assert str(ws / "vault" / "daily") in source.watch_roots()

    def test_a_symlinked_memory_folder_outside_is_reported(self, ws: Path, tmp_path: Path) -> None:
        _write(tmp_path / "elsewhere" / "e.md")
        (ws / "memory").symlink_to(tmp_path / "elsewhere")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _paths(source) == []
        assert _issue_paths(source) == ["memory"]
        assert str(tmp_path / "elsewhere") not in source.watch_roots()
        with pytest.raises(FileRefused):
            source.read_bytes("memory/e.md")

    def test_real_paths_win_over_link_aliases(self, ws: Path) -> None:
        _write(ws / "memory" / "z" / "real.md")
        (ws / "memory" / "a-alias.md").symlink_to(ws / "memory" / "z" / "real.md")
        (ws / "MEMORY.md").symlink_to(ws / "memory" / "z" / "real.md")

        assert _paths(FilesystemMemorySource(workspace=str(ws))) == ["memory/z/real.md"]

    def test_symlink_loops_terminate_and_list_each_file_once(self, ws: Path) -> None:
        _write(ws / "memory" / "a" / "n.md")
        (ws / "memory" / "a" / "back").symlink_to(ws / "memory")
        (ws / "memory" / "a" / "self").symlink_to(ws / "memory" / "a")
        (ws / "memory" / "loop.md").symlink_to(ws / "memory" / "loop.md")
        source = FilesystemMemorySource(workspace=str(ws))

        result = source.scan()

        assert [f.path for f in result.files] == ["memory/a/n.md"]
        assert [(i.path, i.reason) for i in result.issues] == [
            ("memory/loop.md", "broken symlink or symlink loop")
        ]

    def test_an_escaping_link_in_the_middle_of_a_path_is_refused(
        self, ws: Path, tmp_path: Path
    ) -> None:
        """Listing never descends through an escaping link, so reading may not either."""
        _write(ws / "memory" / "inside.md")
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "back.md").symlink_to(ws / "memory" / "inside.md")
        (ws / "memory" / "out").symlink_to(tmp_path / "out")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _paths(source) == ["memory/inside.md"]
        with pytest.raises(FileRefused):
            source.read_bytes("memory/out/back.md")

    def test_a_broken_link_is_reported_and_missing(self, ws: Path) -> None:
        (ws / "memory").mkdir()
        (ws / "memory" / "gone.md").symlink_to(ws / "nowhere.md")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _issue_paths(source) == ["memory/gone.md"]
        with pytest.raises(FileMissing):
            source.read_bytes("memory/gone.md")


class TestSymlinkTargets:
    """Issue #32 item 4: the allow-list applies to where a link leads, not only to its name."""

    def test_a_note_named_link_to_a_workspace_file_that_is_no_note_is_skipped_and_refused(
        self, ws: Path
    ) -> None:
        _write(ws / ".env", "OPENAI_API_KEY=sk-live-secret\n")
        _write(ws / "src" / "app.py", "print('x')\n")
        (ws / "memory").mkdir()
        (ws / "memory" / "env.md").symlink_to(ws / ".env")
        (ws / "memory" / "app.md").symlink_to(ws / "src" / "app.py")
        source = FilesystemMemorySource(workspace=str(ws))

        result = source.scan()

        assert result.files == []
        assert {(i.path, i.reason) for i in result.issues} == {
            ("memory/app.md", "symlink target is not a .md note"),
            ("memory/env.md", "symlink target is not a .md note"),
        }
        for path in ("memory/env.md", "memory/app.md"):
            with pytest.raises(FileRefused, match=r"not a \.md note"):
                source.read_bytes(path)

    def test_a_link_into_a_hidden_or_tool_folder_is_skipped_and_refused(self, ws: Path) -> None:
        _write(ws / ".git" / "notes.md", "git internals\n")
        _write(ws / "node_modules" / "pkg" / "README.md", "vendored\n")
        (ws / "memory").mkdir()
        (ws / "memory" / "git.md").symlink_to(ws / ".git" / "notes.md")
        (ws / "memory" / "vendor").symlink_to(ws / "node_modules" / "pkg")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _paths(source) == []
        assert sorted(_issue_paths(source)) == ["memory/git.md", "memory/vendor"]
        with pytest.raises(FileRefused, match="hidden or tool folder"):
            source.read_bytes("memory/git.md")
        with pytest.raises(FileRefused, match="hidden or tool folder"):
            source.read_bytes("memory/vendor/README.md")

    def test_a_symlinked_memory_folder_into_a_hidden_folder_is_reported(self, ws: Path) -> None:
        _write(ws / ".private" / "p.md")
        (ws / "memory").symlink_to(ws / ".private")
        source = FilesystemMemorySource(workspace=str(ws))

        assert _paths(source) == []
        assert _issue_paths(source) == ["memory"]
        with pytest.raises(FileRefused):
            source.read_bytes("memory/p.md")

    def test_an_extra_path_that_is_a_hidden_folder_still_serves_its_links(
        self, ws: Path, tmp_path: Path
    ) -> None:
        """Hidden folders count below the allowed root only: a configured `.notes` is fine."""
        _write(ws / ".notes" / "real.md", "kept\n")
        (ws / ".notes" / "alias.md").symlink_to(ws / ".notes" / "real.md")
        source = FilesystemMemorySource(workspace=str(ws), extra_paths=[".notes"])

        assert source.read_bytes(".notes/alias.md") == b"kept\n"


class TestReadBytes:
    def test_a_folder_named_like_a_note_is_unreadable(self, ws: Path) -> None:
        (ws / "memory" / "x.md").mkdir(parents=True)

        with pytest.raises(FileUnreadable):
            FilesystemMemorySource(workspace=str(ws)).read_bytes("memory/x.md")

    def test_a_fifo_is_unreadable_and_does_not_block(self, ws: Path) -> None:
        (ws / "memory").mkdir()
        os.mkfifo(ws / "memory" / "pipe.md")

        with pytest.raises(FileUnreadable):
            FilesystemMemorySource(workspace=str(ws)).read_bytes("memory/pipe.md")

    def test_a_file_without_read_permission_is_unreadable(self, ws: Path) -> None:
        if os.geteuid() == 0:
            pytest.skip("root reads files whatever their mode; FIFO and folder cases cover this")
        note = _write(ws / "memory" / "locked.md")
        note.chmod(0)
        try:
            with pytest.raises(FileUnreadable):
                FilesystemMemorySource(workspace=str(ws)).read_bytes("memory/locked.md")
        finally:
            note.chmod(0o644)

    def test_a_huge_file_is_refused_without_reading_it(self, ws: Path) -> None:
        big = ws / "memory" / "big.md"
        big.parent.mkdir()
        with open(big, "wb") as f:
            f.truncate(50_000_000)  # sparse: refusing must not depend on reading it
        source = FilesystemMemorySource(workspace=str(ws))

        assert [f.size for f in source.scan().files] == [50_000_000]
        with pytest.raises(FileTooLarge):
            source.read_bytes("memory/big.md")

    def test_a_file_in_an_ignored_folder_is_refused(self, ws: Path) -> None:
        _write(ws / "memory" / ".git" / "x.md")

        with pytest.raises(FileRefused):
            FilesystemMemorySource(workspace=str(ws)).read_bytes("memory/.git/x.md")

    @pytest.mark.parametrize("path", ["README.md", "../ws/MEMORY.md", "memory", "src/a.md"])
    def test_workspace_files_outside_the_memory_areas_are_refused(
        self, ws: Path, path: str
    ) -> None:
        _write(ws / "README.md")
        _write(ws / "MEMORY.md")
        _write(ws / "src" / "a.md")
        (ws / "memory").mkdir()

        with pytest.raises(FileRefused):
            FilesystemMemorySource(workspace=str(ws)).read_bytes(path)


class TestWatchRoots:
    def test_roots_are_the_top_files_memory_folder_and_extra_paths(
        self, ws: Path, tmp_path: Path
    ) -> None:
        _write(tmp_path / "notes" / "a.md")
        _write(tmp_path / "one.md")
        source = FilesystemMemorySource(
            workspace=str(ws),
            extra_paths=[str(tmp_path / "notes"), str(tmp_path / "one.md"), "memory/sub"],
        )

        assert source.watch_roots() == sorted(
            [
                str(ws / "MEMORY.md"),
                str(ws / "memory.md"),
                str(ws / "memory"),
                str(tmp_path / "notes"),
                str(tmp_path / "one.md"),
            ]
        )
