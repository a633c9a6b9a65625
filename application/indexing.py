"""Application: read one file, turn it into chunks, embed them and write them (the indexing step).

Slow work (reading, embedding) happens before the single write transaction, so a write lock is
never held across a network call. Failures of the embedding provider never lose keyword search:
the file is written without vectors and `backfill_vectors` adds them later.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memlane.application.document_embedder import DocumentEmbedder
from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider, Vector
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexedFile, IndexStore, IndexWriter
from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import Chunk, ChunkingPolicy
from memlane.domain.hashing import bytes_hash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL, vector_label
from memlane.domain.sources import FileStat, Source
from memlane.domain.text_decoding import decode_text
from memlane.domain.transcripts import parse_transcript, render_transcript


@dataclass(frozen=True, slots=True)
class PreparedFile:
    """A file read and chunked, ready to embed and write."""

    file: IndexedFile
    chunks: list[Chunk]
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What writing one file did."""

    chunks: int
    embedded: int
    cached: int
    embedding_error: EmbeddingError | None = None


class FilePreparer:
    """Reads files from their source and chunks them (transcripts flattened and redacted; notes
    redacted too when `redact_notes`)."""

    def __init__(
        self,
        sources: Mapping[Source, FileSource],
        policy: ChunkingPolicy,
        redact: Callable[[str], str] | None = None,
        *,
        session_policy: ChunkingPolicy | None = None,
        redact_notes: bool = False,
    ) -> None:
        self._sources = sources
        self._policy = policy
        self._session_policy = session_policy or policy
        self._redact = redact
        self._note_redact = redact if redact_notes else None

    def source(self, source: Source) -> FileSource:
        """Return the FileSource serving `source`."""
        return self._sources[source]

    def prepare(self, source: Source, path: str, stat: FileStat | None = None) -> PreparedFile:
        """Read and chunk one file.

        Raises SourceError (missing, refused, too large, unreadable) and NotText (binary data).
        """
        reader = self._sources[source]
        stat = stat or reader.stat(path)
        data = reader.read_bytes(path)
        content_hash = bytes_hash(data)
        problems: list[str] = []
        if source == "sessions":
            transcript = parse_transcript(data)
            if transcript.skipped_lines:
                problems.append(f"{transcript.skipped_lines} transcript line(s) skipped")
            rendered = render_transcript(transcript, self._redact)
            chunks = chunk_text(
                source,
                path,
                rendered.text,
                self._session_policy,
                line_numbers=rendered.line_numbers,
                line_timestamps=rendered.timestamps,
            )
        else:
            decoded = decode_text(data)
            if decoded.replaced_bytes:
                problems.append(f"invalid UTF-8: {decoded.replaced_bytes} byte(s) replaced")
            text = self._note_redact(decoded.text) if self._note_redact else decoded.text
            chunks = chunk_text(source, path, text, self._policy)
        indexed = IndexedFile(
            source=source, path=path, hash=content_hash, mtime=stat.mtime, size=len(data)
        )
        return PreparedFile(file=indexed, chunks=chunks, problems=problems)


def write_prepared(
    writer: IndexWriter,
    prepared: PreparedFile,
    provider: EmbeddingProvider | None,
    *,
    use_cache: bool = True,
    on_embedded: Callable[[int], None] | None = None,
) -> WriteOutcome:
    """Embed (through the cache of `writer`) and write one prepared file into `writer`.

    An embedding failure is returned, not raised: the file is then written keyword-only.
    """
    vectors: list[Vector | None] = [None] * len(prepared.chunks)
    model = KEYWORD_ONLY_MODEL
    embedded = cached = 0
    error: EmbeddingError | None = None
    if provider is not None and prepared.chunks:
        try:
            outcome = DocumentEmbedder(provider, writer, use_cache=use_cache).embed(
                prepared.chunks, on_embedded
            )
        except EmbeddingError as exc:
            error = exc
        else:
            vectors = list(outcome.vectors)
            model = vector_label(provider.model, provider.key)
            embedded, cached = outcome.embedded, outcome.cached
    writer.replace_file(prepared.file, prepared.chunks, vectors, model)
    return WriteOutcome(
        chunks=len(prepared.chunks), embedded=embedded, cached=cached, embedding_error=error
    )


def backfill_vectors(
    store: IndexStore,
    provider: EmbeddingProvider,
    *,
    use_cache: bool = True,
    batch: int = 256,
    on_embedded: Callable[[int], None] | None = None,
) -> int:
    """Give vectors of `provider` to every chunk that lacks them; return how many were set.

    Used when a provider appears after keyword-only indexing, after the model changed, and after
    transient embedding failures. Raises EmbeddingError when the provider fails.
    """
    done = 0
    embedder = DocumentEmbedder(provider, store, use_cache=use_cache)
    seen: set[str] = set()
    label = vector_label(provider.model, provider.key)
    while True:
        chunks = store.chunks_without_vectors(label, limit=batch)
        if not chunks or chunks[0].id in seen:  # nothing left, or the store ignored our writes
            return done
        seen.update(c.id for c in chunks)
        outcome = embedder.embed(chunks, on_embedded)
        store.set_vectors(label, {c.id: v for c, v in zip(chunks, outcome.vectors, strict=True)})
        done += len(chunks)
