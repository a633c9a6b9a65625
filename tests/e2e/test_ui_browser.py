"""E2E in a real browser: `memlane ui` as a real process, driven through Debian's Chromium by
Playwright (the system browser, launched by path; Playwright's own browser download is never
used).

* On a copy of the examples/ demo workspace (the bundled local model, real): search in English
  and Chinese, move through the hits with the keyboard, open one, see its lines highlighted and
  in view; a note holding a script shows as text and runs nothing.
* On a workspace embedded through an OpenAI-format provider on 127.0.0.1 whose answers wait for
  the test: the health page's vector progress moves without a reload while the backfill runs.
* `--host` beyond loopback: a token is generated and printed, a visit without it is refused.

Screenshots of each page go to $MEMLANE_UI_SHOTS, else to a temporary folder (printed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_grpc_subprocess import _command, _free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STARTUP_SECONDS = 180.0
BACKGROUND_MS = 90_000  # waits on the server's background work (a loaded CI machine is slow)
XSS_NOTE = (
    "# Pasted from a web page\n\n"
    'The snippet <script>window.__owned = 1</script> and <img src="x" '
    'onerror="window.__owned = 2"> came from the phishing mail about the invoice.\n'
)

try:
    from playwright.sync_api import Browser, Dialog, Page, expect, sync_playwright
except ImportError:  # the dev extra installs it; without it these tests cannot run at all
    sync_playwright = None  # type: ignore[assignment]


@dataclass
class UiProcess:
    proc: subprocess.Popen[bytes]
    url: str
    stderr: Path
    workspace: str = ""

    def diagnostics(self) -> str:
        return self.stderr.read_text(errors="replace")[-4000:]


def _start_ui(
    root: Path, args: list[str], *, token: str | None = None, browser: str | None = None
) -> UiProcess:
    """`memlane ... ui ARGS` in `root` with a throw-away HOME; returns once /health answers.
    `browser` is the command `--open` runs ($BROWSER, as Python's webbrowser reads it)."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "OPENAI_"))}
    env.pop("BROWSER", None)
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    if browser is not None:
        env["BROWSER"] = browser
    stderr = root / f"ui-{len(list(root.glob('ui-*.log')))}.log"
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            [*_command(), *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=err, env=env, cwd=root,
        )  # fmt: skip
    port = args[args.index("--port") + 1]
    process = UiProcess(proc, f"http://127.0.0.1:{port}", stderr)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"memlane ui exited early:\n{process.diagnostics()}")
        try:
            if httpx.get(f"{process.url}/health", headers=headers, timeout=2).status_code < 500:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"memlane ui not answering after {STARTUP_SECONDS}s:\n{process.diagnostics()}")


def _stop(process: UiProcess) -> None:
    if process.proc.poll() is None:
        process.proc.terminate()
        try:
            process.proc.wait(20)
        except subprocess.TimeoutExpired:
            process.proc.kill()
            process.proc.wait(10)


def _wait_json(url: str, condition: Any, timeout: float = STARTUP_SECONDS) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    data: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            data = httpx.get(url, timeout=5).json()
        except httpx.TimeoutException:  # a busy machine (the first sync runs): ask again
            continue
        if condition(data):
            return data
        time.sleep(0.3)
    pytest.fail(f"{url} never met the condition; last: {data}")


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("MEMLANE_UI_SHOTS") or tmp_path_factory.mktemp("ui-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nmemlane ui screenshots: {folder}")  # noqa: T201 - where to look, with -s
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if sync_playwright is None:
        pytest.fail("playwright is not installed: pip install -e '.[dev]'")
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    opened = context.new_page()
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:  # an alert() from an injected script would land here
        dialogs.append(dialog.message)
        dialog.dismiss()

    opened.on("dialog", on_dialog)
    yield opened
    context.close()
    assert dialogs == [], f"a page opened a dialog: {dialogs}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiProcess]:
    """`memlane ui` on a copy of the demo workspace (plus one note holding a script)."""
    root = tmp_path_factory.mktemp("ui-demo")
    shutil.copytree(EXAMPLES / "workspace", root / "workspace")
    shutil.copytree(EXAMPLES / "state", root / "state")
    (root / "workspace" / "memory" / "pasted.md").write_text(XSS_NOTE, encoding="utf-8")
    port = str(_free_port())
    process = _start_ui(
        root,
        ["--state-dir", str(root / "state"), "--workspace", str(root / "workspace"),
         "ui", "--port", port],
    )  # fmt: skip
    process.workspace = str(root / "workspace")
    try:
        # Every chunk embedded by the bundled model: searches are hybrid, each leg drawn.
        _wait_json(
            f"{process.url}/status.json",
            lambda d: d["firstSyncDone"] and d["vectors"] and d["vectors"]["done"] == d["vectors"]["total"] > 0,
        )  # fmt: skip
        yield process
    finally:
        _stop(process)


def _search(page: Page, demo: UiProcess, query: str) -> None:
    page.goto(f"{demo.url}/")
    assert page.evaluate("document.activeElement.id") == "q"  # focus starts in the box
    page.keyboard.type(query)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/search\?q="))
    expect(page.locator("#hits .hit").first).to_be_visible()


