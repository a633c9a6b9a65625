"""Entry point (ui): who may load the pages, and what a page may do in the browser.

* With a token (`--token`, or generated when `--host` leaves loopback) every request must carry
  it: `Authorization: Bearer <token>`, or the cookie a first visit with `?token=<token>` sets
  (the browser is then sent to the same URL without the token, so it does not stay in the
  address bar or the history). Anything else gets 401. Compared in constant time.
* On loopback the Host header must name a loopback address, so a page of another site cannot
  reach the UI through a DNS name that resolves to 127.0.0.1 (DNS rebinding).
* Each browser gets a random session cookie; a form that writes (POST) carries
  HMAC(process secret, session) as its CSRF token, checked in constant time.
* Every response forbids inline scripts and styles and any other origin
  (Content-Security-Policy), framing and MIME sniffing; a referrer goes to this origin only
  (the token may be in a URL; "back to the search" needs the search's own address).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final
from urllib.parse import urlencode

import structlog
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlane.entrypoints.listen import is_loopback
from memlane.entrypoints.ui.html import message_page

TOKEN_COOKIE: Final = "memlane_ui_token"  # noqa: S105 - a cookie name
SESSION_COOKIE: Final = "memlane_ui_session"
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS: Final = (
    ("content-security-policy", CSP),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
)
_log = structlog.get_logger("memlane.ui")


class Sessions:
    """The per-process secret behind the CSRF tokens."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    @staticmethod
    def new_session() -> str:
        return secrets.token_urlsafe(24)

    def csrf_token(self, session: str) -> str:
        """The CSRF token of a browser session."""
        return hmac.new(self._secret, session.encode(), hashlib.sha256).hexdigest()

    def csrf_valid(self, session: str | None, token: str | None) -> bool:
        if not session or not token:
            return False
        return hmac.compare_digest(self.csrf_token(session).encode(), token.encode())


def host_name(header: str) -> str:
    """The name or address of a Host header, without its port (`[::1]:8766` -> `[::1]`)."""
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def session_of(request: Request) -> str | None:
    """The browser's session id (set by `UiGate` on every response that lacked it)."""
    value = request.scope.get("memlane_session")
    return value if isinstance(value, str) else None


class UiGate:
    """ASGI middleware: token, Host check, session cookie and security headers (module doc)."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        if token is not None and not token:
            raise ValueError("the UI token must not be empty")
        self._app = app
        self._token = None if token is None else token.encode()
        self._loopback = loopback

    def _has_token(self, request: Request) -> bool:
        assert self._token is not None
        header = request.headers.get("authorization", "")
        scheme, _, credential = header.partition(" ")
        candidates = [request.cookies.get(TOKEN_COOKIE, "")]
        if scheme.lower() == "bearer":
            candidates.append(credential.strip())
        return any(hmac.compare_digest(c.encode(), self._token) for c in candidates if c)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is not None:
            await _secured(refusal)(scope, receive, send)
            return
        given = request.query_params.get("token")
        if self._token is not None and given is not None:
            # A first visit with the token: keep it in a cookie, drop it from the address bar.
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            # One leading slash: "//host/..." would send the browser to another site.
            target = "/" + request.url.path.lstrip("/") + (f"?{urlencode(rest)}" if rest else "")
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="strict")
            await _secured(response)(scope, receive, send)
            return
        session = request.cookies.get(SESSION_COOKIE) or None
        fresh = session is None
        scope["memlane_session"] = session or Sessions.new_session()

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _HEADERS:
                    headers[name] = value
                if fresh:
                    headers.append(
                        "set-cookie",
                        f"{SESSION_COOKIE}={scope['memlane_session']}; HttpOnly; "
                        "SameSite=Strict; Path=/",
                    )
            await send(message)

        await self._app(scope, receive, send_secured)

    def _refusal(self, request: Request) -> Response | None:
        host = host_name(request.headers.get("host") or "")
        if self._loopback and not is_loopback(host):
            _log.warning("ui_foreign_host", host=host)
            return HTMLResponse(
                message_page(title="Refused", text=f"unknown Host header: {host}"),
                status_code=421,
            )
        if self._token is None or self._has_token(request):
            return None
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given.encode(), self._token):
            return None
        _log.warning("ui_unauthenticated", path=request.url.path)
        return HTMLResponse(
            message_page(
                title="Token required",
                text="This memlane UI needs its token: open the address `memlane ui` printed "
                "(it ends in ?token=...).",
            ),
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="memlane"'},
        )


def _secured(response: Response) -> Response:
    for name, value in _HEADERS:
        response.headers[name] = value
    return response
