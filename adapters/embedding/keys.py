"""Adapter helper: the secret-free provider key that partitions the embedding cache.


The key is sha256 over canonical JSON (sorted keys, no whitespace, UTF-8) of everything that can
change the vectors: provider, model, base URL, output dimensionality and the non-secret request
headers. Headers are compared by lowercased name with plain ordinal (code-point) ordering, never a
locale collation, so the key is identical on every machine (the reference's `localeCompare` made
it machine-dependent). Credentials never enter the key, not even hashed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

# Header names that carry credentials: Authorization-style headers, any "api key" spelling,
# tokens, cookies and secrets. They are dropped before hashing.
_SECRET_HEADER = re.compile(
    r"^(authorization|proxy-authorization|cookie)$|api[-_]?key|token|secret|password",
    re.IGNORECASE,
)


def is_secret_header(name: str) -> bool:
    """Tell whether a header name carries a credential (and so must stay out of keys and logs)."""
    return _SECRET_HEADER.search(name.strip()) is not None


def canonical_headers(headers: Mapping[str, str]) -> list[list[str]]:
    """Return the non-secret headers as [lowercased name, value] pairs in ordinal name order."""
    pairs = [
        [name.strip().lower(), value]
        for name, value in headers.items()
        if not is_secret_header(name)
    ]
    return sorted(pairs, key=lambda pair: (pair[0], pair[1]))


def provider_key(
    *,
    provider: str,
    model: str,
    base_url: str | None = None,
    output_dimensionality: int | None = None,
    headers: Mapping[str, str] | None = None,
    input_types: tuple[str | None, str | None] = (None, None),
) -> str:
    """Fingerprint a provider configuration as a hex sha256, without any secret.

    `input_types` (query, document) label the vectors, so they enter the key, but only when
    set: keys of configurations without them stay what they were.
    """
    payload: dict[str, object] = {
        "provider": provider,
        "model": model,
        "base_url": base_url.rstrip("/") if base_url else None,
        "output_dimensionality": output_dimensionality,
        "headers": canonical_headers(headers or {}),
    }
    if any(input_types):
        payload["input_types"] = list(input_types)
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
