"""E2E: gRPC `Sync` with `wait_for_vectors` against `memlane serve` as a real process.

The embedding provider is a real HTTP server on 127.0.0.1 speaking OpenAI's embeddings wire
format whose answers are held back until the test opens a gate, so "the vectors are not there
yet" is a state the test controls instead of a race against the clock. A first index commits
its keyword rows without calling the provider; the vectors come after, from `Sync` itself
(field unset: today's behaviour) or from the server's background syncer (field false).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memlane.application.ports.index_store import VectorProgress
from memlane.entrypoints.grpc._generated import memlane_pb2, memlane_pb2_grpc
from memlane.entrypoints.grpc.client import MemlaneClient
from tests.e2e.test_grpc_subprocess import TOKEN, Process, _command, _free_port, _wait_serving

pytestmark = pytest.mark.e2e

NOTES = {
    f"memory/2026-02-{day:02}.md": (
        f"# 2026-02-{day:02}\n\nThe release train number {day} leaves on Tuesday; "
        f"ticket QA-{day} tracks the smoke tests of the billing service.\n"
    )
    for day in range(1, 7)
}
DIMENSIONS = 1536  # what text-embedding-3-small answers
GATE_SECONDS = 60.0  # a held request never outlives a failed test by more than this


def _vector(text: str) -> list[float]:
    """A deterministic vector: words hashed into buckets, never all zeros."""
    vector = [0.0] * DIMENSIONS
    for word in text.lower().split():
        vector[sum(map(ord, word)) % DIMENSIONS] += 1.0
    vector[0] += 0.1
    return vector


class _Embeddings:
    """The provider's state, shared by the handler threads: the gate and what was asked."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.requests = 0  # arrived, answered or not
        self.embedded = 0  # texts answered


def _handler(state: _Embeddings) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
            with state.lock:
                state.requests += 1
            if not state.gate.wait(GATE_SECONDS):
                self.send_error(503, "gate never opened")
                return
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(text)}
                for i, text in enumerate(inputs)
            ]
            raw = json.dumps({"object": "list", "data": data, "model": request["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            with state.lock:
                state.embedded += len(inputs)

        def log_message(self, *_args: object) -> None:
            pass

    return Handler


@pytest.fixture
def embeddings() -> Iterator[tuple[_Embeddings, str]]:
    state = _Embeddings()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        state.gate.set()  # release any request still held
        server.shutdown()
        server.server_close()


@pytest.fixture
def serve(
    tmp_path: Path, embeddings: tuple[_Embeddings, str]
) -> Iterator[tuple[_Embeddings, MemlaneClient, Process]]:
    """`memlane serve` over a fresh workspace, embedding through the gated provider."""
    state, base_url = embeddings
    workspace, store, home = tmp_path / "ws", tmp_path / "state", tmp_path / "home"
    for relative, text in NOTES.items():
        (workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        (workspace / relative).write_text(text, encoding="utf-8")
    home.mkdir()
    block = {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "remote": {"baseUrl": base_url, "apiKey": "sk-test", "timeoutSeconds": 90},
    }
    config = tmp_path / "config.json5"
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    port = _free_port()
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [*_command(), "--config", str(config), "--workspace", str(workspace),
             "--state-dir", str(store), "serve", "--port", str(port), "--token", TOKEN],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
            cwd=tmp_path,
        )  # fmt: skip
    process = Process(proc, port, stderr)
    try:
        _wait_serving(process)
        with MemlaneClient(f"127.0.0.1:{port}", token=TOKEN, timeout=120) as client:
            yield state, client, process
    finally:
        state.gate.set()
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)


def eventually(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


class TestSyncWithoutWaitingForVectors:
    def test_returns_with_the_keyword_rows_and_the_server_embeds_the_rest(
        self, serve: tuple[_Embeddings, MemlaneClient, Process]
    ) -> None:
        state, client, process = serve

        report = client.sync(wait_for_vectors=False)  # the gate is closed: no vector can come

        assert report.full_reindex and report.files_indexed == len(NOTES)
        assert report.vectors is not None
        assert report.vectors.done < report.vectors.total
        chunks = client.status().chunks
        assert report.vectors == VectorProgress(done=0, total=chunks)
        # The server's background syncer asks the provider on its own...
        assert eventually(lambda: state.requests > 0), process.diagnostics()
        # ...and while the provider has not answered, Status says the vectors are pending.
        pending = client.status().vectors
        assert pending is not None and pending.done < pending.total == chunks
        assert client.search("release train billing").results  # keyword rows answer meanwhile

        state.gate.set()

        assert eventually(lambda: (client.status().vectors or pending).complete), (
            process.diagnostics()
        )
        assert client.status().vectors == VectorProgress(done=chunks, total=chunks)
        assert state.embedded >= chunks

    def test_a_later_sync_that_waits_finds_nothing_left_to_embed(
        self, serve: tuple[_Embeddings, MemlaneClient, Process]
    ) -> None:
        state, client, _process = serve
        client.sync(wait_for_vectors=False)
        state.gate.set()
        assert eventually(lambda: (client.status().vectors or VectorProgress(0, 1)).complete)

        again = client.sync()

        assert again.vectors_backfilled == 0
        assert again.vectors is not None and again.vectors.complete


class TestSyncThatWaits:
    def test_an_unset_field_waits_for_every_vector_as_before(
        self, serve: tuple[_Embeddings, MemlaneClient, Process]
    ) -> None:
        """An older client's request, sent through the raw stub: no `wait_for_vectors`."""
        state, client, _process = serve
        state.gate.set()
        stub = memlane_pb2_grpc.MemoryServiceStub(client.channel)
        request = memlane_pb2.SyncRequest()
        assert not request.HasField("wait_for_vectors")

        reply = stub.Sync(request, metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=120)

        chunks = client.status().chunks
        assert reply.full_reindex and reply.files_indexed == len(NOTES)
        assert reply.vectors_backfilled == chunks > 0
        assert (reply.vectors.done, reply.vectors.total) == (chunks, chunks)
        assert state.embedded >= chunks

    def test_the_client_waits_by_default(
        self, serve: tuple[_Embeddings, MemlaneClient, Process]
    ) -> None:
        state, client, _process = serve
        state.gate.set()

        report = client.sync()

        assert report.vectors is not None and report.vectors.complete
        assert report.vectors.total == client.status().chunks > 0
