"""Application: which workspace an index serves (issue #14: bound to it, never to the cwd).

An index records the workspace it was built from, per host (`IndexMeta.workspace`: in the
SQLite file; in a shared PostgreSQL store, one record per host beside the agent's meta, issue
#30). Opening it, on either store:

* a workspace named by the caller (`--workspace`, `$MEMLANE_WORKSPACE`, the config's
  `agents.list[].workspace` / `agents.defaults.workspace`, or the reference system's default
  workspace when its config is read) must be the recorded one; another is refused
  (`WorkspaceMismatch`) unless the caller moves the index on purpose (`move`), and even then
  the sync stops before removing a large share of the index (application/mass_delete.py);
* with none named, the recorded workspace is used, wherever the process runs; only an index
  that records none (a new one) takes the current directory, and says so (`notice`);
* the workspace must be an existing folder (`WorkspaceMissing`): a missing one would index
  nothing and, worse, remove every note from the index.

The decision is pure; the caller passes in how it reads the recorded workspace and how it
checks for a folder, so it needs no file system port.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from memlane.domain.errors import DomainError

Origin: TypeAlias = Literal["flag", "env", "config", "default", "cwd"]

_NAMED_BY: dict[Origin, str] = {
    "flag": "--workspace",
    "env": "$MEMLANE_WORKSPACE",
    "config": "the config file (agents.*.workspace)",
    "default": "the reference system's default workspace (its config names none)",
    "cwd": "the current directory",
}
MOVE_HINT = "memlane --workspace NEW index --move-workspace"


class WorkspaceError(DomainError):
    """The workspace cannot be used with this index (the caller's choice); the message says
    what to do."""


class WorkspaceMismatch(WorkspaceError):
    """Another workspace than the one the index was built from was asked for."""

    def __init__(self, *, recorded: str, requested: str, origin: Origin, store: str) -> None:
        self.recorded = recorded
        self.requested = requested
        super().__init__(
            f"the index {store} belongs to the workspace {recorded}, but {_NAMED_BY[origin]} "
            f"names {requested}. Nothing was changed. To move the index to the new workspace "
            f"on purpose, run `memlane --workspace {requested} index --move-workspace` "
            f"(Python: memlane.open(..., move_workspace=True)); to use the recorded one, "
            f"leave the workspace out or pass --workspace {recorded}."
        )


class WorkspaceMissing(WorkspaceError):
    """The workspace folder does not exist (or is not a folder)."""

    def __init__(self, path: str, *, recorded: bool, not_a_folder: bool = False) -> None:
        self.path = path
        hint = (
            f"it is the one the index recorded: if it moved, run `{MOVE_HINT}`"
            if recorded
            else "create it or name another one: --workspace, or memlane.open(workspace=...)"
        )
        what = "is not a folder (a file is there)" if not_a_folder else "folder does not exist"
        super().__init__(f"workspace {what}: {path} ({hint})")


@dataclass(frozen=True, slots=True)
class WorkspaceRequest:
    """The workspace the configuration resolved and where it came from."""

    path: str
    origin: Origin


@dataclass(frozen=True, slots=True)
class WorkspaceBinding:
    """The workspace to serve, and a line to tell the user when it was chosen implicitly.

    The notice is for commands that sync (the sync records the workspace); one that only reads
    (`status`) records nothing and has nothing to say."""

    path: str
    notice: str | None = None
    moved_from: str | None = None


def bind_workspace(
    request: WorkspaceRequest,
    recorded: str | None,
    *,
    store: str,
    is_folder: Callable[[str], bool],
    exists: Callable[[str], bool] = lambda _path: False,
    move: bool = False,
) -> WorkspaceBinding:
    """Decide which workspace the index at `store` serves (see the module docstring).

    `recorded` is the workspace the index recorded (None or "" when none); `exists` tells a
    path that is something other than a folder (a file) from a missing one. With `move`, the
    requested workspace (the current directory when none is named) replaces the recorded one.

    Raises:
        WorkspaceMismatch: a named workspace differs from the recorded one and `move` is off.
        WorkspaceMissing: the workspace to serve is not an existing folder.
    """
    recorded = recorded or None
    if request.origin != "cwd" and not is_folder(request.path):
        # A named folder that is missing is the first thing to fix, whatever the index holds.
        raise WorkspaceMissing(request.path, recorded=False, not_a_folder=exists(request.path))
    notice: str | None = None
    moved_from: str | None = None
    if recorded is None:
        path = request.path
        if request.origin == "cwd":
            notice = (
                f"no workspace configured: this index is now bound to the current directory "
                f"{path} (pass --workspace or set agents.defaults.workspace to choose)"
            )
    elif request.path == recorded:
        path = recorded
    elif move:
        path, moved_from = request.path, recorded
        notice = f"moving the index from the workspace {recorded} to {path}"
    elif request.origin == "cwd":
        path = recorded  # the recorded workspace wins over wherever the process runs
    else:
        raise WorkspaceMismatch(
            recorded=recorded, requested=request.path, origin=request.origin, store=store
        )
    if not is_folder(path):
        raise WorkspaceMissing(path, recorded=path == recorded, not_a_folder=exists(path))
    return WorkspaceBinding(path=path, notice=notice, moved_from=moved_from)
