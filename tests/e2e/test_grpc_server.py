"""E2E over gRPC: the server's auth token, health and reflection services, build options and TLS."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import cast

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from structlog.testing import capture_logs

from memlane.entrypoints.grpc._generated import memlane_pb2, memlane_pb2_grpc
from memlane.entrypoints.grpc.client import MemlaneClient
from memlane.entrypoints.grpc.server import TlsConfig, build_server
from memlane.entrypoints.grpc.servicer import SERVICE_NAME
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


class TestAuth:
    @pytest.mark.parametrize("token", [None, "wrong", TOKEN + "x", ""])
    def test_missing_or_wrong_token_is_unauthenticated(
        self, canned_served: Served, canned: CannedManager, token: str | None
    ) -> None:
        with MemlaneClient(f"127.0.0.1:{canned_served.port}", token=token) as client:
            error = rpc_error(lambda: client.search("q"))

        assert error.code is CODE.UNAUTHENTICATED
        assert canned.calls == []

    def test_a_refusal_carries_the_request_id_as_every_answer_does(
        self, canned_served: Served
    ) -> None:
        stub = memlane_pb2_grpc.MemoryServiceStub(canned_served.client.channel)
        sent = (("authorization", "Bearer wrong"), ("x-request-id", "abc123"))

        with pytest.raises(grpc.RpcError) as given, capture_logs() as logs:
            stub.Status(memlane_pb2.StatusRequest(), metadata=sent, timeout=5)
        with MemlaneClient(f"127.0.0.1:{canned_served.port}") as client:
            fresh = rpc_error(client.status)

        call = cast(grpc.Call, given.value)
        assert call.code() is CODE.UNAUTHENTICATED
        assert ("x-request-id", "abc123") in tuple(call.initial_metadata() or ())
        assert any(e.get("request_id") == "abc123" for e in logs)  # the server's log line
        assert fresh.code is CODE.UNAUTHENTICATED and fresh.request_id

    def test_the_event_stream_needs_the_token_too(self, canned_served: Served) -> None:
        with MemlaneClient(f"127.0.0.1:{canned_served.port}") as client:
            error = rpc_error(lambda: next(client.events(tail=1, timeout=10)))

        assert error.code is CODE.UNAUTHENTICATED

    def test_the_scheme_is_case_insensitive(self, canned_served: Served) -> None:
        stub = memlane_pb2_grpc.MemoryServiceStub(canned_served.client.channel)
        metadata = (("authorization", f"bearer {TOKEN}"),)

        reply = stub.Status(memlane_pb2.StatusRequest(), metadata=metadata, timeout=5)

        assert reply.agent_id == "main"

    def test_without_a_configured_token_calls_need_none(self, canned: CannedManager) -> None:
        with serve(canned, token=None) as s:
            assert s.client.status().agent_id == "main"

    def test_an_empty_token_is_refused_at_build_time(self, canned: CannedManager) -> None:
        with pytest.raises(ValueError, match="token"):
            build_server(canned, token="")

    @pytest.mark.parametrize("token", [TOKEN, None])
    def test_the_insecure_listener_warning_says_whether_a_token_guards_it(
        self, canned: CannedManager, token: str | None
    ) -> None:
        with capture_logs() as logs:
            server, _port = build_server(canned, host="0.0.0.0", port=0, token=token)
        server.stop(None).wait(5)

        warned = [e for e in logs if e["event"] == "grpc.insecure_listener"]
        assert len(warned) == 1 and warned[0]["with_token"] is (token is not None)


class TestHealthAndReflection:
    @pytest.mark.parametrize("service", ["", SERVICE_NAME])
    def test_health_is_serving_without_a_token(self, canned_served: Served, service: str) -> None:
        """Health checks stay open so probes need no secret."""
        with grpc.insecure_channel(f"127.0.0.1:{canned_served.port}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=5
            )

        assert reply.status == health_pb2.HealthCheckResponse.SERVING

    def test_reflection_lists_the_service(self, canned_served: Served) -> None:
        reply = _list_services(canned_served.port, metadata=(("authorization", f"Bearer {TOKEN}"),))

        assert SERVICE_NAME in reply
        assert "grpc.health.v1.Health" in reply

    def test_reflection_needs_the_token(self, canned_served: Served) -> None:
        with pytest.raises(grpc.RpcError) as caught:
            _list_services(canned_served.port, metadata=())

        assert caught.value.code() is CODE.UNAUTHENTICATED


def _list_services(port: int, *, metadata: tuple[tuple[str, str], ...]) -> list[str]:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        replies = stub.ServerReflectionInfo(iter([request]), metadata=metadata, timeout=5)
        return [s.name for r in replies for s in r.list_services_response.service]


class TestBuildServer:
    def test_a_port_in_use_is_an_os_error(self, canned: CannedManager) -> None:
        """No silent port sharing (SO_REUSEPORT is off)."""
        with serve(canned) as s, pytest.raises(OSError, match="cannot listen"):
            build_server(canned, port=s.port)


def _self_signed(directory: Path) -> TlsConfig:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return TlsConfig(cert_file=cert, key_file=key)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI to make a certificate")
class TestTls:
    def test_a_client_trusting_the_certificate_talks_tls(
        self, canned: CannedManager, tmp_path: Path
    ) -> None:
        tls = _self_signed(tmp_path)

        with serve(canned, token=TOKEN, tls=tls) as s:
            client = MemlaneClient(f"127.0.0.1:{s.port}", token=TOKEN, root_cert=tls.cert_file)
            got = client.search("deploy")
            pem_client = MemlaneClient(
                f"localhost:{s.port}", token=TOKEN, root_cert=Path(tls.cert_file).read_bytes()
            )
            status = pem_client.status()
            client.close()
            pem_client.close()

        assert got == canned.search("deploy")
        assert status.agent_id == "main"

    def test_a_plaintext_client_cannot_talk_to_a_tls_server(
        self, canned: CannedManager, tmp_path: Path
    ) -> None:
        with serve(canned, token=TOKEN, tls=_self_signed(tmp_path)) as s:
            plain = MemlaneClient(f"127.0.0.1:{s.port}", token=TOKEN, timeout=5)
            error = rpc_error(plain.status)
            plain.close()

        assert error.code is CODE.UNAVAILABLE
        assert canned.calls == []
