"""Reliability suite, part 1: a workspace that knows what the index must hold.

Every note and transcript message carries a *planted word*, unique across the whole run, so a
keyword search can tell which version of which file the index holds. The model remembers the
planted words of the current files (`live`) and of every deleted file or replaced version
(`retired`): after a recovery run each live word must be found in its file and no retired word
anywhere, which catches both missing and stale rows.

Mutations are drawn from a seeded `random.Random`, so a run (and a failure) can be replayed.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from pathlib import Path

AGENT = "main"
TOPICS = ("deploy", "billing", "schema", "latency", "rollback", "backlog", "incident", "owner")


@dataclass(frozen=True, slots=True)
class Sizes:
    """How big the workspace is and how much each round changes (fractions of the notes)."""

    notes: int = 300
    transcripts: int = 8
    messages: int = 40
    edit_share: float = 0.35  # large, so an incremental `index` has real work when it is killed
    add_share: float = 0.08
    delete_share: float = 0.05
    grow_messages: int = 12


@dataclass(frozen=True, slots=True)
class Mutation:
    """What one round changed on disk (counts, for the results file)."""

    added: int
    edited: int
    deleted: int
    transcripts_grown: int
    transcripts_added: int
    transcripts_deleted: int

    @property
    def total(self) -> int:
        return (
            self.added
            + self.edited
            + self.deleted
            + self.transcripts_grown
            + self.transcripts_added
            + self.transcripts_deleted
        )


@dataclass
class KillWorkspace:
    """The files of one run: `ws/` (MEMORY.md, memory/), `state/` (index, transcripts), config."""

    root: Path
    rng: random.Random
    sizes: Sizes = field(default_factory=Sizes)
    # index path ("memory/n1.md", "sessions/s1.jsonl") -> words planted in its current content
    live: dict[str, set[str]] = field(default_factory=dict)
    retired: set[str] = field(default_factory=set)
    _used: set[str] = field(default_factory=set)
    _serial: int = 0

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def sessions(self) -> Path:
        return self.state / "agents" / AGENT / "sessions"

    @property
    def db(self) -> Path:
        return self.state / "agents" / AGENT / "memory.db"

    @property
    def config(self) -> Path:
        return self.root / "config.json5"

    def write_config(self, provider: str) -> None:
        # A short debounce and a one-message threshold make `watch` react quickly, so kills
        # during `watch` meet syncs in progress rather than an idle process.
        self.config.write_text(
            "{agents: {defaults: {memorySearch: {"
            f"provider: '{provider}', sources: ['memory', 'sessions'], "
            "sync: {watchDebounceMs: 150, sessions: {deltaMessages: 1, deltaBytes: 0}}"
            "}}}}\n",
            encoding="utf-8",
        )

    def create(self, provider: str) -> None:
        """Write the config and the initial notes and transcripts."""
        (self.workspace / "memory").mkdir(parents=True, exist_ok=True)
        self.sessions.mkdir(parents=True, exist_ok=True)
        self.write_config(provider)
        self._write_note("MEMORY.md")
        for _ in range(self.sizes.notes):
            self._write_note(self._new_note_path())
        for _ in range(self.sizes.transcripts):
            self._new_transcript()

    # -- planted words -------------------------------------------------------------------

    def word(self) -> str:
        """A fresh word no file ever held: letters only, so the tokenizer keeps it whole."""
        while True:
            candidate = "zq" + "".join(self.rng.choices(string.ascii_lowercase, k=10))
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate

    def _retire(self, rel: str) -> None:
        self.retired |= self.live.pop(rel, set())

    # -- notes ---------------------------------------------------------------------------

    def note_paths(self) -> list[str]:
        return sorted(p for p in self.live if not p.startswith("sessions/"))

    def transcript_paths(self) -> list[str]:
        return sorted(p for p in self.live if p.startswith("sessions/"))

    def _new_note_path(self) -> str:
        self._serial += 1
        return f"memory/area-{self._serial % 7}/note-{self._serial:05d}.md"

    def _write_note(self, rel: str) -> None:
        """(Re)write a note: a varying number of sections, so chunk boundaries move too."""
        self._retire(rel)
        planted = self.word()
        lines = [f"# Note {rel}", "", f"Planted {planted} marks this version."]
        for section in range(self.rng.randint(1, 6)):
            topic = self.rng.choice(TOPICS)
            lines += ["", f"## Section {section} on {topic}", ""]
            lines += [
                f"Line {n}: the {topic} owner is person-{self.rng.randint(1, 40)}."
                for n in range(self.rng.randint(2, 12))
            ]
        path = self.workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.live[rel] = {planted}

    def _delete(self, rel: str) -> None:
        self.file(rel).unlink()
        self._retire(rel)

    def file(self, rel: str) -> Path:
        """The file on disk behind an index path."""
        if rel.startswith("sessions/"):
            return self.sessions / rel.removeprefix("sessions/")
        return self.workspace / rel

    # -- transcripts ---------------------------------------------------------------------

    def _message(self, number: int) -> tuple[str, str]:
        planted = self.word()
        role = "user" if number % 2 == 0 else "assistant"
        record = {
            "type": "message",
            "message": {"role": role, "content": f"message {number} about {planted} today"},
        }
        return json.dumps(record) + "\n", planted

    def _new_transcript(self) -> None:
        self._serial += 1
        rel = f"sessions/chat-{self._serial:05d}.jsonl"
        self.live[rel] = set()
        self._append(rel, self.sizes.messages)

    def _append(self, rel: str, count: int) -> None:
        start = len(self.live[rel])
        with self.file(rel).open("a", encoding="utf-8") as f:
            for n in range(start, start + count):
                text, planted = self._message(n)
                f.write(text)
                self.live[rel].add(planted)

    # -- a round of changes ----------------------------------------------------------------

    def mutate(self, scale: float = 1.0) -> Mutation:
        """Add, edit and delete notes, grow, add and delete transcripts; `scale` shrinks it."""
        notes = self.note_paths()
        size = self.sizes
        edited = self.rng.sample(notes, max(1, int(len(notes) * size.edit_share * scale)))
        for rel in edited:
            self._write_note(rel)
        deletable = [p for p in notes if p not in edited and p != "MEMORY.md"]
        deleted = self.rng.sample(deletable, int(len(notes) * size.delete_share * scale))
        for rel in deleted:
            self._delete(rel)
        added = max(1, int(size.notes * size.add_share * scale))
        for _ in range(added):
            self._write_note(self._new_note_path())
        grown = self.transcript_paths()
        for rel in grown:
            self._append(rel, max(1, int(size.grow_messages * scale)))
        dropped = 0
        if len(grown) > 2 and self.rng.random() < 0.3:
            self._delete(self.rng.choice(grown))
            dropped = 1
        self._new_transcript()
        return Mutation(added, len(edited), len(deleted), len(grown), 1, dropped)
