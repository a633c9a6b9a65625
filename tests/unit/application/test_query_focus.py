"""What the vector leg embeds: the question without the words most chunks hold."""

from __future__ import annotations

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.indexing import FilePreparer, write_prepared
from memlane.application.ports.index_store import IndexedFile
from memlane.application.queries import Searcher
from memlane.application.query_focus import VectorQuery, vector_query
from memlane.domain.chunks import Chunk, ChunkId, ChunkingPolicy, ContentHash
from memlane.domain.common_words import MIN_CHUNKS
from memlane.domain.config import MemorySettings, QuerySettings
from memlane.domain.search import SearchQuery
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.file_source import FakeFileSource
from tests.fakes.index_store import FakeIndexStore


def transcript(chunks: int) -> FakeIndexStore:
    """A conversation whose every chunk names its speaker; one chunk is about pottery."""
    store = FakeIndexStore()
    rows = [
        Chunk(
            id=ChunkId(f"c{i}"),
            source="sessions",
            path="sessions/s.jsonl",
            start_line=i + 1,
            end_line=i + 1,
            text=f"Melanie: {'I made a pottery bowl' if i == 0 else f'day {i} was fine'}",
            hash=ContentHash(f"h{i}"),
        )
        for i in range(chunks)
    ]
    file = IndexedFile(
        source="sessions", path="sessions/s.jsonl", hash=ContentHash("f"), mtime=1.0, size=1
    )
    store.replace_file(file, rows, [None] * chunks, "fts-only")
    return store


def test_a_word_in_most_chunks_is_left_out() -> None:
    store = transcript(MIN_CHUNKS)

    asked = vector_query(store, "What pottery did Melanie make?", share=0.5)

    assert asked == VectorQuery("What pottery did make?", ("melanie",))


def test_share_zero_a_small_memory_or_no_common_word_keep_the_question() -> None:
    question = "What pottery did Melanie make?"

    assert vector_query(transcript(MIN_CHUNKS), question, share=0.0) == VectorQuery(question)
    assert vector_query(transcript(MIN_CHUNKS - 1), question, share=0.5) == VectorQuery(question)
    assert vector_query(transcript(MIN_CHUNKS), "pottery bowl", share=0.5) == VectorQuery(
        "pottery bowl"
    )


def test_a_question_of_common_words_only_stays_whole() -> None:
    assert vector_query(transcript(MIN_CHUNKS), "Melanie?", share=0.5) == VectorQuery("Melanie?")


def test_the_searcher_embeds_the_question_without_its_common_words() -> None:
    """Through the whole search: the vector leg's query embedding leaves the name out, the
    keyword leg still searches it; off (share 0) the whole question is embedded."""
    provider = FakeEmbeddingProvider()
    memory = FakeFileSource(source_name="memory")
    for i in range(MIN_CHUNKS):
        topic = "I made a pottery bowl" if i == 0 else f"day {i} was fine"
        memory.write(f"memory/{i}.md", f"Melanie: {topic}\n")
    preparer = FilePreparer({"memory": memory}, ChunkingPolicy())
    store = FakeIndexStore()
    for i in range(MIN_CHUNKS):
        write_prepared(store, preparer.prepare("memory", f"memory/{i}.md"), provider)
    runtime = EmbeddingRuntime(lambda: Selection(provider=provider, fallback_from=None))

    def asked(share: float) -> tuple[str, list[str]]:
        provider.calls.clear()
        settings = MemorySettings(query=QuerySettings(min_score=0.0, common_word_share=share))
        response = Searcher(store=store, runtime=runtime, settings=settings).search(
            SearchQuery("What pottery did Melanie make?"), now=0.0
        )
        queries = [c.texts[0] for c in provider.calls if c.kind == "query"]
        assert len(queries) == 1
        return queries[0], [r.path for r in response.results]

    text, paths = asked(0.5)
    assert text == "What pottery did make?"
    assert paths[0] == "memory/0.md"
    assert asked(0.0)[0] == "What pottery did Melanie make?"
