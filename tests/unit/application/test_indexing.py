"""The indexing step: FilePreparer, write_prepared and backfill_vectors on fakes."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from memlane.application.indexing import FilePreparer, backfill_vectors, write_prepared
from memlane.application.ports.embedding import EmbeddingUnavailable, Vector
from memlane.application.ports.file_source import FileMissing
from memlane.domain.chunks import ChunkId, ChunkingPolicy
from memlane.domain.hashing import bytes_hash
from memlane.domain.index_meta import vector_label
from memlane.domain.text_decoding import NotText
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore
from tests.unit.application.conftest import message

NOTE = "# Deploys\n\nWe deploy the ingest service to the eu-west cluster every Tuesday.\n"


def preparer(
    memory: FakeFileSource | None = None,
    sessions: FakeFileSource | None = None,
    **kwargs: object,
) -> FilePreparer:
    return FilePreparer(
        {
            "memory": memory or FakeFileSource(source_name="memory"),
            "sessions": sessions or FakeFileSource(source_name="sessions"),
        },
        ChunkingPolicy(),
        **kwargs,  # type: ignore[arg-type]
    )


def _long_transcript(turns: int) -> str:
    return "".join(message("user", f"turn {i} about the deploy window") for i in range(turns))


class TestFilePreparer:
    def test_a_memory_file_is_hashed_chunked_and_stat_recorded(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", NOTE, mtime=42.0)

        prepared = preparer(memory).prepare("memory", "MEMORY.md")

        assert prepared.file.hash == bytes_hash(NOTE.encode())
        assert (prepared.file.mtime, prepared.file.size) == (42.0, len(NOTE.encode()))
        assert [c.text for c in prepared.chunks] == [NOTE.rstrip("\n")]
        assert prepared.problems == []

    def test_a_given_stat_is_used_instead_of_a_new_one(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", NOTE, mtime=42.0)
        stat = memory.stat("MEMORY.md")
        memory.set_mtime("MEMORY.md", 99.0)

        prepared = preparer(memory).prepare("memory", "MEMORY.md", stat)

        assert prepared.file.mtime == 42.0

    def test_invalid_utf8_is_replaced_and_reported(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", b"caf\xe9 notes\n")

        prepared = preparer(memory).prepare("memory", "MEMORY.md")

        assert prepared.problems == ["invalid UTF-8: 1 byte(s) replaced"]
        assert "\ufffd" in prepared.chunks[0].text

    def test_binary_data_is_not_text(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", b"\x00\x01\x02\x03")

        with pytest.raises(NotText):
            preparer(memory).prepare("memory", "MEMORY.md")

    def test_a_missing_file_raises_the_source_error(self) -> None:
        with pytest.raises(FileMissing):
            preparer().prepare("memory", "nope.md")

    def test_transcripts_are_flattened_redacted_and_keep_jsonl_line_numbers(self) -> None:
        sessions = FakeFileSource(source_name="sessions")
        sessions.write(
            "sessions/a.jsonl",
            message("user", "my key is hunter2") + "not json\n" + message("assistant", "noted"),
        )

        prepared = preparer(
            sessions=sessions, redact=lambda t: t.replace("hunter2", "***")
        ).prepare("sessions", "sessions/a.jsonl")

        (chunk,) = prepared.chunks
        assert "hunter2" not in chunk.text and "***" in chunk.text
        assert "User: my key is ***" in chunk.text and "Assistant: noted" in chunk.text
        assert (chunk.start_line, chunk.end_line) == (1, 3)
        assert chunk.timestamp is not None
        assert prepared.problems == ["1 transcript line(s) skipped (line 2: malformed JSON)"]

    def test_messages_in_a_shape_not_read_are_a_problem_of_the_file(self) -> None:
        sessions = FakeFileSource(source_name="sessions")
        record = {"type": "chat", "message": {"role": "user", "content": "the vpn host"}}
        sessions.write("sessions/a.jsonl", json.dumps(record) + "\n")

        prepared = preparer(sessions=sessions).prepare("sessions", "sessions/a.jsonl")

        assert prepared.chunks == []
        assert prepared.problems == [
            '1 message(s) in a record shape not read ("type": "chat" from line 1)'
        ]

    def test_transcripts_use_their_own_chunking_policy(self) -> None:
        sessions = FakeFileSource(source_name="sessions")
        sessions.write("sessions/a.jsonl", _long_transcript(40))

        default = preparer(sessions=sessions).prepare("sessions", "sessions/a.jsonl")
        small = preparer(
            sessions=sessions, session_policy=ChunkingPolicy(tokens=40, overlap=0)
        ).prepare("sessions", "sessions/a.jsonl")

        assert len(small.chunks) > len(default.chunks)

    def test_a_notes_long_line_is_cut_between_sentences_a_transcripts_at_the_budget(
        self,
    ) -> None:
        sentence = "The ingest service moves to the eu-west cluster on Tuesday. "  # 60 chars
        paragraph = sentence * 6  # one 360-character line
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", "# Deploys\n\n" + paragraph + "\n")
        sessions = FakeFileSource(source_name="sessions")
        sessions.write("sessions/a.jsonl", message("user", paragraph.strip()))
        small = ChunkingPolicy(tokens=40, overlap=0)  # 160 characters

        prepare = FilePreparer(
            {"memory": memory, "sessions": sessions}, small, session_policy=small
        ).prepare
        note = prepare("memory", "MEMORY.md").chunks
        transcript = prepare("sessions", "sessions/a.jsonl").chunks

        assert note[0].text == "# Deploys\n\n" + sentence * 2
        assert all(c.text.endswith("Tuesday. ") for c in note)
        assert any(not c.text.rstrip().endswith(".") for c in transcript)


class TestWritePrepared:
    def test_without_a_provider_the_file_is_written_keyword_only(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", NOTE)
        prepared = preparer(memory).prepare("memory", "MEMORY.md")
        store = FakeIndexStore()

        outcome = write_prepared(store, prepared, None)

        assert (outcome.chunks, outcome.embedded, outcome.cached) == (1, 0, 0)
        assert outcome.embedding_error is None
        assert len(store.chunks_without_vectors("any-model")) == 1
        assert store.file("memory", "MEMORY.md") == prepared.file

    def test_an_embedding_failure_is_returned_and_the_file_still_written(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", NOTE)
        prepared = preparer(memory).prepare("memory", "MEMORY.md")
        store, provider = FakeIndexStore(), FakeEmbeddingProvider()
        error = EmbeddingUnavailable("timeout")
        provider.fail_next(error)

        outcome = write_prepared(store, prepared, provider)

        assert outcome.embedding_error is error
        assert store.file("memory", "MEMORY.md") is not None
        assert len(store.chunks_without_vectors(provider.model)) == 1

    def test_an_empty_file_is_written_without_calling_the_provider(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("empty.md", "")
        prepared = preparer(memory).prepare("memory", "empty.md")
        store, provider = FakeIndexStore(), FakeEmbeddingProvider()

        outcome = write_prepared(store, prepared, provider)

        assert (outcome.chunks, provider.calls) == (0, [])
        assert store.file("memory", "empty.md") is not None

    def test_embedded_counts_are_reported_to_the_callback(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", NOTE)
        prepared = preparer(memory).prepare("memory", "MEMORY.md")
        counted: list[int] = []

        write_prepared(
            FakeIndexStore(), prepared, FakeEmbeddingProvider(), on_embedded=counted.append
        )

        assert sum(counted) == 1

    def test_without_the_cache_every_chunk_is_embedded_again(self) -> None:
        memory = FakeFileSource(source_name="memory")
        memory.write("MEMORY.md", NOTE)
        prepared = preparer(memory).prepare("memory", "MEMORY.md")
        store, provider = FakeIndexStore(), FakeEmbeddingProvider()
        write_prepared(store, prepared, provider)

        cached = write_prepared(store, prepared, provider)
        uncached = write_prepared(store, prepared, provider, use_cache=False)

        assert (cached.embedded, cached.cached) == (0, 1)
        assert (uncached.embedded, uncached.cached) == (1, 0)


def _keyword_only_store(count: int) -> FakeIndexStore:
    memory = FakeFileSource(source_name="memory")
    store = FakeIndexStore()
    prep = preparer(memory)
    for i in range(count):
        memory.write(f"n{i}.md", f"note number {i} about topic {i}\n")
        write_prepared(store, prep.prepare("memory", f"n{i}.md"), None)
    return store


class TestBackfillVectors:
    def test_every_chunk_without_a_vector_gets_one(self) -> None:
        store, provider = _keyword_only_store(5), FakeEmbeddingProvider()

        done = backfill_vectors(store, provider, batch=2)

        assert done == 5
        assert store.chunks_without_vectors(vector_label(provider.model, provider.key)) == []
        documents = [c for c in provider.calls if c.kind == "documents"]
        assert [len(c.texts) for c in documents] == [2, 2, 1]

    def test_chunks_of_another_model_are_re_embedded(self) -> None:
        store = _keyword_only_store(2)
        backfill_vectors(store, FakeEmbeddingProvider(model="old"))
        new = FakeEmbeddingProvider(model="new")

        assert backfill_vectors(store, new) == 2
        assert store.chunks_without_vectors(vector_label(new.model, new.key)) == []

    def test_nothing_to_do_embeds_nothing(self) -> None:
        store, provider = _keyword_only_store(2), FakeEmbeddingProvider()
        backfill_vectors(store, provider)
        provider.calls.clear()

        assert backfill_vectors(store, provider) == 0
        assert provider.calls == []

    def test_a_provider_failure_is_raised_and_nothing_is_set(self) -> None:
        store, failing = _keyword_only_store(3), FakeEmbeddingProvider()
        failing.fail_next(EmbeddingUnavailable("down"))

        with pytest.raises(EmbeddingUnavailable):
            backfill_vectors(store, failing, batch=2)

        assert len(store.chunks_without_vectors(failing.model)) == 3

    @pytest.mark.timeout(10)  # the failure this guards against is an endless loop
    def test_a_store_that_drops_the_writes_does_not_loop_forever(self) -> None:
        class DroppingStore(FakeIndexStore):
            def set_vectors(self, model: str, vectors: Mapping[ChunkId, Vector]) -> None:
                pass

        store = DroppingStore()
        memory = FakeFileSource(source_name="memory")
        memory.write("a.md", NOTE)
        write_prepared(store, preparer(memory).prepare("memory", "a.md"), None)

        assert backfill_vectors(store, FakeEmbeddingProvider()) == 1
