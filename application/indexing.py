"""Application: read one file, turn it into chunks, embed them and write them (the indexing step).

Slow work (reading, embedding) happens before the single write transaction, so a write lock is
never held across a network call. Failures of the embedding provider never lose keyword search:
the file is written without vectors and the vector backfill (`backfill_batch`) adds them later.
A rebuild writes every file that way on purpose (`defer=True`): with a local model embedding two
long passages a second, a first index of a large history would otherwise answer nothing for
hours; its keyword rows are committed at once and the backfill embeds in committed batches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memlane.application.document_embedder import DocumentEmbedder
from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider, Vector
from memlane.application.ports.file_source import FileSource
from memlane.application.ports.index_store import IndexedFile, IndexStore, IndexWriter
from memlane.domain.chunking import chunk_text
from memlane.domain.chunks import Chunk, ChunkId, ChunkingPolicy
from memlane.domain.hashing import bytes_hash
from memlane.domain.index_meta import KEYWORD_ONLY_MODEL, vector_label
from memlane.domain.note_pieces import note_pieces
from memlane.domain.sources import FileStat, Source
from memlane.domain.text_decoding import decode_text
from memlane.domain.transcripts import parse_transcript, render_transcript

_REASONS_SHOWN = 3  # of a transcript's skipped lines, in its issue


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
                problems.append(_skipped(transcript.skipped_lines, transcript.problems))
            if transcript.replaced_bytes:
                problems.append(f"invalid UTF-8: {transcript.replaced_bytes} byte(s) replaced")
            if transcript.unread:
                problems.append(transcript.unread)
            rendered = render_transcript(transcript, self._redact)
            chunks = chunk_text(
                source,
                path,
                rendered.text,
                self._session_policy,
                line_numbers=rendered.line_numbers,
                line_timestamps=rendered.timestamps,
                mtime=stat.mtime,
            )
        else:
            decoded = decode_text(data)
            if decoded.replaced_bytes:
                problems.append(f"invalid UTF-8: {decoded.replaced_bytes} byte(s) replaced")
            text = self._note_redact(decoded.text) if self._note_redact else decoded.text
            chunks = chunk_text(
                source,
                path,
                text,
                self._policy,
                mtime=stat.mtime,
                heading_context=True,
                sentence_cuts=True,
            )
        indexed = IndexedFile(
            source=source, path=path, hash=content_hash, mtime=stat.mtime, size=len(data)
        )
        return PreparedFile(file=indexed, chunks=chunks, problems=problems)


def _skipped(count: int, problems: tuple[str, ...]) -> str:
    """A transcript's skipped lines with the first reasons (they name lines, never content)."""
    shown = "; ".join(problems[:_REASONS_SHOWN])
    more = f"; and {len(problems) - _REASONS_SHOWN} more" if len(problems) > _REASONS_SHOWN else ""
    return f"{count} transcript line(s) skipped ({shown}{more})"


def write_prepared(
    writer: IndexWriter,
    prepared: PreparedFile,
    provider: EmbeddingProvider | None,
    *,
    use_cache: bool = True,
    on_embedded: Callable[[int], None] | None = None,
    defer: bool = False,
) -> WriteOutcome:
    """Embed (through the cache of `writer`) and write one prepared file into `writer`.

    With `defer`, only cached vectors are written and the provider is not called: the other
    chunks wait for the vector backfill. An embedding failure is returned, not raised: the file
    is then written keyword-only.
    """
    vectors: list[Vector | None] = [None] * len(prepared.chunks)
    model = KEYWORD_ONLY_MODEL
    embedded = cached = 0
    error: EmbeddingError | None = None
    if provider is not None and prepared.chunks and defer:
        vectors = DocumentEmbedder(provider, writer, use_cache=use_cache).cached(prepared.chunks)
        model = vector_label(provider.model, provider.key)
        cached = sum(1 for v in vectors if v is not None)
    elif provider is not None and prepared.chunks:
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


def backfill_batch(
    store: IndexStore,
    provider: EmbeddingProvider,
    *,
    use_cache: bool = True,
    batch: int = 32,
    on_embedded: Callable[[int], None] | None = None,
) -> list[Chunk]:
    """Give vectors of `provider` to up to `batch` chunks that lack them, committed in one
    transaction; return those chunks ([] when none is missing).

    The texts go through the embedding cache first (cached as soon as the provider answers), so
    a process killed before the commit loses no provider call either: the next batch finds
    them in the cache. Raises EmbeddingError when the provider fails (nothing is committed).
    """
    chunks = store.chunks_without_vectors(vector_label(provider.model, provider.key), batch)
    if not chunks:
        return []
    outcome = DocumentEmbedder(provider, store, use_cache=use_cache).embed(chunks, on_embedded)
    store.set_vectors(
        vector_label(provider.model, provider.key),
        {c.id: v for c, v in zip(chunks, outcome.vectors, strict=True)},
    )
    return chunks


def backfill_pieces_batch(
    store: IndexStore,
    provider: EmbeddingProvider,
    *,
    use_cache: bool = True,
    batch: int = 32,
    on_embedded: Callable[[int], None] | None = None,
) -> list[Chunk]:
    """Give the piece vectors of `provider` to up to `batch` note chunks that have their own
    vector but no pieces (domain/note_pieces.py), committed in one transaction; return those
    chunks ([] when none is missing). Raises EmbeddingError when the provider fails."""
    label = vector_label(provider.model, provider.key)
    chunks = store.chunks_without_pieces(label, batch)
    if not chunks:
        return []
    texts = {c.id: note_pieces(c.text) for c in chunks}
    flat = [t for pieces in texts.values() for t in pieces]
    vectors = DocumentEmbedder(provider, store, use_cache=use_cache).embed_texts(flat, on_embedded)
    pieces: dict[ChunkId, list[Vector]] = {}
    start = 0
    for cid, own in texts.items():
        pieces[cid] = vectors[start : start + len(own)]
        start += len(own)
    store.set_pieces(label, pieces)
    return chunks


def backfill_vectors(
    store: IndexStore,
    provider: EmbeddingProvider,
    *,
    use_cache: bool = True,
    batch: int = 32,
    on_embedded: Callable[[int], None] | None = None,
) -> int:
    """Give vectors of `provider` to every chunk that lacks them, batch by batch; return how
    many were set.

    Used when a provider appears after keyword-only indexing, after the model changed, after
    transient embedding failures and after a rebuild (which defers its vectors). Raises
    EmbeddingError when the provider fails; the batches committed before stay.
    """
    done = 0
    seen: set[str] = set()
    while True:
        chunks = backfill_batch(
            store, provider, use_cache=use_cache, batch=batch, on_embedded=on_embedded
        )
        if not chunks or chunks[0].id in seen:  # nothing left, or the store ignored our writes
            return done
        seen.update(c.id for c in chunks)
        done += len(chunks)
