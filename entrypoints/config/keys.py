"""Entry points: the key table, one row per configuration key memlane reads.

The table is the single declaration every stage and every published form derives from: the
validate stage checks values against a row's kind and choices, the merge stage fills unset keys
with the row's default and clamps numbers to its range, and schema.py publishes the JSON Schema
(`memlane config schema`), the README key list and the effective settings of `status --json`.
A row's default is read from the domain's settings objects (`field`), the only place a default is
written. The order here is the order the README and the schema show.

What a row is (`Key`) and the four large sections are written in key_table/ (`row.py`,
`embedding.py`, `store.py`, `sync.py`, `query.py`); the short sections (what is indexed, cache,
redaction, transcripts, the `memory` block) are written here, where the whole order is seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias, get_args

from memlane.domain.config import CitationsMode
from memlane.entrypoints.config.key_table.embedding import EMBEDDING_KEYS
from memlane.entrypoints.config.key_table.query import QUERY_KEYS
from memlane.entrypoints.config.key_table.row import BOOL, INT, MAX_SAFE_INT, NUM, STR, Key
from memlane.entrypoints.config.key_table.store import CHUNKING_KEYS, STORE_KEYS
from memlane.entrypoints.config.key_table.sync import SYNC_KEYS

# `Key` is named here too: the stages and schema.py read rows through this module.
__all__ = ["KEYS_BY_PATH", "MEMORY_KEYS", "MEMORY_SEARCH_KEYS", "Key", "KeyTree", "key_tree"]

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
    *STORE_KEYS,
    *CHUNKING_KEYS,
    *SYNC_KEYS,
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
