"""Entry points, a part of the driver: what the environment adds when a provider or the store is
used. The container calls these when it builds a provider or opens the PostgreSQL store, not
while the configuration is resolved: a key is read only where it is needed.
"""

from __future__ import annotations

from collections.abc import Mapping

from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.domain.providers import provider_info
from memlane.entrypoints.config.read import ENV_STORE_URL, env_value


def api_key_for(provider: str, settings: MemorySettings, env: Mapping[str, str]) -> str | None:
    """Return the API key for `provider`.

    Order, as in the reference: `remote.apiKey` (or its env ref) > `models.providers.<id>.apiKey`
    > the provider's environment variables (not for an isolated OpenAI-compatible endpoint).
    Returns None when no key is found (the caller then tries the next provider or goes
    keyword-only) and always for `local` / `none` / `auto`, which need no key themselves.

    Raises:
        ConfigError: a key refers to an environment variable that is not set.
    """
    try:
        key_env = provider_info(provider).key_env
    except KeyError:
        return None
    if not key_env:
        return None
    endpoint = settings.endpoint(provider)
    levels = [
        ("memorySearch.remote.apiKey", settings.remote.api_key, settings.remote.api_key_ref),
    ]
    if endpoint is not None:
        levels.append(
            (f"models.providers.{provider}.apiKey", endpoint.api_key, endpoint.api_key_ref)
        )
    for key, value, ref in levels:
        if value:
            return value
        if ref is not None:
            found = env_value(env, ref.id)
            if found is None:
                raise ConfigError(key, f"environment variable {ref.id} is not set")
            return found
    if endpoint is not None and endpoint.isolated:
        return None
    for name in key_env:
        value = env_value(env, name)
        if value is not None:
            return value
    return None


def store_url_for(settings: MemorySettings, env: Mapping[str, str]) -> str:
    """Return the PostgreSQL URL: config `store.url` (or its env ref) > `MEMLANE_STORE_URL`.

    The URL may omit the password: libpq then reads `PGPASSWORD` or `~/.pgpass` itself.

    Raises:
        ConfigError: no URL is configured, or the env ref names an unset variable.
    """
    store = settings.store
    if store.url:
        return store.url
    if store.url_ref is not None:
        value = env_value(env, store.url_ref.id)
        if value is None:
            raise ConfigError(
                "memorySearch.store.url", f"environment variable {store.url_ref.id} is not set"
            )
        return value
    value = env_value(env, ENV_STORE_URL)
    if value is None:
        raise ConfigError(
            "memorySearch.store.url",
            f'store.driver "postgres" needs store.url or {ENV_STORE_URL} (postgresql://...)',
        )
    return value


def base_url_for(provider: str, settings: MemorySettings, env: Mapping[str, str]) -> str | None:
    """Return the base URL: `remote.baseUrl` > `models.providers.<id>.baseUrl` > the provider's
    `base_url_env` > None.

    None means the adapter's own default. `OLLAMA_HOST` may omit the scheme (`host:port`), as
    the Ollama CLI allows; `http://` is added then.
    """
    if settings.remote.base_url:
        return settings.remote.base_url
    endpoint = settings.endpoint(provider)
    if endpoint is not None and endpoint.base_url:
        return endpoint.base_url
    try:
        info = provider_info(provider)
    except KeyError:
        return None
    found = env_value(env, info.base_url_env) if info.base_url_env else None
    if found is None or not info.base_url_env_is_host or "://" in found:
        return found
    return f"http://{found}"


def headers_for(provider: str, settings: MemorySettings) -> dict[str, str]:
    """Request headers: the host config's provider headers, then `remote.headers` (later wins)."""
    endpoint = settings.endpoint(provider)
    merged = dict(endpoint.headers) if endpoint is not None else {}
    merged.update(settings.remote.headers)
    return merged


def key_optional(provider: str, settings: MemorySettings) -> bool:
    """True for an isolated OpenAI-compatible endpoint: local servers often take no key."""
    endpoint = settings.endpoint(provider)
    return endpoint is not None and endpoint.isolated
