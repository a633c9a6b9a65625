"""Helpers of the browser tests of `memlane ui`: the UI as a real process, Debian's Chromium driven by
Playwright (the system browser, launched by path; Playwright's own browser download is never
used), a page that fails its test on any dialog, and the screenshot folder.

Screenshots of each page go to $MEMLANE_UI_SHOTS, else to a temporary folder (printed).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_grpc_subprocess import _command

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
    from playwright.sync_api import Browser, Dialog, Page, sync_playwright
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


def start_ui(
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


def stop_ui(process: UiProcess) -> None:
    if process.proc.poll() is None:
        process.proc.terminate()
        try:
            process.proc.wait(20)
        except subprocess.TimeoutExpired:
            process.proc.kill()
            process.proc.wait(10)


def wait_json(url: str, condition: Any, timeout: float = STARTUP_SECONDS) -> dict[str, Any]:
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
