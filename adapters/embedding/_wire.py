"""Adapter helper: the HTTP providers' wire formats (error bodies, vectors, request packing).

Shared by the providers, their batch flows and the template base (_http.py).
"""

from __future__ import annotations

import email.utils
import json
from collections.abc import Sequence
from typing import Any

import httpx

from memlane.application.ports.embedding import EmbeddingRejected

JSON = Any  # parsed JSON; every access is checked before use
RawVectors = list[list[float]]


def error_fields(response: httpx.Response) -> tuple[str, str]:
    """Extract (code or type, message) from any of the providers' error bodies, best effort.

    Shapes: OpenAI / Mistral `{"error": {"message", "type", "code"}}`, Gemini `{"error": {"code",
    "message", "status"}}`, Mistral `{"object": "error", "message", "type"}`, Voyage
    `{"detail": ...}`, Ollama `{"error": "text"}`.
    """
    try:
        body = response.json()
    except ValueError:
        return "", response.text[:300]
    if body is None:
        return "", ""
    if not isinstance(body, dict):
        return "", str(body)[:300]
    error = body.get("error", body)
    if isinstance(error, str):
        return "", error[:300]
    if not isinstance(error, dict):
        return "", str(error)[:300]
    code = error.get("code")
    kind = code if isinstance(code, str) and code else error.get("type") or error.get("status")
    message = error.get("message", error.get("detail", ""))
    return (str(kind) if kind else ""), str(message)[:300]


def error_reasons(response: httpx.Response) -> frozenset[str]:
    """The `reason`s of a Google error body's `details` (`ErrorInfo`), e.g. `API_KEY_INVALID`:
    Gemini refuses a bad key with 400 INVALID_ARGUMENT, told apart only by this reason."""
    try:
        body = response.json()
    except ValueError:
        return frozenset()
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    if not isinstance(details, list):
        return frozenset()
    return frozenset(
        item["reason"]
        for item in details
        if isinstance(item, dict) and isinstance(item.get("reason"), str)
    )


def retry_after(response: httpx.Response) -> float | None:
    """Seconds the server asks us to wait, from retry-after-ms or Retry-After (seconds or date)."""
    millis = response.headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    # An HTTP date: measure it against the response's own Date header (no local clock needed).
    try:
        target = email.utils.parsedate_to_datetime(value)
        now = email.utils.parsedate_to_datetime(response.headers.get("date", ""))
    except (TypeError, ValueError):
        return None
    return max(0.0, (target - now).total_seconds())


def vectors_from_data(payload: JSON) -> RawVectors:
    """Read the OpenAI-style `{"data": [{"index", "embedding"}]}` shape, ordered by index."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise EmbeddingRejected("response has no 'data' list")
    items: list[tuple[int, object]] = []
    for position, item in enumerate(data):
        if not isinstance(item, dict):
            raise EmbeddingRejected("response 'data' holds a non-object")
        index = item.get("index", position)
        if not isinstance(index, int):
            raise EmbeddingRejected("response item has a non-integer index")
        items.append((index, item.get("embedding")))
    items.sort(key=lambda pair: pair[0])
    return [as_floats(embedding) for _, embedding in items]


def as_floats(value: object) -> list[float]:
    """Check that a response value is a list of numbers and return it as floats."""
    if not isinstance(value, list):
        raise EmbeddingRejected("embedding is not a list of numbers")
    out: list[float] = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise EmbeddingRejected("embedding holds a non-number")
        out.append(float(x))
    return out


def pack_batches(
    texts: Sequence[str], *, max_items: int, max_bytes: int
) -> list[tuple[int, list[str]]]:
    """Split texts into (start index, texts) requests within an item cap and a UTF-8 byte budget.

    An input larger than the budget travels alone (the caller splits over-long inputs).
    """
    batches: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 0
    size = 0
    for index, text in enumerate(texts):
        length = len(text.encode("utf-8"))
        if current and (len(current) >= max_items or size + length > max_bytes):
            batches.append((start, current))
            current, start, size = [], index, 0
        current.append(text)
        size += length
    if current:
        batches.append((start, current))
    return batches


def dumps(value: JSON) -> str:
    """Compact JSON, as sent in JSONL batch files."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
