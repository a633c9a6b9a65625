"""Adapter values: what an HTTP embedding provider is built from.

`HttpOptions` says how to reach and drive one provider (key, model, URL, timeouts, concurrency,
retries, batch settings; the transport, sleep and jitter are seams for tests), and `BatchRunner`
is the shape of a provider's batch API as the template in _http.py calls it. They are apart from
_http.py so the composition root and the tests can build options, and batch.py and the providers
can name the runner, without reading the template's request and retry machinery.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import httpx

from memlane.adapters.embedding._wire import RawVectors
from memlane.domain.config import BatchSettings


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How to reach and drive one HTTP provider; the same object fits every provider.

    Empty `model` / `base_url` mean the provider's own default. `dimensions` is the output
    dimensionality to request (providers without `supports_output_dimensions` only use it as the
    known vector size). `batch` is used by providers with `supports_batch`.
    """

    api_key: str | None = None
    model: str = ""
    base_url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    query_timeout: float = 20.0
    max_concurrency: int = 4
    max_retries: int = 3
    dimensions: int | None = None
    batch: BatchSettings | None = None
    # An OpenAI-compatible server that may take no key (LM Studio, a local vLLM).
    key_optional: bool = False
    # `input_type` labels of asymmetric models on OpenAI-compatible servers; None: not sent.
    query_input_type: str | None = None
    document_input_type: str | None = None
    transport: httpx.BaseTransport | None = None
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random


class BatchRunner(Protocol):
    """A provider's batch API behind its failure policy (batch.BatchEmbedder)."""

    @property
    def active(self) -> bool:
        """False once batch mode was switched off for the life of the provider."""
        ...

    def try_embed(self, texts: Sequence[str]) -> RawVectors | None:
        """Raw vectors in input order, or None when the caller must embed inline."""
        ...
