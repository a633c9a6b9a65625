"""Domain: the embedding providers memlane knows, in one table (names, defaults, env variables).

Everything that needs a provider's name, default model, default endpoint or the environment
variables that hold its key reads this table: config validation, the JSON Schema, the adapters'
class attributes, `auto` selection and the container's factories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """One embedding provider: what it is called and what it falls back to when unconfigured."""

    name: str
    default_model: str
    # None: the model runs in process, there is no endpoint.
    default_base_url: str | None
    # Where its API key is looked up when the config sets none, in order.
    key_env: tuple[str, ...] = ()
    # The variable the vendor's own tools read for the endpoint, if any.
    base_url_env: str | None = None
    # That variable may be a bare `host:port` (as OLLAMA_HOST is); `http://` is added then.
    base_url_env_is_host: bool = False
    # Tried by `provider: "auto"` (in table order); ollama needs a running server, so never.
    auto: bool = True


PROVIDERS: Final[tuple[ProviderInfo, ...]] = (
    ProviderInfo("local", "multilingual-e5-small", None),
    ProviderInfo(
        "openai",
        "text-embedding-3-small",
        "https://api.openai.com/v1",
        key_env=("OPENAI_API_KEY",),
        base_url_env="OPENAI_BASE_URL",
    ),
    ProviderInfo(
        "gemini",
        "gemini-embedding-001",
        "https://generativelanguage.googleapis.com/v1beta",
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    ProviderInfo(
        "voyage", "voyage-4-large", "https://api.voyageai.com/v1", key_env=("VOYAGE_API_KEY",)
    ),
    ProviderInfo(
        "mistral", "mistral-embed", "https://api.mistral.ai/v1", key_env=("MISTRAL_API_KEY",)
    ),
    ProviderInfo(
        "ollama",
        "nomic-embed-text",
        "http://127.0.0.1:11434",
        key_env=("OLLAMA_API_KEY",),
        base_url_env="OLLAMA_HOST",
        base_url_env_is_host=True,
        auto=False,
    ),
)

PROVIDER_NAMES: Final[tuple[str, ...]] = tuple(info.name for info in PROVIDERS)
AUTO_ORDER: Final[tuple[str, ...]] = tuple(info.name for info in PROVIDERS if info.auto)


def provider_info(name: str) -> ProviderInfo:
    """Return the table row of `name`.

    Raises:
        KeyError: `name` is not a provider (`auto` and `none` are modes, not providers).
    """
    for info in PROVIDERS:
        if info.name == name:
            return info
    raise KeyError(name)


def default_model(name: str) -> str:
    """The model a provider uses when the config names none; '' for `auto` and `none`."""
    try:
        return provider_info(name).default_model
    except KeyError:
        return ""


# Models that only produce some vector sizes: asking for another is a configuration error.
_FIXED_OUTPUT_SIZES: Final[dict[tuple[str, str], tuple[int, ...]]] = {
    ("gemini", "gemini-embedding-2-preview"): (768, 1536, 3072),
}
# Spellings users put before a Gemini model name; removed in this order.
GEMINI_MODEL_PREFIXES: Final = ("models/", "gemini/", "google/")


def fixed_output_sizes(provider: str, model: str) -> tuple[int, ...] | None:
    """The output sizes `model` supports when it supports only some, else None."""
    name = model.strip() or default_model(provider)
    if provider == "gemini":
        for prefix in GEMINI_MODEL_PREFIXES:
            name = name.removeprefix(prefix)
    return _FIXED_OUTPUT_SIZES.get((provider, name))
