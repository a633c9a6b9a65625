"""Port: write memory notes on behalf of an agent (the `memory_write` tool's side effect).

Errors come from the FileSource family (`application.ports.file_source`), so every entry point
maps a refused write exactly as it maps a refused read:

    FileRefused      the path is not a memory note this writer may touch (outside `memory/` and
                     `MEMORY.md`, `..`, absolute, a symlink leading outside the allowed roots)
    FileTooLarge     the note would grow past the byte limit
    NoteWriteFailed  the disk said no (permissions, full disk, a folder where a file should be)
"""

from __future__ import annotations

from typing import Protocol

from memlane.application.ports.file_source import SourceError


class NoteWriteFailed(SourceError):
    """The note could not be written; the previous content is untouched."""


class NoteWriter(Protocol):
    """Writes notes atomically: a reader sees the old content or the new one, never a mix.

    Contract:
    * `path` is an indexed memory path (`MEMORY.md` or `memory/...md`, `/`-separated); the
      writer re-checks it against the real disk (symlinks resolved) on every call;
    * `append=True` adds `data` after the current content (a missing file starts empty), first
      ending a last line that lacks its newline; a note holding a NUL byte (binary to the
      indexer, never indexed) is not appended to: NoteWriteFailed says so; `append=False`
      replaces the content; missing parent folders are created;
    * concurrent calls never lose each other's appends, on one writer or from several
      processes; an append never drops a change someone else made to the note meanwhile;
    * a new note gets the mode any new file would (the umask applies); a replaced note keeps
      its mode;
    * the result may not exceed `max_bytes`, else FileTooLarge and nothing changes;
    * returns the size of the note afterwards, in bytes.
    """

    def write(self, path: str, data: bytes, *, append: bool, max_bytes: int) -> int:
        """Write `data` to `path` (appending or replacing); return the new size in bytes."""
        ...
