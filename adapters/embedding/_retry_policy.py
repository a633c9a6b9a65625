"""What an HTTP provider does with a failed request: retry it, after how long, or give up.

Classification is by HTTP status code and the provider's error code, never by a regex over the
message, so "1536" in a message is not a 5xx and `insufficient_quota` (429) is final (retrying a
spent budget only burns time). Used by `_http.HttpEmbeddingProvider._send`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx

from memlane.adapters.embedding._wire import error_fields, error_reasons, retry_after
from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
)

_BASE_DELAY = 0.5
_MAX_DELAY = 8.0
_JITTER = 0.2
# A server asking for a longer pause than this is treated as unavailable for now.
MAX_RETRY_AFTER = 60.0
_FINAL_429_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
# Google's ErrorInfo reasons for a key that is wrong (its status is a plain 400).
_KEY_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED"})


@dataclass(frozen=True, slots=True)
class Retryable:
    """A failed attempt that may succeed later (status None means a transport failure)."""

    message: str
    status: int | None
    retry_after: float | None
    timed_out: bool


def classify(
    response: httpx.Response,
    *,
    provider_id: str,
    key_hint: str,
    redact: Callable[[str], str],
) -> Retryable:
    """A retryable failure, or raise EmbeddingRejected for one that will fail again."""
    status = response.status_code
    code, message = error_fields(response)
    message = message or response.reason_phrase
    text = " ".join(part for part in (str(status), code, redact(message)) if part)
    if status == 429 and code not in _FINAL_429_CODES:
        return Retryable(text, status, retry_after(response), timed_out=False)
    if status in (408, 409) or 500 <= status <= 599:
        return Retryable(text, status, retry_after(response), timed_out=False)
    if status in (401, 403) or error_reasons(response) & _KEY_REASONS:
        # Said before the server's text, which the one-line warnings may cut.
        text = f"{key_hint}: {text}"
    raise EmbeddingRejected(f"{provider_id} embeddings failed: {text}")


def retry_delay(attempt: int, failure: Retryable, jitter: Callable[[], float]) -> float:
    """The server's `Retry-After` when it gave one, else exponential backoff with jitter."""
    if failure.retry_after is not None:
        return min(failure.retry_after, MAX_RETRY_AFTER)
    backoff = min(_MAX_DELAY, _BASE_DELAY * 2.0**attempt)
    return backoff * (1 + jitter() * _JITTER)


def give_up(provider_id: str, failure: Retryable, attempts: int) -> EmbeddingError:
    """The error a caller sees once retrying stops: a timeout or 'unavailable for now'."""
    message = f"{provider_id} embeddings failed after {attempts} attempt(s): {failure.message}"
    if failure.timed_out:
        return EmbeddingTimeout(message)
    return EmbeddingUnavailable(message)
