"""Entry points, configuration stage 4, part: what a configured provider id (`provider`, and
`fallback` alike) means for memlane, a provider and its `models.providers` endpoints (`choose`):

- a known provider (`openai`, `gemini` (or its `google` entry), `voyage`, `mistral`, `ollama`)
  takes its own entry, read below `memorySearch.remote.*` as the reference reads it;
- `openai-compatible`, `lmstudio` and any custom id with an entry are OpenAI-compatible servers:
  memlane's `openai` provider at that entry's (or `remote`'s) base URL, inheriting no
  OPENAI_API_KEY and needing no key (LM Studio defaults to http://127.0.0.1:1234/v1); a custom
  entry whose `api` is `ollama` (or another memlane provider) is driven by that provider.

Separate from build.py because it is the one rule that reads the host's `models.providers`
beside memlane's keys. It takes plain values, so it calls no other module of the package; the
two small readers it needs (`named`, `split_secret`) are defined here and build.py uses them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, TypeAlias, TypeVar, get_args

from memlane.domain.config import FallbackName, ProviderEndpoint, ProviderName, SecretRef
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.key_table.embedding import (
    COMPATIBLE_PROVIDER_IDS,
    LMSTUDIO_BASE_URL,
)
from memlane.entrypoints.config.validating.models_providers import RawEndpoint

_Name = TypeVar("_Name", bound=str)
Endpoints: TypeAlias = tuple[tuple[str, ProviderEndpoint], ...]
_PROVIDERS: Final[tuple[ProviderName, ...]] = get_args(ProviderName)
_FALLBACKS: Final[tuple[FallbackName, ...]] = get_args(FallbackName)
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
    endpoints: Endpoints


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
        name: _endpoint(providers[entry], False)
        for name, entries in _ENTRY_NAMES.items()
        for entry in reversed(entries)  # the first name wins: written last
        if entry in providers
    }
    value = written or "auto"
    if value in _PROVIDERS:
        return ProviderChoice(named(value, _PROVIDERS), "", tuple(known.items()))
    entry = providers.get(value)
    api = entry.api if entry is not None else None
    if api is not None and api in _ENTRY_NAMES and api != "openai" and entry is not None:
        known[api] = _endpoint(entry, False)
        return ProviderChoice(named(api, _PROVIDERS), value, tuple(known.items()))
    if value in COMPATIBLE_PROVIDER_IDS or (
        entry is not None and (api is None or api in _OPENAI_APIS)
    ):
        base = ProviderEndpoint(isolated=True) if entry is None else _endpoint(entry, True)
        if not (base.base_url or remote_base_url):
            if value != "lmstudio":
                raise ConfigError(
                    origin,
                    f"provider {value!r} needs a base URL: set memorySearch.remote.baseUrl or "
                    f"models.providers.{value}.baseUrl",
                )
            base = replace(base, base_url=LMSTUDIO_BASE_URL)
        known["openai"] = base
        return ProviderChoice("openai", value, tuple(known.items()))
    allowed = ", ".join(repr(p) for p in (*_PROVIDERS, *COMPATIBLE_PROVIDER_IDS))
    hint = f" (models.providers.{value}.api is {api!r})" if entry is not None else ""
    raise ConfigError(
        origin,
        f"unsupported provider {value!r}{hint}: use one of {allowed}, or a models.providers id "
        "with a baseUrl",
    )


def _endpoint(raw: RawEndpoint, isolated: bool) -> ProviderEndpoint:
    api_key, api_key_ref = split_secret(raw.api_key)
    return ProviderEndpoint(
        base_url=raw.base_url,
        api_key=api_key,
        api_key_ref=api_key_ref,
        headers=raw.headers,
        isolated=isolated,
    )


def choose_fallback(
    written: str | None,
    origin: str,
    providers: Mapping[str, RawEndpoint],
    remote_base_url: str | None,
) -> tuple[FallbackName, str, Endpoints]:
    """Resolve `fallback` exactly as `provider` is resolved (memlane's ids, `openai-compatible`,
    `lmstudio`, a models.providers id with a base URL), to a provider that can stand in.

    Raises:
        ConfigError: an id `provider` would refuse, or `auto` (a fallback names one provider).
    """
    value = (written or "").strip() or "none"
    if value == "none":
        return "none", "", ()
    choice = choose(value, origin, providers, remote_base_url)
    name = named(choice.provider, _FALLBACKS)
    if name != choice.provider or name == "none":
        allowed = ", ".join(repr(p) for p in _FALLBACKS)
        raise ConfigError(
            origin,
            f"a fallback names one provider: {allowed}, an OpenAI-compatible id or a "
            f"models.providers id, not {value!r}",
        )
    return name, choice.alias, choice.endpoints


def named(value: str | None, names: tuple[_Name, ...]) -> _Name:
    """The Literal member equal to `value` (validated already), else the first (the default)."""
    return next((name for name in names if name == value), names[0])


def split_secret(value: object) -> tuple[str | None, SecretRef | None]:
    """A secret as written: (the string, None) or (None, the env reference); empty: neither."""
    if isinstance(value, SecretRef):
        return None, value
    return (value or None) if isinstance(value, str) else None, None
