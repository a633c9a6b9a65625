"""Entry points: check a server's listen options before starting it (gRPC `serve`, `mcp --http`).

Both servers report bad options late and badly: grpcio says "Failed to bind" for a busy port,
an unknown host and an unreadable certificate alike, and uvicorn logs and exits 3. Checking
first gives each problem its own message: `ListenOptionError` is a wrong option value (exit 2),
`ListenError` a listener the machine cannot give us now (exit 1).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import ssl


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name, IPv6 with or without brackets) names this machine
    only: an IP address in 127.0.0.0/8 or ::1, or `localhost`. A name that merely starts with
    "127." (127.attacker.example) is not an address, whatever it resolves to."""
    bare = host.strip().lower()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


class ListenOptionError(ValueError):
    """An option is wrong in itself: empty token, unreadable or invalid TLS files."""


class ListenError(OSError):
    """The address cannot be listened on: unknown host, port in use, no permission."""


def check_token(token: str | None) -> None:
    """An explicitly empty token would mean "no authentication": refuse it."""
    if token is not None and not token.strip():
        raise ListenOptionError(
            "--token must not be empty (omit it to serve without a token on loopback)"
        )


def check_tls(cert: str | None, key: str | None, client_ca: str | None = None) -> None:
    """Load the PEM files the way the servers will: a certificate, its key, a client CA."""
    if bool(cert) != bool(key):
        raise ListenOptionError("--tls-cert and --tls-key go together")
    if cert is None or key is None:
        if client_ca is not None:
            raise ListenOptionError("--tls-client-ca needs --tls-cert and --tls-key")
        return
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ListenOptionError(
            f"--tls-cert {cert} / --tls-key {key}: not a PEM certificate and its private key "
            f"({_reason(exc)})"
        ) from exc
    if client_ca is not None:
        try:
            context.load_verify_locations(cafile=client_ca)
        except (ssl.SSLError, OSError) as exc:
            raise ListenOptionError(
                f"--tls-client-ca {client_ca}: not a PEM CA certificate ({_reason(exc)})"
            ) from exc


def check_address(host: str, port: int) -> None:
    """Resolve `host` and bind `host:port` once (then release it), as the server will."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise ListenError(f"cannot listen on {host}:{port}: unknown host ({_reason(exc)})") from exc
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # As both servers do: a port left in TIME_WAIT by a previous run is free to take.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            why = "port already in use" if exc.errno == errno.EADDRINUSE else _reason(exc)
            raise ListenError(f"cannot listen on {host}:{port}: {why}") from exc


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
