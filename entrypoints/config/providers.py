"""Entry points (config, build stage): which embedding provider a configured id names.

memlane's own providers by name; a `models.providers` entry by its `api`, or, with a `baseUrl`,
as an OpenAI-compatible server; the reference's OpenAI-compatible ids (LM Studio's at its
default port). build.py asks `choose` for the provider and for the fallback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, get_args

from memlane.domain.config import (
    ProviderEndpoint,
    ProviderName,
    SecretRef,
)
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.keys import COMPATIBLE_PROVIDER_IDS, LMSTUDIO_BASE_URL
from memlane.entrypoints.config.validate import RawEndpoint

_MEMLANE_PROVIDERS: Final[tuple[str, ...]] = get_args(ProviderName)
# The entries a memlane provider reads, in order (the reference keys Gemini's under `google`).
_ENTRY_NAMES: Final[Mapping[str, tuple[str, ...]]] = {
    "openai": ("openai",),
    "gemini": ("gemini", "google"),
    "voyage": ("voyage",),
    "mistral": ("mistral",),
    "ollama": ("ollama",),
}
# `api` values of a custom entry that mean "an OpenAI-compatible HTTP API".
_OPENAI_APIS: Final = frozenset({"openai", "openai-completions", "openai-responses"})


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """What a configured provider id means for memlane."""

    provider: ProviderName
    alias: str  # the id as written when it differs from `provider`, else ""
    endpoints: tuple[tuple[str, ProviderEndpoint], ...]


def choose(
    written: str | None,
    origin: str,
    providers: Mapping[str, RawEndpoint],
    remote_base_url: str | None,
) -> ProviderChoice:
    """Map the configured `provider` onto a memlane provider and its endpoints.

    Raises:
        ConfigError: an id that is neither memlane's, OpenAI-compatible nor a models.providers
            entry memlane can drive; `openai-compatible` without any base URL.
    """
    known = {
        name: _endpoint(providers[entry], isolated=False)
        for name, entries in _ENTRY_NAMES.items()
        for entry in reversed(entries)  # the first name wins: written last
        if entry in providers
    }
    value = written or "auto"
    if value in _MEMLANE_PROVIDERS:
        return ProviderChoice(_member(value), "", tuple(known.items()))
    entry = providers.get(value)
    api = entry.api if entry is not None else None
    if api is not None and api in _ENTRY_NAMES and api != "openai" and entry is not None:
        known[api] = _endpoint(entry, isolated=False)
        return ProviderChoice(_member(api), value, tuple(known.items()))
    if value in COMPATIBLE_PROVIDER_IDS or (
        entry is not None and (api is None or api in _OPENAI_APIS)
    ):
        base = (
            _endpoint(entry, isolated=True)
            if entry is not None
            else ProviderEndpoint(isolated=True)
        )
        if not (base.base_url or remote_base_url):
            if value != "lmstudio":
                raise ConfigError(
                    origin,
                    f"provider {value!r} needs a base URL: set memorySearch.remote.baseUrl or "
                    f"models.providers.{value}.baseUrl",
                )
            base = ProviderEndpoint(
                base_url=LMSTUDIO_BASE_URL,
                api_key=base.api_key,
                api_key_ref=base.api_key_ref,
                headers=base.headers,
                isolated=True,
            )
        known["openai"] = base
        return ProviderChoice("openai", value, tuple(known.items()))
    allowed = ", ".join(repr(p) for p in (*_MEMLANE_PROVIDERS, *COMPATIBLE_PROVIDER_IDS))
    hint = f" (models.providers.{value}.api is {api!r})" if entry is not None else ""
    raise ConfigError(
        origin,
        f"unsupported provider {value!r}{hint}: use one of {allowed}, or a models.providers id "
        "with a baseUrl",
    )


def _endpoint(raw: RawEndpoint, *, isolated: bool) -> ProviderEndpoint:
    key = raw.api_key
    return ProviderEndpoint(
        base_url=raw.base_url,
        api_key=key if isinstance(key, str) else None,
        api_key_ref=key if isinstance(key, SecretRef) else None,
        headers=raw.headers,
        isolated=isolated,
    )


def _member(name: str) -> ProviderName:
    members: tuple[ProviderName, ...] = get_args(ProviderName)
    for member in members:
        if member == name:
            return member
    raise AssertionError(name)
