"""Composition: the embedding providers of one agent, built lazily from the settings.

One constructor per provider name (`provider_factories`) and the runtime that selects among
them (`make_runtime`); nothing here calls a provider's API.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from memlane.adapters.embedding.local import LocalEmbeddingProvider
from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.ports.clock import Clock
from memlane.application.ports.embedding import EmbeddingProvider, ProviderNotConfigured
from memlane.application.ports.index_store import IndexStore
from memlane.application.provider_selection import ProviderChoice, choose_provider
from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.domain.index_meta import IndexMeta
from memlane.domain.providers import PROVIDERS
from memlane.entrypoints.config.running.credentials import (
    api_key_for,
    base_url_for,
    headers_for,
    key_optional,
)

if TYPE_CHECKING:
    from memlane.adapters.embedding._http import HttpEmbeddingProvider

ProviderFactory = Callable[[], EmbeddingProvider]

# The HTTP providers (httpx and five API clients) are imported when one is built: a search with
# the bundled model needs none of them (measured in bench/RESULTS.md, the CLI cold start).
# Every HTTP provider, built the same way from one HttpOptions; capabilities are class attributes.
# Provider id -> (module, class); the id is the class's `provider_id` (a unit test checks it).
HTTP_PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("memlane.adapters.embedding.openai", "OpenAIEmbeddingProvider"),
    "gemini": ("memlane.adapters.embedding.gemini", "GeminiEmbeddingProvider"),
    "voyage": ("memlane.adapters.embedding.voyage", "VoyageEmbeddingProvider"),
    "mistral": ("memlane.adapters.embedding.mistral", "MistralEmbeddingProvider"),
    "ollama": ("memlane.adapters.embedding.ollama", "OllamaEmbeddingProvider"),
}


def http_provider_class(name: str) -> type[HttpEmbeddingProvider]:
    """The HTTP provider class of `name` (a key of HTTP_PROVIDERS), imported now."""
    module, attribute = HTTP_PROVIDERS[name]
    found: type[HttpEmbeddingProvider] = getattr(importlib.import_module(module), attribute)
    return found


def _meta_reader(store: Callable[[], IndexStore]) -> Callable[[], IndexMeta | None]:
    return lambda: store().meta()


def provider_factories(
    settings: MemorySettings,
    env: Mapping[str, str],
    recorded_meta: Callable[[], IndexMeta | None] | None = None,
) -> dict[str, ProviderFactory]:
    """One constructor per provider name; constructing one never calls its API.

    `recorded_meta` reads the index's meta when the local model is built: its document kernel
    follows what the index was embedded with (`local.documentKernel: auto`).
    """
    remote = settings.remote

    def http(name: str) -> ProviderFactory:
        def build() -> EmbeddingProvider:
            from memlane.adapters.embedding._http_options import HttpOptions

            cls = http_provider_class(name)
            shared = HttpOptions(
                headers=dict(remote.headers),
                timeout=remote.timeout_seconds,
                query_timeout=remote.query_timeout_seconds,
                max_concurrency=remote.max_concurrency,
            )
            # Resolved when built, not before: a missing env secret only matters if selected,
            # and then it is a provider that cannot run (said loudly), not a startup error.
            try:
                api_key = api_key_for(name, settings, env)
            except ConfigError as exc:
                raise ProviderNotConfigured(str(exc)) from exc
            return cls(
                replace(
                    shared,
                    api_key=api_key,
                    # models.providers headers, then remote.headers; a key-less local server
                    headers=headers_for(name, settings),
                    key_optional=key_optional(name, settings),
                    query_input_type=remote.query_input_type,
                    document_input_type=remote.document_input_type,
                    model=settings.model if settings.provider == name else "",
                    base_url=base_url_for(name, settings, env) or "",
                    dimensions=(
                        settings.output_dimensionality if cls.supports_output_dimensions else None
                    ),
                    batch=remote.batch if cls.supports_batch else None,
                )
            )

        return build

    def local() -> EmbeddingProvider:
        path = settings.local.model_path
        if path and path.endswith(".gguf"):
            from memlane.adapters.embedding.gguf import GgufEmbeddingProvider

            return GgufEmbeddingProvider(model_path=path, threads=settings.local.threads)
        meta = recorded_meta() if recorded_meta is not None else None
        recorded = meta.provider_key if meta is not None and meta.provider == "local" else None
        return LocalEmbeddingProvider(
            model_path=path,
            threads=settings.local.threads,
            document_kernel=settings.local.document_kernel,
            recorded_key=recorded,
        )

    factories = {"local": local, **{name: http(name) for name in HTTP_PROVIDERS}}
    if settings.provider_alias:
        # Selected by the id as written, so a fallback mapped onto the same memlane provider
        # (`provider: lmstudio`, `fallback: openai`) is a different provider, not "the same one".
        factories[settings.provider_alias] = factories[settings.provider]
    if settings.fallback != "none" and (settings.fallback_alias or settings.provider_alias):
        # A mapped fallback, or one sharing a memlane name with a mapped provider, runs with its
        # own endpoints (the reference resolves the two ids independently).
        fallback = settings.fallback_settings()
        factories[settings.fallback_id] = provider_factories(fallback, env)[fallback.provider]
    return factories


def _selection(choice: ProviderChoice) -> Selection:
    return Selection(
        provider=choice.provider,
        reason=choice.reason or None,
        fallback_from=choice.fallback_from,
        fallback_reason=choice.fallback_reason,
    )


def provider_config_fingerprint(settings: MemorySettings, env: Mapping[str, str]) -> str:
    """16 hex digits that change with anything deciding which provider runs and how: the
    provider settings (secrets included, hashed) and the variables providers read (keys,
    endpoints). A provider failure recorded under another fingerprint has lost its cause."""
    variables = sorted(
        {name for info in PROVIDERS for name in (*info.key_env, info.base_url_env) if name}
    )
    parts = [
        settings.provider,
        settings.provider_alias,
        settings.model,
        settings.fallback,
        settings.fallback_alias,
        repr(settings.output_dimensionality),
        repr(settings.remote),
        settings.remote.api_key or "",
        repr(settings.remote.headers),
        repr(settings.local),
        repr(settings.endpoints),
        repr(settings.fallback_endpoints),
        *(f"{name}={env.get(name, '')}" for name in variables),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def make_runtime(
    settings: MemorySettings,
    factories: Mapping[str, ProviderFactory],
    clock: Clock | None = None,
    env: Mapping[str, str] | None = None,
) -> EmbeddingRuntime:
    """The lazy provider holder: `none` means keyword-only by request."""
    requested = settings.provider
    # The factory keys provider_factories gives a mapped id (`lmstudio`); other factory sets
    # (tests, benchmarks) know only memlane's names.
    chosen = settings.provider_alias if settings.provider_alias in factories else requested
    fallback_id = settings.fallback_id if settings.fallback_id in factories else settings.fallback
    # A model file named in the settings is set up on purpose: `auto` says when it cannot load.
    configured = frozenset({"local"} if settings.local.model_path else ())

    def select() -> Selection:
        if requested == "none":
            return Selection(provider=None, reason="keyword-only mode requested (provider: none)")
        return _selection(choose_provider(chosen, fallback_id, factories, configured=configured))

    select_fallback = None
    if settings.fallback != "none":
        fallback = fallback_id

        def select_fallback() -> Selection:
            return _selection(choose_provider(fallback, "none", factories))

    return EmbeddingRuntime(
        select,
        select_fallback,
        requested=requested,
        clock=clock,
        cooldown=settings.remote.failure_cooldown_seconds,
        config="" if env is None else provider_config_fingerprint(settings, env),
    )
