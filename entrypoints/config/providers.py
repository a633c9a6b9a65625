"""Entry points: `models.providers` and the provider ids of the reference that memlane maps.

The reference's config names model endpoints once, under `models.providers.<id>`
(`baseUrl`, `apiKey`, `headers`, `api`), and its embedding providers read them below
`memorySearch.remote.*`. memlane does the same, per memlane provider:

- a known provider (`openai`, `gemini` (or its `google` entry), `voyage`, `mistral`, `ollama`)
  takes its own entry;
- `openai-compatible`, `lmstudio` and any custom id with an entry are OpenAI-compatible servers:
  memlane's `openai` provider at that entry's (or `remote`'s) base URL, inheriting no
  OPENAI_API_KEY and needing no key (LM Studio defaults to http://127.0.0.1:1234/v1); a custom
  entry whose `api` is `ollama` (or another memlane provider) is driven by that provider.

Other keys of an entry (`models`, `auth`...) belong to the chat side and are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, get_args

from memlane.domain.config import ProviderEndpoint, ProviderName, SecretRef
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.expand import UNRESOLVED
from memlane.entrypoints.config.keys import COMPATIBLE_PROVIDER_IDS, LMSTUDIO_BASE_URL

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
class RawEndpoint:
    """One validated `models.providers.<id>` entry, as far as embeddings use it."""

    path: str
    base_url: str | None
    api_key: str | SecretRef | None
    headers: tuple[tuple[str, str], ...]
    api: str | None

    def endpoint(self, *, isolated: bool) -> ProviderEndpoint:
        key = self.api_key
        return ProviderEndpoint(
            base_url=self.base_url,
            api_key=key if isinstance(key, str) else None,
            api_key_ref=key if isinstance(key, SecretRef) else None,
            headers=self.headers,
            isolated=isolated,
        )


def parse_providers(models: object) -> dict[str, RawEndpoint]:
    """Validate the embedding-relevant fields of `models.providers`; other fields are skipped.

    Raises:
        ConfigError: a field of the wrong type, named by its full path.
    """
    if models is None:
        return {}
    if not isinstance(models, Mapping):
        raise ConfigError("models", "must be an object")
    providers = models.get("providers")
    if providers is None:
        return {}
    if not isinstance(providers, Mapping):
        raise ConfigError("models.providers", "must be an object")
    parsed: dict[str, RawEndpoint] = {}
    for ident, entry in providers.items():
        path = f"models.providers.{ident}"
        if not isinstance(entry, Mapping):
            raise ConfigError(path, "must be an object")
        headers = entry.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(
            isinstance(v, str) for v in headers.values()
        ):
            raise ConfigError(f"{path}.headers", "must be an object of string values")
        parsed[str(ident)] = RawEndpoint(
            path=path,
            base_url=_text(entry.get("baseUrl"), f"{path}.baseUrl"),
            api_key=_key(entry.get("apiKey"), f"{path}.apiKey"),
            headers=tuple((str(k), str(v)) for k, v in headers.items()),
            api=_text(entry.get("api"), f"{path}.api"),
        )
    return parsed


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
        name: providers[entry].endpoint(isolated=False)
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
        known[api] = entry.endpoint(isolated=False)
        return ProviderChoice(_member(api), value, tuple(known.items()))
    if value in COMPATIBLE_PROVIDER_IDS or (
        entry is not None and (api is None or api in _OPENAI_APIS)
    ):
        base = (
            entry.endpoint(isolated=True) if entry is not None else ProviderEndpoint(isolated=True)
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


def _member(name: str) -> ProviderName:
    members: tuple[ProviderName, ...] = get_args(ProviderName)
    for member in members:
        if member == name:
            return member
    raise AssertionError(name)


def _text(value: object, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(path, "must be a string")
    return value.strip() or None


def _key(value: object, path: str) -> str | SecretRef | None:
    """A key string, an env SecretRef, or a `${VAR}` left for when the provider is used."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        source, ident = value.get("source"), value.get("id")
        if source != "env" or not isinstance(ident, str) or not ident:
            raise ConfigError(path, "only {source: 'env', id: 'VAR'} references are supported")
        return SecretRef(source="env", id=ident)
    if not isinstance(value, str):
        raise ConfigError(path, "must be a string or an env secret reference")
    unresolved = UNRESOLVED.match(value.strip())
    if unresolved:
        return SecretRef(source="env", id=unresolved.group(1))
    return value.strip() or None
