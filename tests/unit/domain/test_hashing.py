"""Unit tests: content hashes and chunk ids."""

from __future__ import annotations

import hashlib

from memlane.domain.chunks import ChunkId
from memlane.domain.hashing import bytes_hash, chunk_id, sha256_text


class TestSha256Text:
    def test_is_the_lowercase_hex_sha256_of_the_utf8_bytes(self) -> None:
        text = "Notes: 会议 😀"
        assert sha256_text(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()

    def test_matches_the_published_test_vector(self) -> None:
        assert sha256_text("abc") == (
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )

    def test_lone_surrogates_hash_as_the_replacement_character(self) -> None:
        assert sha256_text("a\udc80b") == sha256_text("a\ufffdb")

    def test_lone_surrogates_do_not_collide_with_their_absence(self) -> None:
        assert sha256_text("a\udc80b") != sha256_text("ab")


class TestFileHashes:
    def test_bytes_hash_hashes_raw_bytes_even_when_they_are_not_utf8(self) -> None:
        data = b'{"role":"user"}\n\xff\xfe'
        assert bytes_hash(data) == hashlib.sha256(data).hexdigest()


class TestChunkId:
    def test_is_the_hash_of_the_colon_joined_fields(self) -> None:
        expected = ChunkId(sha256_text("memory:notes/a.md:3:9:abc123:2"))
        assert chunk_id("memory", "notes/a.md", 3, 9, "abc123", 2) == expected

    def test_identical_chunks_at_different_positions_get_distinct_ids(self) -> None:
        first = chunk_id("memory", "a.md", 1, 1, "h", 0)
        second = chunk_id("memory", "a.md", 1, 1, "h", 1)
        assert first != second

    def test_every_field_changes_the_id(self) -> None:
        ids = {
            chunk_id("memory", "a.md", 1, 2, "h", 0),
            chunk_id("sessions", "a.md", 1, 2, "h", 0),
            chunk_id("memory", "b.md", 1, 2, "h", 0),
            chunk_id("memory", "a.md", 0, 2, "h", 0),
            chunk_id("memory", "a.md", 1, 3, "h", 0),
            chunk_id("memory", "a.md", 1, 2, "g", 0),
        }
        assert len(ids) == 6
