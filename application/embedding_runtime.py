"""Application: which embedding provider runs now, chosen lazily, with runtime fallback."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

from memlane.application.ports.clock import Clock
from memlane.application.ports.embedding import EmbeddingError, EmbeddingProvider

log = structlog.get_logger()


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of provider selection: a provider, or keyword-only mode with a reason."""

    provider: EmbeddingProvider | None
    reason: str | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedFailure:
    """The last provider failure as kept with the index (by any process)."""

    provider: str
    reason: str
    # The fingerprint of the provider configuration it happened under ("" in older records):
    # once the configuration differs (a key removed or replaced, another provider or endpoint)
    # the failure's cause is gone, and it is no longer said.
    config: str = ""


class FailureRecord(Protocol):
    """Where the last provider failure outlives the process: a brand-new process (a `status`
    that has not searched) must still say that the configured provider was down when last used.
    """

    def recorded(self) -> RecordedFailure | None:
        """Return the recorded failure, None when the provider worked when last used."""
        ...

    def record(self, failure: RecordedFailure) -> None:
        """Keep `failure` (replacing an earlier one); never raises."""
        ...

    def clear(self) -> None:
        """Forget the recorded failure (no write when none is recorded); never raises."""
        ...


class EmbeddingRuntime:
    """Holds the active provider; selection is lazy and never sticky on failure, so a key added
    or a server started later is picked up.

    Nothing degrades silently: `warning` is one line whenever an explicitly configured provider
    (not `auto`, not `none`) cannot run, is replaced by its fallback, or failed in this process.
    After a failure (`note_failure`), `usable` is None for `cooldown` seconds on the injected
    clock, so searches and syncs answer keyword-only at once instead of waiting for a server
    that is down on every call; selection failures are remembered for the same time.

    With a `FailureRecord` attached (`keep_failures_in`), each failure is also kept with the
    index and each success clears it, so `warning` of a process that has not called the provider
    yet still names the failure seen last (said as "when last used"; the next call tries again).

    `select` builds the configured provider (or returns keyword-only mode with a reason).
    `select_fallback` builds the configured fallback provider, used once when the active
    provider fails while indexing.
    """

    def __init__(
        self,
        select: Callable[[], Selection],
        select_fallback: Callable[[], Selection] | None = None,
        requested: str = "auto",
        *,
        clock: Clock | None = None,
        cooldown: float = 0.0,
        config: str = "",
    ) -> None:
        """`config`: a fingerprint of the provider configuration (RecordedFailure.config)."""
        self._config = config
        self._select = select
        self._select_fallback = select_fallback
        self._selection: Selection | None = None
        self._fell_back = False
        self._lock = threading.Lock()
        self.requested = requested
        self._clock = clock
        self._cooldown = cooldown if clock is not None else 0.0
        self._failure: tuple[float, str] | None = None  # (monotonic time, one-line reason)
        self._record: FailureRecord | None = None
        self._answered = False  # the provider answered in this process: the record is stale

    def keep_failures_in(self, record: FailureRecord) -> None:
        """Keep failures beyond this process in `record` (see the class docstring)."""
        self._record = record

    @property
    def selection(self) -> Selection:
        """Return the current selection, selecting now if needed."""
        with self._lock:
            if self._selection is None:
                cooling = self._cooling_reason()
                if cooling is not None:
                    return Selection(provider=None, reason=cooling)
                try:
                    self._selection = self._select()
                    self._clear_stale_record()
                except EmbeddingError as exc:
                    # Not cached: retried after the cool-down (a key added, a server started).
                    # Not recorded with the index: every process selects again and says it.
                    log.warning("provider_selection_failed", error=str(exc))
                    self._remember(exc)
                    return Selection(provider=None, reason=str(exc))
            return self._selection

    @property
    def usable(self) -> EmbeddingProvider | None:
        """The provider to call now: None in keyword-only mode and during a failure cool-down."""
        provider = self.provider
        with self._lock:
            return None if self._cooling_reason() is not None else provider

    def note_failure(self, error: Exception) -> None:
        """Remember that the provider failed: `usable` is None for the cool-down; the failure
        is kept with the index when a record is attached."""
        with self._lock:
            reason = self._remember(error)
            selection = self._selection
        record = self._record
        if record is not None:
            name = selection.provider.id if selection and selection.provider else self.requested
            record.record(RecordedFailure(provider=name, reason=reason, config=self._config))

    def note_success(self) -> None:
        """The provider answered: forget an earlier failure, here and in the record."""
        with self._lock:
            self._failure = None
            self._answered = True
        if self._record is not None:
            self._record.clear()  # writes only when a failure is recorded

    @property
    def warning(self) -> str | None:
        """One line when semantic search is not what was configured; None when all is well."""
        if self.requested == "none":
            return None  # keyword-only by request: nothing to warn about
        selection = self.selection
        with self._lock:
            failure = self._failure
            cooling = self._cooling_reason()
        name = selection.provider.id if selection.provider is not None else self.requested
        if failure is not None:
            then = cooling or "keyword results only until it answers again"
            return f"embedding provider {name} failed ({failure[1]}); {then}"
        recalled = self.recalled_warning(name)
        if recalled is not None:
            return recalled
        if self.requested == "auto" and selection.fallback_from is None:
            return None  # auto promises the first provider available, keyword-only included
        if self.requested == "auto":  # it had to pass a provider the user set up on purpose
            then = (
                f"using {selection.provider.id}"
                if selection.provider is not None
                else "search is keyword-only"
            )
            return (
                f"embedding provider {selection.fallback_from} cannot run "
                f"({selection.fallback_reason}); {then}"
            )
        if selection.provider is None:
            return (
                f"embedding provider {name} is configured but cannot run "
                f"({selection.reason}); search is keyword-only"
            )
        if selection.fallback_from:
            return (
                f"embedding provider {selection.fallback_from} failed "
                f"({selection.fallback_reason}); using the fallback {selection.provider.id}"
            )
        return None

    def recalled_warning(self, name: str | None = None) -> str | None:
        """One line for a failure recorded with the index by an earlier call (maybe by another
        process) when this process has neither seen the provider fail nor answer; None else.

        `name` is the provider in use (None: whatever was recorded, without selecting one): a
        failure of another provider than the configured one is not this provider's.
        """
        if self.requested == "none" or self._record is None:
            return None
        with self._lock:
            if self._failure is not None or self._answered:
                return None  # this process knows better than the record
        recorded = self._record.recorded()
        if recorded is None or (name is not None and recorded.provider != name):
            return None
        if self._stale(recorded):
            return None
        return (
            f"embedding provider {recorded.provider} failed when last used ({recorded.reason}); "
            "search may be keyword-only, the next search tries it again"
        )

    def _stale(self, recorded: RecordedFailure) -> bool:
        """Whether `recorded` happened under another provider configuration than this one."""
        return bool(recorded.config and self._config and recorded.config != self._config)

    def _clear_stale_record(self) -> None:
        """Forget a recorded failure whose configuration is gone (one write, then none); the
        caller holds the lock, the record never raises."""
        recorded = None if self._record is None else self._record.recorded()
        if recorded is not None and self._record is not None and self._stale(recorded):
            self._record.clear()

    def _remember(self, error: Exception) -> str:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        self._failure = (self._clock.monotonic() if self._clock is not None else 0.0, reason)
        return reason

    def _cooling_reason(self) -> str | None:
        """Why the provider is skipped now (a recent failure), or None; caller holds the lock."""
        if self._failure is None or self._clock is None or self._cooldown <= 0:
            return None
        left = self._failure[0] + self._cooldown - self._clock.monotonic()
        if left <= 0:
            return None
        return f"keyword-only for the next {left:.0f} s before it is tried again"

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
            if fallback.provider is not None:
                # The failure noted just before was the replaced provider's: the fallback is
                # usable at once (not after that provider's cool-down), and `warning` names the
                # provider that failed and the one in use, not the fallback as the one failing.
                self._failure = None
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
