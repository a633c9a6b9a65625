"""Entry points: the key table, one row per configuration key memlane reads.

The table is the single declaration every stage and every published form derives from: the
validate stage checks values against a row's kind and choices, the merge stage fills unset keys
with the row's default and clamps numbers to its range, and schema.py publishes the JSON Schema
(`memlane config schema`), the README key list and the effective settings of `status --json`.
A row's default is read from the domain's settings objects (`field`), the only place a default is
written. The order here is the order the README and the schema show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias, get_args

from memlane.domain.config import (
    CitationsMode,
)
from memlane.entrypoints.config.key_model import (
    BOOL,
    COMPATIBLE_PROVIDER_IDS,
    INT,
    LMSTUDIO_BASE_URL,
    MAX_SAFE_INT,
    NUM,
    STR,
    Key,
)
from memlane.entrypoints.config.keys_embedding import EMBEDDING_KEYS
from memlane.entrypoints.config.keys_query import QUERY_KEYS

__all__ = [
    "COMPATIBLE_PROVIDER_IDS",
    "EMBEDDING_KEYS",
    "KEYS_BY_PATH",
    "LMSTUDIO_BASE_URL",
    "MEMORY_KEYS",
    "MEMORY_SEARCH_KEYS",
    "QUERY_KEYS",
    "Key",
    "KeyTree",
    "key_tree",
]

# --- every memorySearch key, then the memory block ----------------------------------------

MEMORY_SEARCH_KEYS: Final[tuple[Key, ...]] = (
    Key("enabled", BOOL, "Index and search this agent's memory.", "enabled"),
    Key(
        "sources",
        "choices",
        "What to index; an empty list means memory only.",
        "sources",
        choices=("memory", "sessions"),
    ),
    Key(
        "experimental.sessionMemory",
        BOOL,
        "Accepted for compatibility; `sessions` works without it.",
        fixed_default=False,
    ),
    Key(
        "extraPaths",
        "strings",
        "More folders or files of notes (merged across levels).",
        "extra_paths",
    ),
    Key(
        "multimodal.enabled",
        BOOL,
        "Accepted; `true` is reported and ignored (notes only).",
        fixed_default=False,
    ),
    Key(
        "multimodal.modalities", "choices", "Accepted, not used.", choices=("image", "audio", "all")
    ),
    Key("multimodal.maxFileBytes", NUM, "Accepted, not used."),
    *EMBEDDING_KEYS,
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
    Key("sync.onSessionStart", BOOL, "Sync when a session starts.", "sync.on_session_start"),
    Key(
        "sync.onSearch",
        BOOL,
        "Sync before searching (the CLI scans the files; servers sync when marked dirty).",
        "sync.on_search",
    ),
    Key("sync.watch", BOOL, "Watch the files and sync on change.", "sync.watch"),
    Key(
        "sync.watchDebounceMs",
        INT,
        "Quiet time before a watched change syncs.",
        "sync.watch_debounce_ms",
        low=0,
        high=3_600_000,
    ),
    Key(
        "sync.intervalMinutes",
        INT,
        "Periodic sync; 0 is off.",
        "sync.interval_minutes",
        low=0,
        high=525_600,
    ),
    Key(
        "sync.firstSearchWaitMs",
        INT,
        "How long the first search on a new index waits for the first sync.",
        "sync.first_search_wait_ms",
        low=0,
        high=600_000,
    ),
    Key(
        "sync.maxDeletePercent",
        NUM,
        "A sync that would remove more than this percent of one source's indexed files (two "
        "or more) stops and asks for `memlane index --allow-mass-delete` (a wrong or unmounted "
        "workspace); 100 turns the guard off.",
        "sync.max_delete_percent",
        low=0,
        high=100,
    ),
    Key(
        "sync.sessions.deltaBytes",
        INT,
        "Transcript growth in bytes that triggers a sync.",
        "sync.sessions.delta_bytes",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "sync.sessions.deltaMessages",
        INT,
        "Transcript growth in messages that triggers a sync.",
        "sync.sessions.delta_messages",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "sync.sessions.postCompactionForce",
        BOOL,
        "Accepted and ignored.",
        fixed_default=True,
        ignored="a rewritten (compacted) transcript is always reindexed: only growth waits for "
        "the delta thresholds",
    ),
    Key(
        "sync.embeddingBatchTimeoutSeconds",
        NUM,
        "The reference's name for `remote.timeoutSeconds` (which wins when both are set).",
        low=1,
        high=3600,
    ),
    *QUERY_KEYS,
    Key("cache.enabled", BOOL, "Cache embeddings by content hash.", "cache.enabled"),
    Key("cache.maxEntries", INT, "Cache size cap.", "cache.max_entries", low=1, high=MAX_SAFE_INT),
    Key("redaction.enabled", BOOL, "Mask secrets before indexing.", "redaction.enabled"),
    Key(
        "redaction.extraPatterns",
        "patterns",
        "More regular expressions to mask.",
        "redaction.extra_patterns",
    ),
    Key(
        "redaction.notes",
        BOOL,
        "Also mask secrets in markdown notes (transcripts always are).",
        "redaction.notes",
    ),
    Key(
        "sessions.dir",
        STR,
        "Transcripts folder; default `<state>/agents/<id>/sessions`.",
        "sessions_dir",
    ),
    Key(
        "qmd",
        "opaque",
        "Accepted and ignored (the QMD backend's per-agent settings).",
        ignored="memlane has no QMD backend",
    ),
)

MEMORY_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "backend",
        "choice",
        "`qmd` is reported and the builtin index is used.",
        choices=("builtin", "qmd"),
        fixed_default="builtin",
    ),
    Key(
        "citations",
        "choice",
        "Cite sources in tool results.",
        "citations",
        choices=get_args(CitationsMode),
    ),
    Key("qmd", "opaque", "Tolerated and ignored."),
)

KEYS_BY_PATH: Final[Mapping[str, Key]] = {key.path: key for key in MEMORY_SEARCH_KEYS}
MEMORY_KEYS_BY_PATH: Final[Mapping[str, Key]] = {key.path: key for key in MEMORY_KEYS}


KeyTree: TypeAlias = Mapping[str, "KeyTree | Key"]


def key_tree(keys: Sequence[Key], prefix: str = "") -> KeyTree:
    """Nest the table's dotted paths into the shape they are written in, in table order."""
    tree: dict[str, KeyTree | Key] = {}
    groups: dict[str, list[Key]] = {}
    for key in keys:
        head, dot, _ = key.path.removeprefix(prefix).partition(".")
        if dot:
            tree.setdefault(head, {})  # holds the place; filled below
            groups.setdefault(head, []).append(key)
        else:
            tree[head] = key
    for head, members in groups.items():
        tree[head] = key_tree(members, f"{prefix}{head}.")
    return tree
