"""Domain: vector arithmetic and input-size rules for embeddings."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from typing import Final

from memlane.domain.chunking import UNITS_PER_TOKEN, char_units, estimate_tokens


def sanitize_and_normalize(vector: Sequence[float]) -> list[float]:
    """Replace non-finite components by 0 and scale to unit L2 norm (a ~zero vector is kept)."""
    clean = [x if math.isfinite(x) else 0.0 for x in vector]
    norm = math.sqrt(math.fsum(x * x for x in clean))
    if norm < 1e-10:
        return clean
    return [x / norm for x in clean]


def _char_utf8_len(ch: str) -> int:
    code = ord(ch)
    if code < 0x80:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3  # a lone surrogate counts 3, as the U+FFFD replacing it would
    return 4


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _units(text: str) -> Iterator[tuple[int, int]]:
    """Yield (length in str items, UTF-8 bytes) per code point; a surrogate pair is one."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if "\ud800" <= ch <= "\udbff" and i + 1 < n and "\udc00" <= text[i + 1] <= "\udfff":
            yield 2, 4
            i += 2
        else:
            yield 1, _char_utf8_len(ch)
            i += 1


def utf8_len(text: str) -> int:
    """UTF-8 byte length of `text` (an upper bound on its token count).

    A str decoded with `surrogatepass` may hold surrogate pairs: a pair counts as the 4-byte
    character it stands for, a lone surrogate as 3 bytes.
    """
    if _SURROGATE.search(text) is None:
        return len(text.encode("utf-8"))
    return sum(size for _, size in _units(text))


def split_to_utf8_limit(text: str, max_bytes: int) -> list[str]:
    """Split `text` greedily into pieces of at most `max_bytes` UTF-8 bytes each.

    `"".join(pieces) == text` always. A code point is never cut, nor a surrogate pair. A single
    character wider than `max_bytes` forms its own piece. `max_bytes` ≤ 0 or a text that fits →
    `[text]`.
    """
    if max_bytes <= 0 or utf8_len(text) <= max_bytes:
        return [text]
    pieces: list[str] = []
    start = end = size = 0
    for length, width in _units(text):
        if size + width > max_bytes and end > start:
            pieces.append(text[start:end])
            start, size = end, 0
        size += width
        end += length
    pieces.append(text[start:])
    return pieces


# No single embedding input exceeds this many UTF-8 bytes whatever the provider says: bytes bound
# tokens from above, so a piece this size fits every provider's window.
HARD_MAX_INPUT_BYTES: Final = 8000


# A query is embedded up to this many estimated tokens (~500 characters, a long paragraph; the
# model's window if smaller). The local model's cost grows faster than linearly with length
# (~0.5 s for a 400-token passage on 2 cores, bench/RESULTS.md) and a query's meaning is in its
# first sentences; ordinary queries are far shorter and reach the model unchanged.
MAX_QUERY_EMBED_TOKENS: Final = 128


def query_embedding_input(text: str, max_tokens: int) -> str:
    """The part of a query that is embedded: the query itself when it fits, else its start.

    A query within HARD_MAX_INPUT_BYTES and min(`max_tokens`, MAX_QUERY_EMBED_TOKENS) estimated
    tokens is returned unchanged. A longer one is cut to that window: a model that windows long
    inputs itself (the local one) would otherwise embed a pasted page window by window (134.6 s
    for 100 KB), and a remote one would reject it. A code point or surrogate pair is never cut.
    """
    limit = max(1, min(max_tokens, MAX_QUERY_EMBED_TOKENS))
    # Every character is at least one byte: a prefix this long holds all the bytes kept below.
    head = text[: HARD_MAX_INPUT_BYTES + 1]
    fits = len(head) == len(text) and utf8_len(text) <= HARD_MAX_INPUT_BYTES
    if fits and estimate_tokens(text) <= limit:
        return text
    head = split_to_utf8_limit(head, HARD_MAX_INPUT_BYTES)[0]
    budget = limit * UNITS_PER_TOKEN
    used = end = 0
    while end < len(head):
        used += char_units(head[end])
        if used > budget:
            break
        end += 1
    if end and "\ud800" <= head[end - 1] <= "\udbff":  # keep a surrogate pair whole
        end -= 1
    return head[:end] or head[:1]