class TestSearch:
    def test_english_finds_the_rollback_with_its_words_marked_and_its_evidence(
        self, page: Page, demo: UiProcess, shots: Path
    ) -> None:
        _search(page, demo, "how do I roll back the deploy")

        first = page.locator("#hits .hit").first
        expect(first.locator(".path")).to_have_text("sessions/2026-11-20-deploy.jsonl")
        marks = [m.lower() for m in first.locator("mark").all_inner_texts()]
        assert "roll" in marks and "deploy" in marks
        for leg in ("keyword", "vector", "fusion", "decay"):
            value = first.locator(f'[data-evidence="{leg}"]').get_attribute("data-value")
            assert value is not None and float(value) > 0, leg
        expect(page.locator("#result-meta")).to_contain_text("hybrid search")
        page.screenshot(path=str(shots / "search.png"))

    def test_chinese_finds_the_partitioning_conversation(
        self, page: Page, demo: UiProcess, shots: Path
    ) -> None:
        _search(page, demo, "数据库表按月分区")

        first = page.locator("#hits .hit").first
        expect(first.locator(".path")).to_have_text("sessions/2026-11-25-数据库.jsonl")
        marks = first.locator("mark").all_inner_texts()
        assert any("分区" in m for m in marks), marks
        page.screenshot(path=str(shots / "search-zh.png"))

    def test_arrow_keys_move_through_the_hits_and_enter_opens_one_highlighted(
        self, page: Page, demo: UiProcess, shots: Path
    ) -> None:
        _search(page, demo, "how do I roll back the deploy")
        hits = page.locator("#hits .hit")

        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        expect(hits.nth(1)).to_have_class(re.compile(r"\bselected\b"))
        page.keyboard.press("ArrowUp")
        expect(hits.nth(0)).to_have_class(re.compile(r"\bselected\b"))
        expect(hits.nth(1)).not_to_have_class(re.compile(r"\bselected\b"))
        lines = hits.nth(0).locator(".lines").inner_text()  # "lines 15–18"
        start, end = (int(n) for n in re.findall(r"\d+", lines))
        page.keyboard.press("Enter")

        page.wait_for_url(re.compile(r"/file\?path=sessions"))
        highlighted = page.locator(".hit-line")
        ids = [f"L{n}" for n in range(start, end + 1)]
        assert [h.get_attribute("id") for h in highlighted.all()] == [
            i for i in ids if page.locator(f"#{i}").count()
        ]
        expect(highlighted.first).to_be_in_viewport()
        expect(page.locator(".msg .role").first).to_have_text(re.compile("User|Assistant"))
        expect(page.locator(".msg time").first).to_contain_text("2026-11-20")
        page.screenshot(path=str(shots / "file-transcript.png"))

    def test_a_note_holding_a_script_shows_as_text_and_runs_nothing(
        self, page: Page, demo: UiProcess, shots: Path
    ) -> None:
        _search(page, demo, "phishing mail invoice snippet")
        first = page.locator("#hits .hit").first
        expect(first.locator(".path")).to_have_text("memory/pasted.md")
        expect(first.locator(".snippet")).to_contain_text("<script>window.__owned = 1</script>")

        first.locator("a.open").click()
        page.wait_for_url(re.compile(r"/file\?path=memory"))

        expect(page.locator("#L3.hit-line")).to_contain_text("<script>window.__owned = 1</script>")
        assert page.evaluate("window.__owned") is None
        assert page.locator("main script, main img").count() == 0
        page.screenshot(path=str(shots / "file-note.png"))


class TestHealth:
    def test_sync_now_indexes_a_changed_note_and_the_log_shows_it_over_time(
        self, page: Page, demo: UiProcess, shots: Path
    ) -> None:
        page.goto(f"{demo.url}/status")
        expect(page.locator("#vector-text")).to_have_attribute("data-state", "complete")
        expect(page.locator("table.summary")).to_contain_text("multilingual-e5-small")
        before = int(page.locator("svg.plot.dur").get_attribute("data-points") or 0)
        sizes_before = int(page.locator("svg.plot.size").get_attribute("data-points") or 0)
        note = Path(demo.workspace) / "memory" / "2026-11-28.md"
        note.write_text(note.read_text() + "\n- Marek moved the on-call handover to 11:00.\n")

        page.locator("#sync-now").click()  # a POST carrying the page's CSRF token
        page.wait_for_url(re.compile(r"/status\?sync=requested"))
        done = _wait_json(
            f"{demo.url}/status.json",
            lambda d: not d["dirty"] and d["vectors"]["done"] == d["vectors"]["total"],
            120,
        )
        page.reload()

        expect(page.locator("#timeline")).to_contain_text("file_indexed")
        expect(page.locator("#timeline")).to_contain_text("memory/2026-11-28.md")
        assert int(page.locator("svg.plot.dur").get_attribute("data-points") or 0) > before
        # The size after the new sync, as the page saw it: one more point on the size line.
        assert int(page.locator("svg.plot.size").get_attribute("data-points") or 0) > sizes_before
        newest = page.locator("table.runs tbody tr").first.locator("td")
        assert newest.nth(1).inner_text() == "sync"
        assert newest.last.inner_text() == f"{done['chunks']:,}"  # chunks after it
        expect(page.locator("#problems")).to_have_text("No problems.")
        page.screenshot(path=str(shots / "status.png"), full_page=True)


# --------------------------------------------------------------- the live vector progress

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
    process = _start_ui(
        tmp_path,
        ["--config", str(config), "--state-dir", str(tmp_path / "state"),
         "--workspace", str(workspace), "ui", "--port", port],
    )  # fmt: skip
    try:
        yield gate, process
    finally:
        for _ in range(16):
            gate.permits.release()
        _stop(process)
        server.shutdown()
        server.server_close()


class TestLiveVectorProgress:
    def test_the_progress_moves_without_a_reload_while_the_backfill_runs(
        self, page: Page, gated_ui: tuple[_GatedEmbeddings, UiProcess], shots: Path
    ) -> None:
        gate, ui = gated_ui
        _wait_json(f"{ui.url}/status.json", lambda d: d["firstSyncDone"] and d["chunks"] > 0)
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
        process = _start_ui(tmp_path, args, browser=f"{recorder} %s")
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
            _stop(process)
