"""Application: pick the embedding provider at start-up, or keyword-only mode, with a reason.

`auto` tries, in the order of domain/providers.py, `local` (the bundled offline model, so a
fresh machine gets semantic search without a key — a deliberate difference from the reference,
which only tried an explicitly configured local model file), then `openai`, `gemini`, `voyage`
and `mistral`; `ollama` is never auto-selected. A provider that cannot start here
(ProviderNotConfigured: no key, no model package, wrong platform) is skipped and its reason
kept. Any other EmbeddingError from a remote provider is fatal (the configuration is broken,
silently moving on would hide it).

An explicit provider that fails falls back to `fallback` (when set, not `none` and different);
when every candidate is merely not configured the result is keyword-only mode, never an
exception, and `reason` says why (status shows it).

Factories construct providers; constructors resolve configuration and make no network call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingProvider,
    ProviderNotConfigured,
)
from memlane.domain.errors import ConfigError
from memlane.domain.providers import AUTO_ORDER

ProviderFactory = Callable[[], EmbeddingProvider]


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """The provider that will run (None: keyword-only mode) and why."""

    provider: EmbeddingProvider | None
    reason: str
    requested: str = "auto"
    fallback_from: str | None = None
    fallback_reason: str | None = None

    @property
    def keyword_only(self) -> bool:
        """True when no embedding provider runs and search is keyword-only."""
        return self.provider is None


def choose_provider(
    requested: str,
    fallback: str,
    factories: Mapping[str, ProviderFactory],
    *,
    configured: frozenset[str] = frozenset(),
) -> ProviderChoice:
    """Pick the provider from named factories: `auto` in order, else the named one or its fallback.

    `configured`: providers the user set up on purpose (a local `modelPath`). `auto` still moves
    past one that cannot run, but says so (`fallback_from`), so the setting is not lost quietly.

    Raises:
        ConfigError: `requested` or `fallback` names no known provider.
        EmbeddingError: a provider failed for a reason other than not being configured here
            (for an explicit provider, after its fallback failed too).
    """
    if requested == "auto":
        return _choose_auto(factories, configured)
    if requested not in factories:
        raise ConfigError("provider", f"unknown embedding provider {requested!r}")
    if fallback not in ("none", "", requested) and fallback not in factories:
        raise ConfigError("fallback", f"unknown embedding provider {fallback!r}")
    try:
        provider = factories[requested]()
    except EmbeddingError as first:
        return _fall_back(requested, fallback, first, factories)
    return ProviderChoice(provider, f"{requested} configured", requested=requested)


def _choose_auto(
    factories: Mapping[str, ProviderFactory], configured: frozenset[str]
) -> ProviderChoice:
    skipped: list[str] = []
    failed: tuple[str, str] | None = None  # the first provider set up on purpose that failed
    for name in AUTO_ORDER:
        factory = factories.get(name)
        if factory is None:
            continue
        try:
            provider = factory()
        except EmbeddingError as exc:
            # The offline model is best effort in auto mode; remote failures are configuration
            # bugs, as is a local model the user pointed at that cannot load (said, not raised).
            if not isinstance(exc, ProviderNotConfigured) and name != "local":
                raise
            skipped.append(f"{name}: {exc}")
            if failed is None and name in configured:
                failed = (name, str(exc))
            continue
        why = f"auto: {name} is the first available provider"
        if skipped:
            why += " (skipped " + "; ".join(skipped) + ")"
        return _auto_choice(provider, why, failed)
    return _auto_choice(
        None, "keyword-only: no embedding provider available (" + "; ".join(skipped) + ")", failed
    )


def _auto_choice(
    provider: EmbeddingProvider | None, why: str, failed: tuple[str, str] | None
) -> ProviderChoice:
    if failed is None:
        return ProviderChoice(provider, why)
    return ProviderChoice(provider, why, fallback_from=failed[0], fallback_reason=failed[1])


def _fall_back(
    requested: str,
    fallback: str,
    first: EmbeddingError,
    factories: Mapping[str, ProviderFactory],
) -> ProviderChoice:
    if fallback in ("none", "", requested):
        if isinstance(first, ProviderNotConfigured):
            return ProviderChoice(None, f"keyword-only: {requested}: {first}", requested=requested)
        raise first
    try:
        provider = factories[fallback]()
    except EmbeddingError as second:
        if isinstance(first, ProviderNotConfigured) and isinstance(second, ProviderNotConfigured):
            return ProviderChoice(
                None,
                f"keyword-only: {requested}: {first}; fallback {fallback}: {second}",
                requested=requested,
            )
        # Report the more serious kind: a real failure outranks "not configured here".
        serious = second if isinstance(first, ProviderNotConfigured) else first
        raise type(serious)(
            f"{requested} failed ({first}); fallback {fallback} failed ({second})"
        ) from second
    return ProviderChoice(
        provider,
        f"fallback {fallback} in use: {requested} failed ({first})",
        requested=requested,
        fallback_from=requested,
        fallback_reason=str(first),
    )
