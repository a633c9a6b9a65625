"""Adapter: NoteWriter on the local disk: temp file + fsync + rename, symlinks checked."""

from __future__ import annotations

import fcntl
import os
import secrets
import stat as stat_mod
import threading
import time
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
# An append that finds the note replaced under it (an editor's save renames a new file over it)
# starts again on the note that is there now.
_APPEND_ATTEMPTS: Final = 5
# How often, and how long apart, an append looks at a note's end that lacks a newline.
_SETTLE_LOOKS: Final = 5
_SETTLE_S: Final = 0.002

# What identifies one state of a note on disk (None: no note); a change to it moves one of these.
_Signature = tuple[int, int, int, int] | None


class FilesystemNoteWriter:
    """Writes notes under one workspace; a reader never sees a half-written file.

    Each write lands in a hidden `.memlane-*.tmp` file next to the note (not a `.md`, so never
    indexed), is fsynced, then renamed over the note. A symlinked note or folder is followed
    only when its real target stays inside the workspace or an extra path root and is itself a
    note (a `.md` file outside hidden and tool folders), as the memory source checks reads.
    Writes are serialised by an exclusive `flock` on the note's folder, so two processes (two
    `memlane mcp` servers of one workspace) never lose each other's appends.

    An append to an existing note is not a rename: it is written at the note's end with
    `O_APPEND`, as a shell's `>>` is, so a line another program appends at the same moment is
    never lost (a copy renamed over the note dropped any line appended between the copy and the
    rename, and one that checked first still had that gap). A reader may see an append half
    written, as with `>>`; the watcher's next event indexes it whole.
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
                if not append:
                    return _write_whole(path, real, data, max_bytes=max_bytes)
                for _ in range(_APPEND_ATTEMPTS):
                    size = _append_in_place(path, real, data, max_bytes=max_bytes)
                    if size is None:  # no note yet: a new one, unless another just made it
                        size = _create(path, real, data, max_bytes=max_bytes)
                    if size is not None:
                        return size
            raise NoteWriteFailed(
                path, "the note kept being replaced while appending; nothing was written, try again"
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


def _write_whole(path: str, real: Path, data: bytes, *, max_bytes: int) -> int:
    """Replace the note (or make it) with `data`, renamed into place."""
    _check_size(path, len(data), max_bytes)
    _signature(path, real)  # a folder or a device of that name is refused
    _replace(path, real, data, None, check=False)
    return len(data)


def _create(path: str, real: Path, data: bytes, *, max_bytes: int) -> int | None:
    """Make the missing note holding `data`; None when it exists by the rename (someone else
    made it meanwhile: the append goes to its end then)."""
    _check_size(path, len(data), max_bytes)
    return len(data) if _replace(path, real, data, None, check=True) else None


def _append_in_place(path: str, real: Path, data: bytes, *, max_bytes: int) -> int | None:
    """Write `data` at the end of the existing note (its last line ended first); the note's
    new size, or None when there is no note, or it was replaced while appending."""
    if _signature(path, real) is None:  # which also refuses a folder or a device
        return None
    try:
        # `real` is resolved: a link planted there since is refused, a FIFO does not block.
        flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(real, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise NoteWriteFailed(path, "not a regular file")
        old = os.pread(fd, st.st_size, 0)
        if b"\x00" in old:  # appending would leave a note the indexer skips as binary
            raise NoteWriteFailed(
                path,
                "the note holds a NUL byte, so it is never indexed: appending to it would "
                "be lost; rewrite it with mode 'replace'",
            )
        added = (b"\n" if not _ends_a_line(fd, old) else b"") + data
        _check_size(path, len(old) + len(added), max_bytes)
        written = 0
        while written < len(added):
            written += os.write(fd, added[written:])
        os.fsync(fd)
        size = os.fstat(fd).st_size
        # Renamed over while we wrote: our line went to the file that was replaced.
        return size if _same_file(real, st) else None
    except OSError as exc:
        raise NoteWriteFailed(path, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)


def _ends_a_line(fd: int, old: bytes) -> bool:
    """Whether the note read as `old` ends with a newline (or is empty), looked at again while
    it grows: a line another program is appending can be caught half copied (a write that
    crosses a page updates the size page by page), and its newline is then still to come."""
    if not old or old.endswith(b"\n"):
        return True
    size, last = len(old), old[-1:]
    for _ in range(_SETTLE_LOOKS):
        time.sleep(_SETTLE_S)
        now = os.fstat(fd).st_size
        tail = os.pread(fd, 1, now - 1) if now else b""
        if tail in (b"\n", b""):
            return True
        if (now, tail) == (size, last):
            return False  # the same end a moment later: the note ends without a newline
        size, last = now, tail
    return False


def _same_file(real: Path, st: os.stat_result) -> bool:
    try:
        now = real.stat()
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def _check_size(path: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise FileTooLarge(path, f"the note would be {size} bytes; the limit is {max_bytes}")


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
