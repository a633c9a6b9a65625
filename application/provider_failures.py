"""Application: the last embedding-provider failure, kept with the index.

A provider that is down is found out by the call that fails (a search, a sync). Without a
record, a brand-new process (`status` run by a host that has not searched yet) would report
everything well (issue #14). The failure is kept on the issue board under the `provider` area,
which the store persists with the index (SQLite and PostgreSQL alike); a later answer clears it.
"""

from __future__ import annotations

import re

import structlog

from memlane.application.embedding_runtime import RecordedFailure
from memlane.application.issues import PROVIDER_AREA, IssueBoard
from memlane.application.ports.index_store import RecordedIssue, StoreError

log = structlog.get_logger()


class ProviderFailureRecord:
    """A `FailureRecord` over the issue board: at most one entry (path = provider id).

    Writes only when the entry changes, so a provider that keeps answering costs no write and
    a provider that keeps failing with the same reason writes once. A store that cannot be
    written (read-only) is logged, never raised: the failure is still said in this process.
    """

    def __init__(self, board: IssueBoard) -> None:
        self._board = board

    def recorded(self) -> RecordedFailure | None:
        found = self._board.of_area(PROVIDER_AREA)
        if not found:
            return None
        provider, config = _split(found[0].path)
        return RecordedFailure(provider=provider, reason=found[0].reason, config=config)

    def record(self, failure: RecordedFailure) -> None:
        # The configuration's fingerprint rides in the entry's path (the issue rows have no
        # column for it): `openai#<16 hex>`.
        path = f"{failure.provider}#{failure.config}" if failure.config else failure.provider
        entry = RecordedIssue(key=PROVIDER_AREA, path=path, reason=failure.reason)
        if self._board.replace_area(PROVIDER_AREA, [entry]):
            self._persist("record")

    def clear(self) -> None:
        if self._board.replace_area(PROVIDER_AREA, []):
            self._persist("clear")

    def _persist(self, action: str) -> None:
        try:
            self._board.persist()
        except StoreError as exc:
            log.warning("provider_failure_not_kept", action=action, error=str(exc))


_FINGERPRINT = re.compile(r"[0-9a-f]{16}")


def _split(path: str) -> tuple[str, str]:
    """(provider, configuration fingerprint) of an entry's path; "" for a record without one."""
    provider, mark, config = path.rpartition("#")
    if mark and _FINGERPRINT.fullmatch(config):
        return provider, config
    return path, ""
