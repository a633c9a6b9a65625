"""Adapter: NoteWriter on the local disk: temp file + fsync + rename, symlinks checked."""

from __future__ import annotations

import os
import stat as stat_mod
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from memlane.adapters.sources._paths import (
    is_within_any,
    note_target_problem,
    split_indexed_path,
)
from memlane.application.ports.file_source import FileRefused, FileTooLarge
from memlane.application.ports.note_writer import NoteWriteFailed

_NEW_FILE_MODE: Final = 0o644


class FilesystemNoteWriter:
    """Writes notes under one workspace; a reader never sees a half-written file.

    Each write lands in a hidden `.memlane-*.tmp` file next to the note (not a `.md`, so never
    indexed), is fsynced, then renamed over the note. A symlinked note or folder is followed
    only when its real target stays inside the workspace or an extra path root and is itself a
    note (a `.md` file outside hidden and tool folders), as the memory source checks reads.
    Appends are serialised within the process by one lock; two processes appending to the same
    note at the same instant can still lose one append (the last rename wins), which the
    single-server deployment of `memlane mcp` never does.
    """

    def __init__(self, *, workspace: str, allowed_roots: Sequence[str] = ()) -> None:
        self._workspace = Path(workspace).absolute()
        self._roots = [self._workspace, *(Path(r).absolute() for r in allowed_roots)]
        self._lock = threading.Lock()

    def write(self, path: str, data: bytes, *, append: bool, max_bytes: int) -> int:
        with self._lock:
            real = self._resolve(path)
            old = self._read_existing(path, real) if append else b""
            if b"\x00" in old:  # appending would leave a note the indexer skips as binary
                raise NoteWriteFailed(
                    path,
                    "the note holds a NUL byte, so it is never indexed: appending to it would "
                    "be lost; rewrite it with mode 'replace'",
                )
            if old and not old.endswith(b"\n"):
                old += b"\n"
            content = old + data
            if len(content) > max_bytes:
                raise FileTooLarge(
                    path, f"the note would be {len(content)} bytes; the limit is {max_bytes}"
                )
            self._replace(path, real, content)
            return len(content)

    def _resolve(self, path: str) -> Path:
        """The real file to write, after refusing any component that leads outside the roots."""
        segments = split_indexed_path(path)
        if segments[0] == "..":
            raise FileRefused(path, "only notes inside the workspace can be written")
        allowed = [str(r.resolve()) for r in self._roots]
        current = self._workspace
        for segment in segments:
            current = current / segment
            if current.is_symlink():
                if not is_within_any(str(current.resolve()), allowed):
                    raise FileRefused(path, "symlink target outside the allowed roots")
            elif not current.exists():
                break  # nothing below a missing component can be a link
        lexical = self._workspace.joinpath(*segments)
        real = lexical.resolve()
        if real != lexical.absolute():
            # A link on the way: where it leads must itself be a note (not `.env`, not `.git/`).
            problem = note_target_problem(str(real), allowed, ".md")
            if problem is not None:
                raise FileRefused(path, problem)
        return real

    @staticmethod
    def _read_existing(path: str, real: Path) -> bytes:
        try:
            st = real.stat()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
        if not stat_mod.S_ISREG(st.st_mode):
            raise NoteWriteFailed(path, "not a regular file")
        try:
            return real.read_bytes()
        except OSError as exc:
            raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc

    @staticmethod
    def _replace(path: str, real: Path, content: bytes) -> None:
        folder = real.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            mode = real.stat().st_mode & 0o7777 if real.exists() else _NEW_FILE_MODE
            if real.is_dir():
                raise NoteWriteFailed(path, "a folder has this name")
            fd, name = tempfile.mkstemp(prefix=".memlane-", suffix=".tmp", dir=folder)
        except NoteWriteFailed:
            raise
        except OSError as exc:
            raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
        temp = Path(name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            temp.chmod(mode)
            temp.replace(real)  # atomic on POSIX: readers see old or new, never a mix
        except OSError as exc:
            _discard(temp)
            raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
        _sync_folder(folder)


def _discard(temp: Path) -> None:
    temp.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """Persist the rename itself (the folder entry); best effort where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        return
    finally:
        os.close(fd)
