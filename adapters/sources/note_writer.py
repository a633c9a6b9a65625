"""Adapter: NoteWriter on the local disk: temp file + fsync + rename, symlinks checked."""

from __future__ import annotations

import fcntl
import os
import secrets
import stat as stat_mod
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from memlane.adapters.sources._paths import (
    is_within_any,
    note_target_problem,
    split_indexed_path,
)
from memlane.application.ports.file_source import FileRefused, FileTooLarge
from memlane.application.ports.note_writer import NoteWriteFailed

# A new note gets the mode a plain `open(..., "w")` would give it: 0o666 less the umask.
_NEW_FILE_MODE: Final = 0o666
# Appending reads the note, then renames the new content over it: when someone else (an editor,
# a script) changed the note in between, the append starts again from what is there now.
_APPEND_ATTEMPTS: Final = 5

# What identifies one state of a note on disk (None: no note); a change to it moves one of these.
_Signature = tuple[int, int, int, int] | None


class FilesystemNoteWriter:
    """Writes notes under one workspace; a reader never sees a half-written file.

    Each write lands in a hidden `.memlane-*.tmp` file next to the note (not a `.md`, so never
    indexed), is fsynced, then renamed over the note. A symlinked note or folder is followed
    only when its real target stays inside the workspace or an extra path root and is itself a
    note (a `.md` file outside hidden and tool folders), as the memory source checks reads.
    Writes are serialised by an exclusive `flock` on the note's folder, so two processes (two
    `memlane mcp` servers of one workspace) never lose each other's appends; an append that
    finds the note changed by anyone else between its read and its rename starts again.
    """

    def __init__(self, *, workspace: str, allowed_roots: Sequence[str] = ()) -> None:
        self._workspace = Path(workspace).absolute()
        self._roots = [self._workspace, *(Path(r).absolute() for r in allowed_roots)]
        self._lock = threading.Lock()

    def write(self, path: str, data: bytes, *, append: bool, max_bytes: int) -> int:
        with self._lock:
            try:
                real = self._resolve(path)
            except OSError as exc:  # a name too long for the disk: its own words
                raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
            except RuntimeError as exc:  # pathlib's word for a loop of symlinks
                raise NoteWriteFailed(path, "a loop of symlinks") from exc
            with _folder_lock(path, real.parent):
                for _ in range(_APPEND_ATTEMPTS if append else 1):
                    size = _write_once(path, real, data, append=append, max_bytes=max_bytes)
                    if size is not None:
                        return size
            raise NoteWriteFailed(
                path, "the note kept changing while appending; nothing was written, try again"
            )

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


def _write_once(path: str, real: Path, data: bytes, *, append: bool, max_bytes: int) -> int | None:
    """One attempt: the note's new size, or None when an append found it changed meanwhile."""
    before = _signature(path, real)
    old = _read_existing(path, real) if append and before is not None else b""
    content = _appended(path, old, data) if append else data
    if len(content) > max_bytes:
        raise FileTooLarge(
            path, f"the note would be {len(content)} bytes; the limit is {max_bytes}"
        )
    return len(content) if _replace(path, real, content, before, check=append) else None


def _appended(path: str, old: bytes, data: bytes) -> bytes:
    """`old` + `data`, the last line of `old` ended first; refused when `old` is binary."""
    if b"\x00" in old:  # appending would leave a note the indexer skips as binary
        raise NoteWriteFailed(
            path,
            "the note holds a NUL byte, so it is never indexed: appending to it would "
            "be lost; rewrite it with mode 'replace'",
        )
    if old and not old.endswith(b"\n"):
        old += b"\n"
    return old + data


@contextmanager
def _folder_lock(path: str, folder: Path) -> Iterator[None]:
    """Hold an exclusive flock on `folder` (created when missing) against other processes."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileExistsError, NotADirectoryError) as exc:
        raise NoteWriteFailed(path, "a file stands where a folder of the path should be") from exc
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by close, or by the kernel if we die
        yield
    finally:
        os.close(fd)


def _signature(path: str, real: Path) -> _Signature:
    """The note's identity and state now (None when missing); a non-file is refused."""
    try:
        st = real.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    if stat_mod.S_ISDIR(st.st_mode):
        raise NoteWriteFailed(path, "a folder has this name")
    if not stat_mod.S_ISREG(st.st_mode):
        raise NoteWriteFailed(path, "not a regular file")
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_existing(path: str, real: Path) -> bytes:
    try:
        return real.read_bytes()
    except FileNotFoundError:
        return b""  # removed since the signature: the rename check starts the append again
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc


def _replace(path: str, real: Path, content: bytes, expected: _Signature, *, check: bool) -> bool:
    """Put `content` at `real` atomically; with `check`, False (nothing changed) when the note
    is no longer in the `expected` state just before the rename."""
    folder = real.parent
    try:
        current = real.stat()
    except FileNotFoundError:
        current = None
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    try:
        fd, temp = _create_temp(folder)
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if current is not None:  # a replaced note keeps its mode; a new one has the umask's
            temp.chmod(stat_mod.S_IMODE(current.st_mode))
        if check and _signature(path, real) != expected:
            _discard(temp)
            return False
        temp.replace(real)  # atomic on POSIX: readers see old or new, never a mix
    except OSError as exc:
        _discard(temp)
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    except BaseException:
        _discard(temp)
        raise
    _sync_folder(folder)
    return True


def _create_temp(folder: Path) -> tuple[int, Path]:
    """A new hidden temporary file in `folder`, created with 0o666 less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    while True:
        temp = folder / f".memlane-{secrets.token_hex(6)}.tmp"
        try:
            return os.open(temp, flags, _NEW_FILE_MODE), temp
        except FileExistsError:
            continue


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
