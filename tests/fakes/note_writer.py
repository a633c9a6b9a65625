"""Fake: a NoteWriter that writes into a FakeFileSource, so a fake-wired manager can index it."""

from __future__ import annotations

from dataclasses import dataclass, field

from memlane.application.ports.file_source import FileMissing, FileTooLarge
from memlane.application.ports.note_writer import NoteWriteFailed
from tests.fakes.file_source import FakeFileSource


@dataclass
class FakeNoteWriter:
    """Appends or replaces bytes in `files`; records each call; can be told to fail once."""

    files: FakeFileSource = field(default_factory=lambda: FakeFileSource(source_name="memory"))
    calls: list[tuple[str, bytes, bool]] = field(default_factory=list)
    fail_next: bool = False

    def write(self, path: str, data: bytes, *, append: bool, max_bytes: int) -> int:
        self.calls.append((path, data, append))
        if self.fail_next:
            self.fail_next = False
            raise NoteWriteFailed(path, "disk full")
        old = self._current(path) if append else b""
        if b"\x00" in old:
            raise NoteWriteFailed(path, "the note holds a NUL byte, so it is never indexed")
        if old and not old.endswith(b"\n"):
            old += b"\n"
        content = old + data
        if len(content) > max_bytes:
            raise FileTooLarge(path, f"{len(content)} bytes exceeds {max_bytes}")
        self.files.write(path, content)
        return len(content)

    def _current(self, path: str) -> bytes:
        try:
            return self.files.read_bytes(path)
        except FileMissing:
            return b""
