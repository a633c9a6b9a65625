"""How every HTTP provider fails, against a real server on 127.0.0.1 answering in its wire format.

A refused key names the setting and the variable to fix (never the key) and is not retried; a
server asking to wait longer than a minute is given up at once; an embedding of zeros or of NaN
only is refused, never stored as if embedded; a connection failure names the endpoint.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.ollama import OllamaEmbeddingProvider
from memlane.application.ports.embedding import EmbeddingRejected, EmbeddingUnavailable
from tests.integration.embedding._support import CASES, SECRET, ProviderCase
from tests.loopback_http import QuietHandler, serving

pytestmark = pytest.mark.integration
by_name = pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])

# Where each provider's API lives below the server root.
PATHS = {"openai": "/v1", "gemini": "/v1beta", "voyage": "/v1", "mistral": "/v1", "ollama": ""}

# The bodies each service sends for a wrong key (Gemini: 400 with the ErrorInfo reason; Ollama
# takes no key, but a proxy in front of it may refuse one).
KEY_REFUSED: dict[str, tuple[int, Any]] = {
    "openai": (
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-test-*****6789.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    "gemini": (
        400,
        {
            "error": {
                "code": 400,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                        "domain": "googleapis.com",
                    }
                ],
            }
        },
    ),
    "voyage": (401, {"detail": "Provided API key is invalid."}),
    "mistral": (401, {"message": "Unauthorized", "request_id": "0f3c"}),
    "ollama": (401, {"error": "unauthorized"}),
}
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "voyage": "VOYAGE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "ollama": "OLLAMA_API_KEY",
}


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Server:
    """The scripted replies, the request paths seen, and the root URL."""

    replies: list[Reply] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    root: str = ""


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            self.json_body()
            state.paths.append(self.path)
            reply = state.replies.pop(0) if state.replies else Reply(599, b"{}")
            self.reply(reply.status, reply.body, reply.headers)

    with serving(Handler) as state.root:
        yield state


def _provider(
    case: ProviderCase, root: str, sleeps: list[float] | None = None
) -> HttpEmbeddingProvider:
    return case.build(
        base_url=root + PATHS[case.name],
        sleep=(sleeps if sleeps is not None else []).append,
    )


def _vectors_body(case: ProviderCase, vectors: list[list[float]]) -> bytes:
    payload = case.answer(vectors)
    if case.name == "gemini":
        payload = {"embeddings": [{"values": vector} for vector in vectors]}
    # json.dumps writes NaN as the bare literal a broken model server sends.
    return json.dumps(payload).encode()


@by_name
def test_a_refused_key_names_what_to_fix_and_is_not_retried(
    case: ProviderCase, server: Server
) -> None:
    code, body = KEY_REFUSED[case.name]
    server.replies.append(Reply(code, json.dumps(body).encode()))
    sleeps: list[float] = []

    with pytest.raises(EmbeddingRejected) as caught:
        _provider(case, server.root, sleeps).embed_documents(["alpha"])

    message = str(caught.value)
    assert message.startswith(f"{case.name} embeddings failed: the API key was refused")
    assert f"remote.apiKey or {KEY_VARIABLES[case.name]}" in message
    assert SECRET not in message
    assert (len(server.paths), sleeps) == (1, [])


@by_name
def test_a_retry_after_beyond_a_minute_gives_up_at_once(case: ProviderCase, server: Server) -> None:
    body = json.dumps(case.error_429).encode()
    server.replies.append(Reply(429, body, {"Retry-After": "3600"}))
    sleeps: list[float] = []

    with pytest.raises(EmbeddingUnavailable, match="asks to retry in 3600 s"):
        _provider(case, server.root, sleeps).embed_documents(["alpha"])

    assert (len(server.paths), sleeps) == (1, [])


@by_name
@pytest.mark.parametrize("value", [float("nan"), 0.0], ids=["nan", "zeros"])
def test_an_embedding_with_no_finite_non_zero_value_is_refused(
    case: ProviderCase, server: Server, value: float
) -> None:
    good = [0.5] * case.dims
    server.replies.append(Reply(200, _vectors_body(case, [good, [value] * case.dims])))

    with pytest.raises(EmbeddingRejected, match="embedding of input 2 of 2 holds no finite"):
        _provider(case, server.root).embed_documents(["alpha", "beta"])


@by_name
def test_a_connection_failure_names_the_endpoint(case: ProviderCase) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        root = f"http://127.0.0.1:{sock.getsockname()[1]}"  # nothing listens once closed
    provider = _provider(case, root)

    with pytest.raises(EmbeddingUnavailable) as caught:
        provider.embed_documents(["alpha"])

    assert f"({root}{PATHS[case.name]})" in str(caught.value)


def test_a_proxy_wanting_a_key_before_ollama_says_which_to_set(server: Server) -> None:
    server.replies.append(Reply(401, json.dumps({"error": "unauthorized"}).encode()))
    provider = OllamaEmbeddingProvider(HttpOptions(base_url=server.root))  # no key: optional

    with pytest.raises(EmbeddingRejected) as caught:
        provider.embed_documents(["alpha"])

    assert str(caught.value).startswith(
        "ollama embeddings failed: the server wants an API key "
        "(set remote.apiKey or OLLAMA_API_KEY): 401 unauthorized"
    )
    assert len(server.paths) == 1
