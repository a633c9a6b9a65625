"""E2E in a real browser (see _ui_browser_support), each test on its own workspace:

* embedded through an OpenAI-format provider on 127.0.0.1 whose answers wait for the test: the
  health page's vector progress moves without a reload while the backfill runs;
* `--host` beyond loopback: a token is generated and printed, a visit without it is refused.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.e2e._ui_browser_support import (
    BACKGROUND_MS,
    UiProcess,
    start_ui,
    stop_ui,
    wait_json,
)
from tests.e2e._ui_browser_support import browser as browser  # noqa: PLC0414 (a fixture)
from tests.e2e._ui_browser_support import page as page  # noqa: PLC0414 (a fixture)
from tests.e2e._ui_browser_support import shots as shots  # noqa: PLC0414 (a fixture)
from tests.e2e.test_grpc_subprocess import _free_port

# The dev extra installs playwright; without it the `browser` fixture fails these tests.
with contextlib.suppress(ImportError):
    from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


DIMENSIONS = 1536
BACKFILL_NOTES = 70  # one chunk each: several provider calls


class _GatedEmbeddings:
    """An OpenAI-format embeddings server whose every answer waits for a permit of the test."""

    def __init__(self) -> None:
        self.permits = threading.Semaphore(0)
        self.lock = threading.Lock()
        self.answered = 0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                inputs = (
                    request["input"] if isinstance(request["input"], list) else [request["input"]]
                )
                if not state.permits.acquire(timeout=120):
                    self.send_error(503, "no permit")
                    return
                data = [
                    {"object": "embedding", "index": i, "embedding": _vector(text)}
                    for i, text in enumerate(inputs)
                ]
                raw = json.dumps({"object": "list", "data": data, "model": request["model"]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw.encode())))
                self.end_headers()
                self.wfile.write(raw.encode())
                with state.lock:
                    state.answered += 1

            def log_message(self, *_args: object) -> None:
                pass

        return Handler


def _vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in text.lower().split():
        vector[sum(map(ord, word)) % DIMENSIONS] += 1.0
    vector[0] += 0.1
    return vector


@pytest.fixture
def gated_ui(tmp_path: Path) -> Iterator[tuple[_GatedEmbeddings, UiProcess]]:
    gate = _GatedEmbeddings()
    server = ThreadingHTTPServer(("127.0.0.1", 0), gate.handler())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    for n in range(BACKFILL_NOTES):
        (workspace / "memory" / f"note-{n:03}.md").write_text(
            f"# Note {n}\n\nShipment batch {n} left the depot on lane {n % 7}.\n"
        )
    block = {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "remote": {
            "baseUrl": f"http://127.0.0.1:{server.server_address[1]}/v1",
            "apiKey": "sk-test",
            "timeoutSeconds": 150,
        },
    }
    config = tmp_path / "config.json5"
    config.write_text(json.dumps({"agents": {"defaults": {"memorySearch": block}}}))
    port = str(_free_port())
    process = start_ui(
        tmp_path,
        ["--config", str(config), "--state-dir", str(tmp_path / "state"),
         "--workspace", str(workspace), "ui", "--port", port],
    )  # fmt: skip
    try:
        yield gate, process
    finally:
        for _ in range(16):
            gate.permits.release()
        stop_ui(process)
        server.shutdown()
        server.server_close()


class TestLiveVectorProgress:
    def test_the_progress_moves_without_a_reload_while_the_backfill_runs(
        self, page: Page, gated_ui: tuple[_GatedEmbeddings, UiProcess], shots: Path
    ) -> None:
        gate, ui = gated_ui
        wait_json(f"{ui.url}/status.json", lambda d: d["firstSyncDone"] and d["chunks"] > 0)
        page.goto(f"{ui.url}/status")
        page.evaluate("window.__sameDocument = true")  # gone if the page reloads
        bar = page.locator("#vector-progress")
        expect(bar).to_have_attribute("max", str(BACKFILL_NOTES))
        assert int(bar.evaluate("b => b.value")) == 0
        expect(page.locator("#vector-text")).to_have_attribute("data-state", "running")

        # Each permit lets the provider answer one call; a background step sizes its calls to
        # the provider's pace (a first call of 8 chunks), so the bar moves call by call.
        seen: list[int] = []
        for _ in range(2):
            gate.permits.release()
            page.wait_for_function(
                "n => document.getElementById('vector-progress').value > n",
                arg=seen[-1] if seen else 0,
                timeout=BACKGROUND_MS,
            )
            seen.append(int(bar.evaluate("b => b.value")))
            assert page.locator("#vector-text").inner_text().startswith(f"{seen[-1]} / 70")
            if len(seen) == 1:
                page.screenshot(path=str(shots / "status-backfill.png"), full_page=True)
        for _ in range(BACKFILL_NOTES):
            gate.permits.release()
        expect(page.locator("#vector-text")).to_have_attribute(
            "data-state", "complete", timeout=BACKGROUND_MS
        )

        assert 0 < seen[0] < seen[1] < BACKFILL_NOTES  # two states seen on the way, no reload
        assert int(bar.evaluate("b => b.value")) == BACKFILL_NOTES
        assert page.evaluate("window.__sameDocument") is True
        assert int(page.evaluate("document.body.dataset.polled")) >= 3


# --------------------------------------------------------------------------- the token


class TestToken:
    def test_beyond_loopback_a_token_is_generated_and_a_visit_without_it_refused(
        self, page: Page, tmp_path: Path, shots: Path
    ) -> None:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "MEMORY.md").write_text("# Memory\n\nThe deploy runs on Fridays.\n")
        config = tmp_path / "config.json5"
        config.write_text("{agents: {defaults: {memorySearch: {provider: 'none'}}}}")
        port = str(_free_port())
        args = ["--config", str(config), "--state-dir", str(tmp_path / "state"),
                "--workspace", str(workspace), "ui", "--host", "0.0.0.0", "--port", port,
                "--open"]  # fmt: skip
        opened = tmp_path / "opened.txt"
        recorder = tmp_path / "record-url"  # stands in for the user's browser
        recorder.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
        recorder.chmod(0o755)
        process = start_ui(tmp_path, args, browser=f"{recorder} %s")
        try:
            printed = re.search(r"memlane ui: (http://\S+\?token=(\S+))", process.diagnostics())
            assert printed is not None, process.diagnostics()
            token = printed.group(2)
            deadline = time.monotonic() + 30
            while not opened.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert opened.read_text() == printed.group(1)  # --open: the address with the token

            refused = page.goto(f"{process.url}/search?q=deploy")
            assert refused is not None and refused.status == 401
            expect(page.locator("h1")).to_have_text("Token required")
            assert "Fridays" not in page.content()
            page.screenshot(path=str(shots / "token-refused.png"))

            page.goto(f"{process.url}/search?q=deploy&token={token}")
            assert "token=" not in page.url  # the token left the address bar for a cookie
            expect(page.locator("#hits .hit").first).to_contain_text("Fridays")
            assert httpx.get(f"{process.url}/status.json", timeout=5).status_code == 401
        finally:
            stop_ui(process)
