"""Domain: the errors a caller can cause (bad queries, bad configuration)."""

from __future__ import annotations


class DomainError(Exception):
    """Base for every error raised by domain rules."""


class InvalidQuery(DomainError):
    """The search request itself is unusable (empty query, bad limits)."""


class ConfigError(DomainError):
    """A configuration value is unknown or out of range; the message names the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


class MemoryDisabled(DomainError):
    """Memory search is turned off for this agent (`memorySearch.enabled: false`)."""


DISABLED_REASON = "memory search is disabled in the config (memorySearch.enabled: false)"
