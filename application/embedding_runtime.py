"""Application: which embedding provider runs now, chosen lazily, with runtime fallback."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider

log = structlog.get_logger()


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of provider selection: a provider, or keyword-only mode with a reason."""

    provider: EmbeddingProvider | None
    reason: str | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None


class EmbeddingRuntime:
    """Holds the active provider; selection is lazy and never sticky on failure, so a key added
    or a server started later is picked up.

    `select` builds the configured provider (or returns keyword-only mode with a reason).
    `select_fallback` builds the configured fallback provider, used once when the active
    provider fails while indexing.
    """

    def __init__(
        self,
        select: Callable[[], Selection],
        select_fallback: Callable[[], Selection] | None = None,
        requested: str = "auto",
    ) -> None:
        self._select = select
        self._select_fallback = select_fallback
        self._selection: Selection | None = None
        self._fell_back = False
        self._lock = threading.Lock()
        self.requested = requested

    @property
    def selection(self) -> Selection:
        """Return the current selection, selecting now if needed."""
        with self._lock:
            if self._selection is None:
                try:
                    self._selection = self._select()
                except EmbeddingError as exc:
                    # Not cached: the next call retries (a key may be added, a server may start).
                    log.warning("provider_selection_failed", error=str(exc))
                    return Selection(provider=None, reason=str(exc))
            return self._selection

    @property
    def provider(self) -> EmbeddingProvider | None:
        """Return the active provider, or None in keyword-only mode."""
        return self.selection.provider

    @property
    def is_selected(self) -> bool:
        """True once a selection was made (status must not force a selection)."""
        return self._selection is not None

    def fall_back(self, error: Exception) -> Selection | None:
        """Switch to the fallback provider after `error`; None if there is none or it was used."""
        with self._lock:
            if self._fell_back or self._select_fallback is None:
                return None
            current = self._selection.provider if self._selection else None
            try:
                fallback = self._select_fallback()
            except EmbeddingError as exc:
                log.warning("fallback_selection_failed", error=str(exc))
                return None
            if (
                fallback.provider is not None
                and current is not None
                and (
                    fallback.provider.id == current.id and fallback.provider.model == current.model
                )
            ):
                return None
            self._fell_back = True
            self._selection = Selection(
                provider=fallback.provider,
                reason=fallback.reason,
                fallback_from=current.id if current else self.requested,
                fallback_reason=str(error),
            )
            log.warning(
                "provider_fell_back",
                from_provider=self._selection.fallback_from,
                to_provider=fallback.provider.id if fallback.provider else "none",
            )
            return self._selection
