"""Entry points, configuration stage 2, part: the host's `models.providers` entries, as far as
embeddings use them (`baseUrl`, `apiKey`, `headers`, `api`; other fields are skipped).

Separate from validate.py because these entries are the host system's, not memlane's key
table: their own shape and their own reading of a key left as `${VAR}` by the read stage.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from memlane.domain.config import SecretRef
from memlane.domain.errors import ConfigError

# A `models.providers` key left as `${VAR}` by the read stage: read from the environment at use.
_UNRESOLVED: Final = re.compile(r"^\$\{([A-Z_][A-Z0-9_]*)\}$")


@dataclass(frozen=True, slots=True)
class RawEndpoint:
    """One validated `models.providers.<id>` entry, as far as embeddings use it."""

    path: str
    base_url: str | None
    api_key: str | SecretRef | None
    headers: tuple[tuple[str, str], ...]
    api: str | None


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
    unresolved = _UNRESOLVED.match(value.strip())
    if unresolved:
        return SecretRef(source="env", id=unresolved.group(1))
    return value.strip() or None
