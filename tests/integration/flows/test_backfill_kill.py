"""Issue #18: the vector backfill survives SIGKILL. The real CLI indexes a workspace against an
OpenAI-compatible embedding server on 127.0.0.1 that records every text it is asked to embed;
once a first batch is committed the server holds further document batches (a gate), so the
`index` process is caught inside its backfill; a search in another process answers then, with
the warning saying how far the vectors are; the `index` process is SIGKILLed there and the
next `index` resumes: every chunk ends with a vector, no chunk whose vector was committed
before the kill is embedded again, and what is embedded twice is at most the batch the kill
interrupted.
"""

from __future__ import annotations

import hashlib
import json
import math
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from memlane.application.vector_backfill import BACKFILL_BATCH
from tests.e2e._loud_support import cli_env, make_home
from tests.e2e._loud_support import memlane as run_cli
from tests.integration.store.helpers import raw_connect

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DELAY_S = 0.2  # per embedding request
NOTES = 8 * BACKFILL_BATCH  # one chunk each: eight batches
DIMS = 8


class _Embeddings(BaseHTTPRequestHandler):
    """POST /v1/embeddings: records the inputs, waits, answers deterministic unit vectors."""

    lock = threading.Lock()
    texts: ClassVar[list[str]] = []  # every text asked for, on arrival
    gate = threading.Event()  # cleared: document batches (several inputs) wait

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        with type(self).lock:
            type(self).texts.extend(inputs)
        if len(inputs) > 1:
            type(self).gate.wait(60)
        time.sleep(DELAY_S)
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(t)}
            for i, t in enumerate(inputs)
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: object) -> None:
        pass


def _vector(text: str) -> list[float]:
    raw = struct.unpack(f"{DIMS}b", hashlib.sha256(text.encode()).digest()[:DIMS])
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


@pytest.fixture
def server() -> Iterator[str]:
    _Embeddings.texts = []
    _Embeddings.gate.set()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def _home(root: Path, base_url: str) -> tuple[Path, dict[str, str]]:
    notes = {
        f"memory/n{n:03}.md": f"# Note {n}\n\nService {n} owns queue q{n} and deploys on day {n}.\n"
        for n in range(NOTES)
    }
    home = make_home(root, notes)
    config = home / "config.json5"
    block = {"provider": "openai", "model": "test-embed-8",
             "remote": {"baseUrl": base_url, "apiKey": "sk-test"}}  # fmt: skip
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    env = cli_env(home, MEMLANE_CONFIG=str(config))
    del env["MEMLANE_PROVIDER"]
    return home, env


def _vectors(db: Path) -> tuple[set[str], int]:
    """Texts of the chunks that have a vector, and the number of chunks."""
    conn = raw_connect(db)
    try:
        done = {t for (t,) in conn.execute("SELECT text FROM chunks WHERE embedding IS NOT NULL")}
        (total,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
        return done, int(total)
    finally:
        conn.close()


def test_a_killed_backfill_resumes_without_embedding_a_committed_chunk_again(
    tmp_path: Path, server: str
) -> None:
    home, env = _home(tmp_path, server)
    db = home / "state" / "agents" / "main" / "memory.db"
    argv = [sys.executable, "-m", "memlane.entrypoints", "--state-dir", str(home / "state"),
            "--workspace", str(home / "ws"), "index"]  # fmt: skip
    with (tmp_path / "index.log").open("wb") as log:  # a file: a kill cannot block on a pipe
        child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        # Wait for the keyword rows and the first committed batches (polling the file below
        # the adapter), then answer a search from another process while the backfill runs.
        done: set[str] = set()
        total = 0
        for _ in range(6000):
            if db.exists():
                try:
                    done, total = _vectors(db)
                except Exception:  # the schema is not there yet
                    done, total = set(), 0
            if len(done) >= BACKFILL_BATCH:
                _Embeddings.gate.clear()  # the next document batch waits: the kill lands in it
                break
            assert child.poll() is None, "index finished before the kill"
            time.sleep(0.01)
        assert total == NOTES and BACKFILL_BATCH <= len(done) < total

        searched = run_cli(home, "search", "--json", "queue q7", env=env, timeout=60)
        assert searched.returncode == 0, searched.stderr
        payload = json.loads(searched.stdout)
        assert payload["results"][0]["path"] == "memory/n007.md"
        assert any(
            w.startswith("vectors ") and f"/ {NOTES}" in w for w in payload.get("warnings", [])
        ), payload

        assert child.poll() is None  # still in its backfill
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        _Embeddings.gate.set()
        if child.poll() is None:
            child.kill()
            child.wait()
    committed, total = _vectors(db)  # what the kill left committed
    assert 0 < len(committed) < total
    asked_before = list(_Embeddings.texts)
    _Embeddings.texts.clear()

    resumed = run_cli(home, "index", env=env, timeout=120)
    assert resumed.returncode == 0, resumed.stderr

    final, total = _vectors(db)
    assert total == NOTES and len(final) == NOTES  # none missing
    chunk_texts = final
    asked_after = [t for t in _Embeddings.texts if t in chunk_texts]
    assert set(asked_after).isdisjoint(committed)  # no committed chunk embedded again
    assert len(asked_after) == len(set(asked_after))
    again = set(asked_after) & set(asked_before)
    assert len(again) <= BACKFILL_BATCH  # at most the batch the kill interrupted
    status = run_cli(home, "status", "--json", env=env)
    vectors = json.loads(status.stdout)["vectors"]
    assert vectors == {"done": NOTES, "total": NOTES}
