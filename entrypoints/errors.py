"""Entry points: the one error policy, each error kind's form on every face.

The CLI (`cli_options.errors`), the tool payloads (`api.failure_payload`), gRPC
(`grpc.servicer.status_for`) and MCP (`mcp.tools.run_tool`) all look an error up here, so they
cannot disagree. `KINDS` is checked in order (subclasses first):

    kind                 raised                                  CLI   gRPC                 memory
    disabled             MemoryDisabled                          0 *   FAILED_PRECONDITION  off
    invalid_arguments    InvalidQuery (UnknownAgent, ...)        2     INVALID_ARGUMENT     works
    config               ConfigError                             2     INVALID_ARGUMENT     works
    workspace            WorkspaceError                          1     FAILED_PRECONDITION  off
    refused              FileRefused                             1     PERMISSION_DENIED    works
    not_found            FileMissing                             1     NOT_FOUND            works
    too_large            FileTooLarge                            1     FAILED_PRECONDITION  works
    file_error           SourceError (FileUnreadable, writes)    1     FAILED_PRECONDITION  works
    embedding_timeout    EmbeddingTimeout                        1     DEADLINE_EXCEEDED    broken
    embedding_unavailable EmbeddingUnavailable                   1     UNAVAILABLE          broken
    embedding_rejected   EmbeddingRejected, ProviderNotConfigured 1    FAILED_PRECONDITION  broken
    embedding            EmbeddingError (any other)              1     UNAVAILABLE          broken
    index                StoreError, EventLogError               1     INTERNAL             broken
    sync_failed          SyncFailed                              1     INTERNAL             broken
    mass_deletion        MassDeletion (nothing was removed)      1     FAILED_PRECONDITION  works
    newer_index          IndexFromNewerMemlane (nothing written) 1     FAILED_PRECONDITION  works
    (anything else)      -                                       1     INTERNAL, hidden     broken

(* the CLI says on stderr that memory is disabled and exits 0, as the reference does.)

The text of an error is the same on every face: `label: message` (`text`); gRPC puts the
message (`message`) in its details (the status code carries the kind). "Memory off or broken"
is the one thing that makes a tool payload say `disabled: true` (memory is unavailable: the
model should tell the user); a call that was wrong (arguments, a path the allow-list refuses, a
file that is missing or too large) is an error the caller fixes, never `disabled`.

This module imports no face's framework (click, grpc, mcp): each face turns the row into its
own form, and the CLI does not pay for importing grpc.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from memlane.application.mass_delete import MassDeletion
from memlane.application.ports.embedding import (
    EmbeddingError,
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
    ProviderNotConfigured,
)
from memlane.application.ports.event_log import EventLogError
from memlane.application.ports.file_source import (
    FileMissing,
    FileRefused,
    FileTooLarge,
    SourceError,
)
from memlane.application.ports.index_store import StoreError
from memlane.application.sync_refusal import IndexFromNewerMemlane
from memlane.application.sync_trigger import SyncFailed
from memlane.application.workspace import WorkspaceError
from memlane.domain.errors import ConfigError, InvalidQuery, MemoryDisabled
from memlane.domain.url_passwords import mask_url_passwords


@dataclass(frozen=True, slots=True)
class ErrorKind:
    """One row of the policy: which errors, and their form on each face."""

    name: str
    types: tuple[type[BaseException], ...]
    label: str  # what every face's text starts with ("" for errors whose message says it all)
    exit_code: int  # the CLI's
    grpc_code: str  # a grpc.StatusCode name
    unavailable: bool  # memory is off or broken (payload `disabled`), not a wrong call
    action: str  # what the caller can do (tool payloads)

    @property
    def wrong_call(self) -> bool:
        """The caller's arguments were wrong: a usage error (CLI 2), `invalid arguments`."""
        return self.exit_code == 2


INVALID_ARGUMENTS: Final = "invalid arguments"  # the label of every wrong call
_FIX_ARGUMENTS: Final = "Fix the tool arguments and retry."
_CHECK_PROVIDER: Final = "Check the embedding provider."
_CHECK_INDEX: Final = "Run `memlane status` and check the index."

