"""Secrets in transcripts (and, with `redaction.notes`, in notes) never reach the SQLite file.

The real pipeline end to end: files on disk, the real sources, chunker and SQLite store (keyword
only, provider "none"); then the raw bytes of `memory.db` and its WAL, `search` and `get`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlane.application.memory import MemoryManager
from memlane.domain.redaction import mask_token
from memlane.entrypoints.api import open_manager
from tests.secret_samples import PEM_BODY, PEM_TEXT, SAMPLES

pytestmark = pytest.mark.integration

SENTINEL = (
    "walrusprotocol"  # plain text that must reach the store, to prove we read the right files
)
# What must never be stored or shown: each secret, and the part of it no mask keeps.
FORBIDDEN = sorted({s.secret for s in SAMPLES} | {s.middle for s in SAMPLES} | {PEM_BODY})
# Words that lead each sample (its context), to search for the chunks holding the secrets.
QUERIES = sorted({s.text.split()[0].strip("{\"'/:") for s in SAMPLES} - {""} | {SENTINEL})


def _note() -> str:
    lines = [f"# Credentials {SENTINEL}", ""]
    lines += [f"- {sample.text.strip()}" for sample in SAMPLES]
    lines += ["", PEM_TEXT, "", f"last line {SENTINEL}"]
    return "\n".join(lines) + "\n"


def _transcript() -> str:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{SENTINEL} {sample.text}"}
        for i, sample in enumerate(SAMPLES)
    ]
    messages.append({"role": "user", "content": f"{SENTINEL} my key:\n{PEM_TEXT}"})
    return "".join(json.dumps({"type": "message", "message": m}) + "\n" for m in messages)


def _open(tmp_path: Path, redaction: dict[str, object]) -> MemoryManager:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "credentials.md").write_text(_note())
    sessions = tmp_path / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "chat.jsonl").write_text(_transcript())
    return open_manager(
        workspace=workspace,
        state_dir=tmp_path / "state",
        config={"provider": "none", "query": {"minScore": 0}, "redaction": redaction},
        env={"HOME": str(tmp_path)},
    )


def _stored_bytes(tmp_path: Path) -> bytes:
    """The database file and its write-ahead log, as they lie on disk while the store is open."""
    database = tmp_path / "state" / "agents" / "main" / "memory.db"
    wal = database.with_name("memory.db-wal")
    return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def _leaks(text: str) -> list[str]:
    return [secret for secret in FORBIDDEN if secret in text]


@pytest.fixture
def redacted_notes(tmp_path: Path) -> Iterator[MemoryManager]:
    manager = _open(tmp_path, {"notes": True})
    manager.sync()
    yield manager
    manager.close()


class TestWithNoteRedaction:
    def test_no_secret_is_in_the_database_file_or_its_wal(
        self, redacted_notes: MemoryManager, tmp_path: Path
    ) -> None:
        stored = _stored_bytes(tmp_path)

        assert SENTINEL.encode() in stored
        assert [s for s in FORBIDDEN if s.encode() in stored] == []
        # Masks were stored in their place (the secrets were indexed, not dropped).
        assert mask_token(SAMPLES[0].secret).encode() in stored

    def test_search_returns_only_masked_text(self, redacted_notes: MemoryManager) -> None:
        snippets = [
            (result.path, result.snippet)
            for query in QUERIES
            for result in redacted_notes.search(query, max_results=50).results
        ]

        assert {path for path, _ in snippets} == {"memory/credentials.md", "sessions/chat.jsonl"}
        assert [(path, _leaks(snippet)) for path, snippet in snippets if _leaks(snippet)] == []

    def test_a_search_for_a_secret_finds_nothing(self, redacted_notes: MemoryManager) -> None:
        found = [
            result.snippet
            for sample in SAMPLES
            for result in redacted_notes.search(sample.middle, max_results=5).results
            if sample.middle in result.snippet
        ]
        assert found == []

    @pytest.mark.parametrize("path", ["memory/credentials.md", "sessions/chat.jsonl"])
    def test_get_returns_only_masked_text(self, redacted_notes: MemoryManager, path: str) -> None:
        text = redacted_notes.get(path).text

        assert SENTINEL in text
        assert _leaks(text) == []
        exact = [s for s in SAMPLES if s.exact]
        assert [s.secret for s in exact if mask_token(s.secret) not in text] == []

    def test_a_note_keeps_its_line_numbers(self, redacted_notes: MemoryManager) -> None:
        note = _note().split("\n")
        last = note.index(f"last line {SENTINEL}") + 1

        assert redacted_notes.get("memory/credentials.md", from_line=last, lines=1).text == (
            f"last line {SENTINEL}"
        )


class TestDefaults:
    def test_notes_are_stored_as_written_unless_asked(self, tmp_path: Path) -> None:
        # Off by default, as in the reference: the check above can see a secret when one is there.
        manager = _open(tmp_path, {})
        manager.sync()
        stored = _stored_bytes(tmp_path)
        note = manager.get("memory/credentials.md").text
        transcript = manager.get("sessions/chat.jsonl").text
        manager.close()

        assert SAMPLES[0].secret.encode() in stored
        assert SAMPLES[0].secret in note
        assert _leaks(transcript) == []


class TestSettingsChanged:
    def test_masking_notes_later_rebuilds_and_no_secret_is_left(self, tmp_path: Path) -> None:
        # Indexed with the defaults (notes as written), then `redaction.notes` turned on: the
        # index must not keep the secrets it took before, found by a search for them.
        first = _open(tmp_path, {})
        first.sync()
        assert SAMPLES[0].secret.encode() in _stored_bytes(tmp_path)
        first.close()

        later = open_manager(
            workspace=tmp_path / "ws",
            state_dir=tmp_path / "state",
            config={"provider": "none", "query": {"minScore": 0}, "redaction": {"notes": True}},
            env={"HOME": str(tmp_path)},
        )
        report = later.sync()
        hits = [h.snippet for q in QUERIES for h in later.search(q, max_results=20).results]
        later.close()

        assert report.full_reindex
        assert _leaks("\n".join(hits)) == []
        assert SENTINEL in "\n".join(hits)
