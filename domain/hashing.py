"""Domain: content hashes and chunk ids (sha256, lowercase hex), stable across processes.

Chunk ids deliberately leave out the embedding model: vectors are stored per model elsewhere, so
one chunk keeps one id whatever model embeds it. The ordinal (position in the file's chunk list)
makes ids unique even when two chunks of one file have identical text and lines, so the
chunk rows and the keyword index cannot disagree about which chunk an id names.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from memlane.domain.chunks import ChunkId, ContentHash
from memlane.domain.sources import Source

# Lone surrogates (e.g. from text decoded with "surrogateescape") cannot be encoded as UTF-8.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def sha256_text(text: str) -> ContentHash:
    """Hash the UTF-8 encoding of `text`; lone surrogates are hashed as U+FFFD."""
    return ContentHash(hashlib.sha256(_utf8(text)).hexdigest())


def bytes_hash(data: bytes) -> ContentHash:
    """Hash raw bytes (session transcripts are hashed as stored, before any decoding)."""
    return ContentHash(hashlib.sha256(data).hexdigest())


def chunk_id(  # positional, in the order of the hashed fields
    source: Source,
    path: str,
    start_line: int,
    end_line: int,
    chunk_hash: str,
    ordinal: int,
) -> ChunkId:
    """Id of the chunk at position `ordinal` in the file's chunk list."""
    return ChunkId(sha256_text(f"{source}:{path}:{start_line}:{end_line}:{chunk_hash}:{ordinal}"))
