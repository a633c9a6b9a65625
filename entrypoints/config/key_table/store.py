"""Entry points, the key table's index section: where the index is stored
(`memorySearch.store.*`) and how notes and transcripts are cut into chunks (`chunking.*`).

Its own module so the rows that decide what the index file holds sit together, apart from
how it is searched (query.py) and kept up to date (sync.py).
"""

from __future__ import annotations

from typing import Final

from memlane.entrypoints.config.key_table.row import BOOL, INT, MAX_SAFE_INT, STR, Key

STORE_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "store.driver",
        "choice",
        "Index storage: one SQLite file per agent, or a shared PostgreSQL database.",
        "store.driver",
        choices=("sqlite", "postgres"),
    ),
    Key(
        "store.url",
        "secret",
        'PostgreSQL URL (driver postgres), or {"source": "env", "id": "VAR"}; '
        "else MEMLANE_STORE_URL.",
    ),
    Key(
        "store.path",
        STR,
        "Index file; `{agentId}` is replaced; default `<state>/agents/<id>/memory.db`.",
        "store.path",
    ),
    Key("store.vector.enabled", BOOL, "Load sqlite-vec.", "store.vector_enabled"),
    Key(
        "store.vector.extensionPath",
        STR,
        "Accepted and ignored.",
        ignored="memlane loads the sqlite-vec build of its own Python package",
    ),
    Key(
        "store.fts.tokenizer",
        "choice",
        "Accepted and ignored.",
        choices=("unicode61", "trigram"),
        ignored="memlane splits CJK text into bigrams itself; its keyword tokenizer is fixed",
    ),
)

CHUNKING_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "chunking.tokens",
        INT,
        "Note chunk size in tokens.",
        "chunking.tokens",
        low=1,
        high=MAX_SAFE_INT,
    ),
    Key(
        "chunking.overlap",
        INT,
        "Note chunk overlap (below the size).",
        "chunking.overlap",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "chunking.sessionTokens",
        INT,
        "Transcript chunk size in tokens.",
        "session_chunking.tokens",
        low=1,
        high=MAX_SAFE_INT,
    ),
    Key(
        "chunking.sessionOverlap",
        INT,
        "Transcript chunk overlap (below the size).",
        "session_chunking.overlap",
        low=0,
        high=MAX_SAFE_INT,
    ),
)
