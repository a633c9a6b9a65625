"""Item 14.11: every bad server option, state directory and API argument gets its own message.

Exit 2 for a wrong option value (empty token, TLS files that are not a certificate and its key,
a state directory that is a file), exit 1 for what the machine refuses now (a port in use, a
host that does not resolve, a folder that cannot be created); never a traceback.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import memlane
from memlane.domain.errors import InvalidQuery
from tests.e2e._loud_support import make_home, no_traceback
from tests.e2e._loud_support import memlane as run_cli

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = make_home(tmp_path)
    (root / "junk.pem").write_text("not a certificate\n")
    return root


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def _fails(home: Path, code: int, message: str, *args: str) -> None:
    done = run_cli(home, *args, timeout=60)
    assert done.returncode == code, (done.returncode, done.stderr)
    assert message in done.stderr
    assert no_traceback(done), done.stderr


SERVERS = [("serve",), ("mcp", "--http")]


@pytest.mark.parametrize("server", SERVERS, ids=["grpc", "mcp-http"])
class TestServerOptions:
    def test_an_empty_token(self, home: Path, server: tuple[str, ...]) -> None:
        _fails(home, 2, "--token must not be empty", *server, "--token", "")

    def test_beyond_loopback_without_a_token(self, home: Path, server: tuple[str, ...]) -> None:
        # Anyone reaching the port could read every note: refused before anything listens.
        _fails(home, 2, "--token is required when listening beyond loopback",
               *server, "--host", "0.0.0.0")  # fmt: skip

    def test_a_port_in_use(self, home: Path, server: tuple[str, ...], busy_port: int) -> None:
        _fails(
            home, 1, f"cannot listen on 127.0.0.1:{busy_port}: port already in use",
            *server, "--port", str(busy_port), "--token", "t",
        )  # fmt: skip

    def test_an_unresolvable_host(self, home: Path, server: tuple[str, ...]) -> None:
        _fails(
            home, 1, "cannot listen on no-such-host.invalid:", *server,
            "--host", "no-such-host.invalid", "--token", "t",
        )  # fmt: skip

    def test_tls_files_that_are_not_pem(self, home: Path, server: tuple[str, ...]) -> None:
        junk = str(home / "junk.pem")
        _fails(
            home, 2, "not a PEM certificate and its private key",
            *server, "--tls-cert", junk, "--tls-key", junk,
        )  # fmt: skip

    @pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI")
    def test_a_key_of_another_certificate(self, home: Path, server: tuple[str, ...]) -> None:
        cert, _ = _certificate(home, "one")
        _, other_key = _certificate(home, "two")
        _fails(
            home, 2, "not a PEM certificate and its private key",
            *server, "--tls-cert", str(cert), "--tls-key", str(other_key),
        )  # fmt: skip


def test_mcp_a_client_ca_that_is_not_pem(home: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl CLI")
    cert, key = _certificate(home, "one")
    _fails(
        home, 2, "--tls-client-ca", "mcp", "--http", "--tls-cert", str(cert),
        "--tls-key", str(key), "--tls-client-ca", str(home / "junk.pem"),
    )  # fmt: skip


class TestStateDir:
    def _status(self, home: Path, state: Path) -> subprocess.CompletedProcess[str]:
        return run_cli(
            home, "--state-dir", str(state), "--workspace", str(home / "ws"), "status", state=False
        )

    def test_a_state_dir_that_is_a_file(self, home: Path) -> None:
        blocker = home / "state-file"
        blocker.write_text("keep me\n")
        for state in (blocker, blocker / "below"):
            done = self._status(home, state)
            assert done.returncode == 2
            assert f"cannot create the state directory: {blocker} is a file" in done.stderr
            assert no_traceback(done)
        assert blocker.read_text() == "keep me\n"  # nothing was overwritten

    def test_a_state_dir_that_cannot_be_created(self, home: Path) -> None:
        # `index` creates it; `status` creates nothing, so it has nothing to fail on.
        done = run_cli(
            home, "--state-dir", "/proc/no-such-process/state", "--workspace", str(home / "ws"),
            "index", state=False,
        )  # fmt: skip
        assert done.returncode == 1
        assert "cannot create the state directory /proc/no-such-process/state" in done.stderr
        assert no_traceback(done)


class TestPythonApi:
    def test_bad_arguments_raise_invalid_query(self, home: Path) -> None:
        manager = memlane.open(
            workspace=home / "ws", state_dir=home / "state", config={"provider": "none"}
        )
        bad: object = None
        try:
            with pytest.raises(InvalidQuery, match="query must be a string, not NoneType"):
                manager.search(bad)  # type: ignore[arg-type]
            with pytest.raises(InvalidQuery, match="query must be a string, not int"):
                manager.search(5)  # type: ignore[arg-type]
            with pytest.raises(InvalidQuery, match="path must be a string, not NoneType"):
                manager.get(bad)  # type: ignore[arg-type]
            assert manager.search("tabs").results[0].path == "MEMORY.md"  # still works
        finally:
            manager.close()
