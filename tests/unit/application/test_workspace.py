"""Which workspace an index serves: the recorded one, a named one that matches, or a move."""

from __future__ import annotations

import pytest

from memlane.application.workspace import (
    WorkspaceMismatch,
    WorkspaceMissing,
    WorkspaceRequest,
    bind_workspace,
)

FOLDERS = {"/ws", "/elsewhere", "/new"}
FILES = {"/notes.md"}


def bind(
    path: str, origin: str, recorded: str | None, *, move: bool = False
) -> tuple[str, str | None]:
    binding = bind_workspace(
        WorkspaceRequest(path=path, origin=origin),  # type: ignore[arg-type]
        recorded,
        store="/state/memory.db",
        is_folder=FOLDERS.__contains__,
        exists=(FOLDERS | FILES).__contains__,
        move=move,
    )
    return binding.path, binding.notice


class TestBindWorkspace:
    def test_the_recorded_workspace_wins_over_the_current_directory(self) -> None:
        assert bind("/elsewhere", "cwd", "/ws") == ("/ws", None)

    def test_a_new_index_takes_the_current_directory_and_says_so(self) -> None:
        path, notice = bind("/ws", "cwd", None)

        assert path == "/ws"
        assert notice is not None and "current directory /ws" in notice

    def test_an_index_from_before_the_record_adopts_a_named_workspace_quietly(self) -> None:
        assert bind("/ws", "config", "") == ("/ws", None)

    @pytest.mark.parametrize("origin", ["flag", "env", "config"])
    def test_another_named_workspace_is_refused_with_the_way_to_move(self, origin: str) -> None:
        with pytest.raises(WorkspaceMismatch, match="index --move-workspace") as caught:
            bind("/new", origin, "/ws")

        assert (caught.value.recorded, caught.value.requested) == ("/ws", "/new")

    def test_the_same_named_workspace_is_fine(self) -> None:
        assert bind("/ws", "flag", "/ws") == ("/ws", None)

    def test_a_move_on_purpose_rebinds_and_says_so(self) -> None:
        path, notice = bind("/new", "flag", "/ws", move=True)

        assert path == "/new"
        assert notice is not None and "from the workspace /ws to /new" in notice

    def test_a_move_without_a_named_workspace_takes_the_current_directory(self) -> None:
        assert bind("/new", "cwd", "/ws", move=True)[0] == "/new"

    def test_a_named_missing_folder_is_refused_before_anything_else(self) -> None:
        with pytest.raises(WorkspaceMissing, match="does not exist: /gone"):
            bind("/gone", "flag", "/ws")

    def test_a_file_named_as_the_workspace_is_said_to_be_no_folder(self) -> None:
        with pytest.raises(WorkspaceMissing, match=r"is not a folder \(a file is there\): /notes"):
            bind("/notes.md", "flag", "/ws")

    def test_the_hint_names_the_python_form_too(self) -> None:
        with pytest.raises(WorkspaceMissing, match=r"memlane.open\(workspace=\.\.\.\)"):
            bind("/gone", "flag", None)

    def test_a_recorded_folder_that_vanished_says_how_to_move(self) -> None:
        with pytest.raises(WorkspaceMissing, match="--move-workspace"):
            bind("/elsewhere", "cwd", "/vanished")