DISABLED = ErrorKind(
    "disabled",
    (MemoryDisabled,),
    "",
    0,
    "FAILED_PRECONDITION",
    True,
    "Set memorySearch.enabled to true in the config to turn memory search on.",
)
KINDS: Final[tuple[ErrorKind, ...]] = (
    DISABLED,
    ErrorKind(
        "invalid_arguments",
        (InvalidQuery,),
        INVALID_ARGUMENTS,
        2,
        "INVALID_ARGUMENT",
        False,
        _FIX_ARGUMENTS,
    ),
    ErrorKind(
        "config",
        (ConfigError,),
        INVALID_ARGUMENTS,
        2,
        "INVALID_ARGUMENT",
        False,
        "Fix the configuration value named in the error.",
    ),
    ErrorKind(
        "workspace",
        (WorkspaceError,),
        "",
        1,
        "FAILED_PRECONDITION",
        True,
        "Check the workspace the index was built from (`memlane status`).",
    ),
    ErrorKind(
        "refused",
        (FileRefused,),
        "refused",
        1,
        "PERMISSION_DENIED",
        False,
        "Pass MEMORY.md, a note under memory/ or a sessions/ transcript hit.",
    ),
    ErrorKind("not_found", (FileMissing,), "not found", 1, "NOT_FOUND", False, "Check the path."),
    ErrorKind(
        "too_large",
        (FileTooLarge,),
        "too large",
        1,
        "FAILED_PRECONDITION",
        False,
        "Read fewer lines, or split the file.",
    ),
    ErrorKind(
        "file_error",
        (SourceError,),
        "file error",
        1,
        "FAILED_PRECONDITION",
        False,
        "Check the file's permissions and the disk.",
    ),
    ErrorKind(
        "embedding_timeout",
        (EmbeddingTimeout,),
        "embedding provider failed",
        1,
        "DEADLINE_EXCEEDED",
        True,
        _CHECK_PROVIDER,
    ),
    ErrorKind(
        "embedding_unavailable",
        (EmbeddingUnavailable,),
        "embedding provider failed",
        1,
        "UNAVAILABLE",
        True,
        _CHECK_PROVIDER,
    ),
    ErrorKind(
        "embedding_rejected",
        (EmbeddingRejected, ProviderNotConfigured),
        "embedding provider failed",
        1,
        "FAILED_PRECONDITION",
        True,
        _CHECK_PROVIDER,
    ),
    ErrorKind(
        "embedding",
        (EmbeddingError,),
        "embedding provider failed",
        1,
        "UNAVAILABLE",
        True,
        _CHECK_PROVIDER,
    ),
    ErrorKind(
        "index", (StoreError, EventLogError), "index error", 1, "INTERNAL", True, _CHECK_INDEX
    ),
    ErrorKind("sync_failed", (SyncFailed,), "sync failed", 1, "INTERNAL", True, _CHECK_INDEX),
    ErrorKind(
        "mass_deletion",
        (MassDeletion,),
        "",  # its message names the share, the workspace and the flag that allows it
        1,
        "FAILED_PRECONDITION",
        False,  # nothing was removed: the index still answers as before
        "Check that the workspace folder is the right one and mounted; "
        "pass --allow-mass-delete if the deletions are meant.",
    ),
    ErrorKind(
        "newer_index",
        (IndexFromNewerMemlane,),
        "",  # its message names both versions and the way on
        1,
        "FAILED_PRECONDITION",
        False,  # nothing was written: the index still answers as it is
        "Use the newer memlane that built the index, or rebuild it with this one on purpose "
        "(memlane index --force).",
    ),
)
INTERNAL: Final = ErrorKind(
    "internal",
    (),
    "internal error",
    1,
    "INTERNAL",
    True,
    "Retry; if it persists, see the server log.",
)
INTERNAL_TEXT: Final = "internal error (details in the server log)"
_QUOTA_WORDS: Final = ("insufficient_quota", "quota", "429")


def kind_of(exc: BaseException) -> ErrorKind | None:
    """The policy row of `exc`, or None for an unexpected error (a bug: hidden, logged)."""
    for kind in KINDS:
        if isinstance(exc, kind.types):
            return kind
    return None


def message(exc: BaseException) -> str:
    """The message of an expected error as every face shows it (gRPC details, CLI usage
    errors, and after the label everywhere else): the one place to shape error text. A
    message may quote a connection URL: its password is masked here, for every face."""
    return mask_url_passwords(str(exc)) or type(exc).__name__


def text(exc: BaseException) -> str:
    """What every face says about `exc`: `label: message`; unexpected errors say where to look."""
    kind = kind_of(exc)
    if kind is None:
        return INTERNAL_TEXT
    return f"{kind.label}: {message(exc)}" if kind.label else message(exc)


def action(exc: BaseException) -> str:
    """What the caller can do about `exc` (a quota problem gets its own advice)."""
    kind = kind_of(exc) or INTERNAL
    if kind.name.startswith("embedding") and any(w in str(exc).lower() for w in _QUOTA_WORDS):
        return "Top up or switch the embedding provider."
    return kind.action


UNAVAILABLE_WARNING: Final = "Memory search is unavailable right now."
WRITE_REFUSED_ACTION: Final = (
    "Write to MEMORY.md or to a note memory/<name>.md (transcripts and other paths are not "
    "written)."
)


def failure_payload(exc: BaseException, *, tool: str, path: str = "") -> dict[str, object]:
    """The tool payload (API tools, MCP, `search --json`) of a call that failed with `exc`.

    Always `error` (the same text as every face) and `action`; `disabled: true` only when
    memory is off or broken, so a model tells the user instead of retrying; a wrong call (bad
    arguments, a refused or missing file) says what was wrong and nothing about availability.
    `tool` shapes the empty answer: `search` an empty `results`, `get` the path and no text;
    a refused `write` gets the advice of writing, which allows fewer paths than reading.
    """
    kind = kind_of(exc) or INTERNAL
    payload: dict[str, object] = {}
    if tool == "search":
        payload["results"] = []
    elif tool == "get":
        payload |= {"path": path, "text": ""}
    if kind.unavailable:
        payload["disabled"] = True
        if tool == "search":
            payload |= {"unavailable": True, "warning": UNAVAILABLE_WARNING}
    advice = WRITE_REFUSED_ACTION if tool == "write" and kind.name == "refused" else action(exc)
    return payload | {"error": text(exc), "action": advice}
