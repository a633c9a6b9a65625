"""Domain: search requests, candidates from the store, and the results handed to callers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from memlane.domain.chunks import ChunkId
from memlane.domain.errors import InvalidQuery
from memlane.domain.sources import Source

# Longer queries are refused. A query is a question, perhaps with a pasted log: 128 Ki characters
# leaves room for a 100 KB paste (answered: only the model's window is embedded and only the
# first keyword terms are searched) and stops a client from sending megabytes per request.
MAX_QUERY_CHARS: Final = 128 * 1024


def check_query_text(text: object) -> str:
    """Return `text` stripped if it is a usable query; raise InvalidQuery saying why not.

    Callers outside the type checker (the Python API, tool payloads, gRPC) may pass anything.
    """
    if not isinstance(text, str):
        raise InvalidQuery(f"query must be a string, not {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"query too long: {len(text)} characters (at most {MAX_QUERY_CHARS})")
    _require_utf8(text)
    stripped = text.strip()
    if not stripped:
        raise InvalidQuery("query required")
    return stripped


def _require_utf8(text: str) -> None:
    """Refuse text holding a lone surrogate: no provider can embed it nor store hold it, and
    the fault is the caller's input (bytes that did not decode, from argv or stdin)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = f"{_not_text(text[exc.start])} at character {exc.start}"
        raise InvalidQuery(f"query is not valid UTF-8 text ({where})") from exc


def _not_text(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # how Python keeps a byte that did not decode (surrogateescape)
        return f"byte 0x{code - 0xDC00:02x}"
    return f"lone surrogate U+{code:04X}"


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A strict filter on when a chunk was written (epoch seconds, both ends inclusive; None:
    open). A chunk passes when its time range overlaps the window; a chunk without a time
    never passes."""

    since: float | None = None
    until: float | None = None

    def bounds(self) -> tuple[float, float]:
        """(since, until) with open ends as -inf / +inf, for a store's query."""
        return (
            -math.inf if self.since is None else self.since,
            math.inf if self.until is None else self.until,
        )

    def holds(self, start: float | None, end: float | None) -> bool:
        """Whether a chunk written over [start, end] passes the filter."""
        if start is None or end is None:
            return False
        since, until = self.bounds()
        return end >= since and start <= until


def check_window(since: float | None, until: float | None) -> TimeWindow | None:
    """The window of `since` / `until` (None when both are open); InvalidQuery when the window
    is empty or a bound is not a finite number."""
    for name, value in (("since", since), ("until", until)):
        raw: object = value
        if raw is not None and (
            isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw)
        ):
            raise InvalidQuery(f"{name} must be a time")
    if since is None and until is None:
        return None
    if since is not None and until is not None and since > until:
        raise InvalidQuery("since is after until: the time window is empty")
    return TimeWindow(since, until)


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search request. `max_results`/`min_score` of None mean "use the configured value".

    `since` / `until` (epoch seconds) filter strictly by when a chunk was written; `as_of`
    (epoch seconds) is when the question is asked, which time words in it are read against
    (None: the clock's now).
    """

    text: str
    max_results: int | None = None
    min_score: float | None = None
    sources: tuple[Source, ...] | None = None
    explain: bool = False
    since: float | None = None
    until: float | None = None
    as_of: float | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A chunk returned by one retrieval leg of the store, before fusion.

    `score` is the leg's own score: cosine similarity in [-1, 1] for the vector leg, the raw
    FTS5 `bm25()` rank (negative, lower is better) for the keyword leg. `file_mtime` is the
    file's modification time (epoch seconds) and `timestamp` the chunk's own write time
    (transcripts); both feed temporal decay. `best_piece` is a note chunk's best piece's cosine
    when the vector leg mixed it into `score` (domain/note_pieces.py), None otherwise.
    """

    chunk_id: ChunkId
    source: Source
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    file_mtime: float | None = None
    timestamp: float | None = None
    time_start: float | None = None
    time_end: float | None = None
    best_piece: float | None = None


@dataclass(frozen=True, slots=True)
class ScoreExplanation:
    """Why a result scored what it did (`--explain`)."""

    vector_score: float | None
    text_score: float | None
    fused_score: float
    decay_factor: float = 1.0
    mmr_rank: int | None = None
    time_boost: float = 1.0  # multiplier from the question's time words (1: none)
    # A note chunk's best piece's cosine, mixed into `vector_score` (None: not mixed).
    best_piece: float | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A hit as search callers and agent tools see it: lines are 1-based and inclusive."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: Source
    citation: str | None = None
    explanation: ScoreExplanation | None = field(default=None, compare=False)
    # The agent whose memory holds the hit: set by searches across agents, None otherwise.
    agent: str | None = None
    # When the text was written: ISO 8601 (UTC), an instant or a `start/end` interval.
    time: str | None = None
    # How far the hit's cosine stands above the query's background, in its standard deviations
    # (domain/confidence.py); None without a vector leg or a cosine for this hit.
    confidence: float | None = field(default=None, compare=False)
