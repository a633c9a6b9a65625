"""Port: turn texts into vectors with one embedding model.

Error tree (adapters raise nothing else; transport errors are translated at the boundary):

    EmbeddingError
    ├── EmbeddingUnavailable      transient: 429, 5xx, timeout, connection reset; retry later
    │   └── EmbeddingTimeout      the request did not answer in time (and was cancelled)
    ├── EmbeddingRejected         final: bad request, auth failure, insufficient_quota, bad response
    └── ProviderNotConfigured     the provider cannot start here: no API key, no model package
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol, TypeAlias, runtime_checkable

Vector: TypeAlias = list[float]


class EmbeddingError(Exception):
    """Base for every failure an EmbeddingProvider may raise."""


class EmbeddingUnavailable(EmbeddingError):
    """Transient failure; safe to retry later."""


class EmbeddingTimeout(EmbeddingUnavailable):
    """The provider did not answer within the deadline; the request was cancelled."""


class EmbeddingRejected(EmbeddingError):
    """Final failure: retrying the same request cannot succeed."""


class ProviderNotConfigured(EmbeddingError):
    """The provider cannot be used on this machine (missing key, package or platform)."""


class EmbeddingProvider(Protocol):
    """Embeds text with one model of fixed dimensionality.

    Invariants:
    * every returned vector has exactly `dimensions` finite floats and unit L2 norm (adapters
      sanitise and normalise); `dimensions` is known before the first call;
    * `embed_documents` returns one vector per input, in input order; an empty input gives [];
    * inputs longer than `max_input_tokens` are the caller's to split (see domain.embedding);
    * `key` is a deterministic fingerprint of everything that changes the vectors (provider,
      model, base URL, output dimensionality, non-secret headers), never containing secrets;
      it partitions the embedding cache and decides re-embedding.

    Raises EmbeddingError subclasses only.
    """

    @property
    def id(self) -> str:
        """Provider name: openai, gemini, voyage, mistral, ollama or local."""
        ...

    @property
    def model(self) -> str:
        """Model name as the provider knows it."""
        ...

    @property
    def dimensions(self) -> int:
        """Length of every vector this provider returns."""
        ...

    @property
    def max_input_tokens(self) -> int:
        """Longest input the model accepts, in tokens."""
        ...

    @property
    def key(self) -> str:
        """Secret-free fingerprint of the configuration (see class docstring)."""
        ...

    def embed_query(self, text: str) -> Vector:
        """Embed a search query (query-side task type / prefix where the model has one)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[Vector]:
        """Embed passages to index (document-side task type / prefix), batching as needed."""
        ...


# What one call of a batch API provider may carry: a job's input file holds at most this many
# requests in every batch API memlane speaks (OpenAI, Voyage, Gemini's async batch).
BATCH_JOB_ITEMS: Final = 50_000


@runtime_checkable
class BatchJobs(Protocol):
    """A provider that may send documents through an asynchronous batch API, one job per
    `embed_documents` call: a job takes minutes to hours whatever its size, so a caller with
    many documents hands them over at once (up to BATCH_JOB_ITEMS), not a few at a time."""

    @property
    def batch_active(self) -> bool:
        """Whether documents go through the batch API now (off after repeated failures)."""
        ...
