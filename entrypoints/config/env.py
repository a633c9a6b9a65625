"""Entry points: what the environment contributes to the configuration.

Environment variables read here (all optional; empty values count as unset):

| variable | effect |
|---|---|
| `MEMLANE_CONFIG` | config file path |
| `MEMLANE_STATE_DIR` | state directory (default `~/.memlane`) |
| `MEMLANE_WORKSPACE` | workspace directory (below `--workspace`, above the config) |
| `MEMLANE_AGENT` | agent id (below `--agent`) |
| `OPENCLAW_STATE_DIR` | the reference system's state directory: its `openclaw.json` is the config file when neither `--config` nor `MEMLANE_CONFIG` names one (and a `~/.memlane/config.json5` does not exist); its transcripts and workspace are the defaults |
| `MEMLANE_PROVIDER`, `MEMLANE_MODEL`, `MEMLANE_FALLBACK` | `memorySearch.provider` / `.model` / `.fallback` |
| each provider's `key_env` (domain/providers.py: `OPENAI_API_KEY`, `GEMINI_API_KEY` then `GOOGLE_API_KEY`, ...) | the provider's key when the config sets no `remote.apiKey` |
| each provider's `base_url_env` (`OPENAI_BASE_URL`, `OLLAMA_HOST`) | the base URL when the config sets no `remote.baseUrl` (the variables those vendors' own tools read) |
| `MEMLANE_STORE_URL` | the PostgreSQL URL when `store.driver` is `postgres` and the config sets no `store.url` |
| `HOME` | what `~` expands to |
"""  # noqa: E501 (the table is easier to read unwrapped)

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

import structlog

from memlane.application.progress import DEFAULT_LOG_EVERY_SECONDS
from memlane.domain.config import MemorySettings
from memlane.domain.errors import ConfigError
from memlane.domain.providers import provider_info

ENV_CONFIG: Final = "MEMLANE_CONFIG"
ENV_STATE_DIR: Final = "MEMLANE_STATE_DIR"
ENV_WORKSPACE: Final = "MEMLANE_WORKSPACE"
ENV_AGENT: Final = "MEMLANE_AGENT"
ENV_REFERENCE_STATE_DIR: Final = "OPENCLAW_STATE_DIR"
ENV_STORE_URL: Final = "MEMLANE_STORE_URL"

# memorySearch keys that plain environment variables override.
ENV_OVERRIDES: Final[Mapping[str, str]] = {
    "MEMLANE_PROVIDER": "provider",
    "MEMLANE_MODEL": "model",
    "MEMLANE_FALLBACK": "fallback",
}


def env_overrides(env: Mapping[str, str]) -> dict[str, object]:
    """Return the memorySearch overrides given by `MEMLANE_PROVIDER`/`_MODEL`/`_FALLBACK`."""
    return {key: env[name] for name, key in ENV_OVERRIDES.items() if env_value(env, name)}


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


def expand_user(value: str, env: Mapping[str, str] | None = None) -> Path:
    """Expand a leading `~` with `$HOME` from `env` (else the real home directory)."""
    if value == "~" or value.startswith("~/"):
        home = env_value(env or {}, "HOME")
        base = Path(home) if home else Path.home()
        return base / value[2:] if value != "~" else base
    return Path(value).expanduser()


def env_value(env: Mapping[str, str], name: str) -> str | None:
    """The variable's value, stripped; None when it is unset or blank."""
    value = env.get(name, "").strip()
    return value or None


def progress_every_seconds(env: Mapping[str, str]) -> float:
    """Seconds between plain progress lines (MEMLANE_PROGRESS_SECONDS, 10 by default): the CLI's
    lines on a pipe and the log lines of a sync nobody draws read the same value. A value that
    is not a number is said on stderr, then the default is used."""
    raw = env.get("MEMLANE_PROGRESS_SECONDS")
    if raw is None:
        return DEFAULT_LOG_EVERY_SECONDS
    try:
        return max(0.0, float(raw))
    except ValueError:
        structlog.get_logger(__name__).warning(
            "setting_ignored",
            variable="MEMLANE_PROGRESS_SECONDS",
            value=raw,
            reason=f"not a number; using {DEFAULT_LOG_EVERY_SECONDS:g} s",
        )
        return DEFAULT_LOG_EVERY_SECONDS
