"""E2E over gRPC: errors map to status codes, and failure logs keep no secrets."""

from __future__ import annotations

import json
from collections.abc import Callable

import grpc
import pytest
import structlog

from memlane.application.mass_delete import MassDeletion, Removal
from memlane.application.ports.embedding import (
    EmbeddingRejected,
    EmbeddingTimeout,
    EmbeddingUnavailable,
    ProviderNotConfigured,
)
from memlane.application.ports.file_source import FileMissing, FileRefused
from memlane.application.ports.index_store import StoreError
from memlane.domain.errors import ConfigError, InvalidQuery
from memlane.entrypoints.grpc.client import MemlaneClient
from memlane.entrypoints.logging import configure_logging
from tests.e2e._grpc_support import (
    CODE,
    TOKEN,
    CannedManager,
    Served,
    rpc_error,
    serve,
)
from tests.e2e._grpc_support import canned as canned  # noqa: PLC0414 (a fixture)
from tests.e2e._grpc_support import canned_served as canned_served  # noqa: PLC0414 (a fixture)

pytestmark = pytest.mark.e2e


ERRORS: list[tuple[Exception, grpc.StatusCode]] = [
    (InvalidQuery("maxResults must be positive"), CODE.INVALID_ARGUMENT),
    (ConfigError("memorySearch.query.minScore", "must be in [0, 1]"), CODE.INVALID_ARGUMENT),
    (FileRefused("../x", "outside the workspace"), CODE.PERMISSION_DENIED),
    (FileMissing("memory/gone.md", "no such file"), CODE.NOT_FOUND),
    (EmbeddingUnavailable("429 rate limited"), CODE.UNAVAILABLE),
    (EmbeddingTimeout("no answer in 60 s"), CODE.DEADLINE_EXCEEDED),
    (EmbeddingRejected("401 bad key"), CODE.FAILED_PRECONDITION),
    (ProviderNotConfigured("no OPENAI_API_KEY"), CODE.FAILED_PRECONDITION),
    (StoreError("database disk image is malformed"), CODE.INTERNAL),
    (
        MassDeletion([Removal("memory", 5, 5)], limit=20.0, workspace="/ws"),
        CODE.FAILED_PRECONDITION,
    ),
    (RuntimeError("boom"), CODE.INTERNAL),
]


class TestErrorMapping:
    @pytest.mark.parametrize(("exc", "code"), ERRORS, ids=[type(e).__name__ for e, _ in ERRORS])
    def test_each_error_maps_to_its_status(
        self, canned_served: Served, canned: CannedManager, exc: Exception, code: grpc.StatusCode
    ) -> None:
        canned.fail_with = exc

        error = rpc_error(lambda: canned_served.client.search("q"))

        assert error.code is code

    @pytest.mark.parametrize("rpc", ["search", "get", "sync", "status", "events"])
    def test_every_rpc_uses_the_table(
        self, canned_served: Served, canned: CannedManager, rpc: str
    ) -> None:
        canned.fail_with = EmbeddingUnavailable("503")
        client = canned_served.client
        calls: dict[str, Callable[[], object]] = {
            "search": lambda: client.search("q"),
            "get": lambda: client.get("MEMORY.md"),
            "sync": client.sync,
            "status": client.status,
            "events": lambda: next(client.events(tail=1, timeout=10)),
        }

        error = rpc_error(calls[rpc])

        assert error.code is CODE.UNAVAILABLE
        assert error.request_id

    def test_mapped_errors_explain_themselves(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        canned.fail_with = ConfigError("memorySearch.query.minScore", "must be in [0, 1]")

        error = rpc_error(lambda: canned_served.client.search("q"))

        assert "memorySearch.query.minScore" in error.details

    def test_an_unexpected_error_is_hidden_and_logged_once(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        """The client sees only the request id; the server logs the error once, with that id."""
        canned.fail_with = RuntimeError("internal detail /home/me/secret")

        with structlog.testing.capture_logs() as logs:
            error = rpc_error(lambda: canned_served.client.search("q"))

        errors = [e for e in logs if e["log_level"] == "error"]
        assert "secret" not in error.details
        assert error.request_id is not None
        assert error.request_id in error.details
        assert len(errors) == 1
        assert errors[0]["request_id"] == error.request_id
        assert errors[0]["rpc"] == "Search"


class TestFailureLogsKeepNoSecrets:
    """Issue #32 items 5 and 6: an internal failure logs its kind and a redacted summary (no
    request fields, no traceback locals); a mapped error's text masks URL passwords."""

    KEY = "sk-proj-" + "Hy7Gt5Rf3Ed1Ws9Qa2Zx4Cv6Bn8Mk0Lp"
    URL = "postgresql://app:Pw-do-not-log-42@db.internal/prod"

    def test_an_internal_error_carrying_a_secret_leaves_none_in_the_logs(
        self, canned_served: Served, canned: CannedManager, capsys: pytest.CaptureFixture[str]
    ) -> None:
        configure_logging(json=True, level="info")  # to the stderr capsys captures in the test
        canned.fail_with = RuntimeError(f"driver echoed OPENAI_API_KEY={self.KEY} at {self.URL}")

        error = rpc_error(lambda: canned_served.client.search(f"find {self.KEY}"))

        assert error.code is CODE.INTERNAL
        logs = capsys.readouterr().err
        assert self.KEY not in logs and "Pw-do-not-log-42" not in logs
        [record] = [json.loads(ln) for ln in logs.splitlines() if '"error"' in ln]
        assert record["error"] == "RuntimeError" and record["code"] == "INTERNAL"
        assert "db.internal/prod" in record["summary"]
        assert all("locals" not in f for f in record["exception"][0]["frames"])

    def test_a_mapped_error_masks_a_url_password_for_the_client(
        self, canned_served: Served, canned: CannedManager
    ) -> None:
        canned.fail_with = StoreError(f"cannot reach {self.URL}")

        error = rpc_error(lambda: canned_served.client.search("q"))

        assert "postgresql://app:***@db.internal/prod" in error.details
        assert "Pw-do-not-log-42" not in error.details


class TestLogging:
    def test_one_line_per_call_with_duration_and_no_query_or_text(
        self, canned_served: Served
    ) -> None:
        with structlog.testing.capture_logs() as logs:
            canned_served.client.search("needle-query-42")
            canned_served.client.get("MEMORY.md")

        handled = [e for e in logs if e["event"] == "rpc.handled"]
        assert [(e["rpc"], e["code"]) for e in handled] == [("Search", "OK"), ("Get", "OK")]
        assert all(isinstance(e["duration_ms"], float) for e in handled)
        assert len({e["request_id"] for e in handled}) == 2
        dumped = repr(logs)
        assert "needle-query-42" not in dumped
        assert "Fridays" not in dumped

    def test_a_failed_login_does_not_log_the_token(self, canned: CannedManager) -> None:
        with serve(canned, token=TOKEN) as s, structlog.testing.capture_logs() as logs:
            intruder = MemlaneClient(f"127.0.0.1:{s.port}", token="guess-" + TOKEN)
            rpc_error(intruder.status)
            intruder.close()

        assert [e["event"] for e in logs] == ["rpc.unauthenticated"]
        assert TOKEN not in repr(logs)
