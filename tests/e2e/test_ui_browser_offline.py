"""E2E in a real browser (see _ui_browser_support): the health page says so when the server
stops answering (its figures stayed on screen looking live), and says nothing once it is back."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.e2e._ui_browser_support import BACKGROUND_MS, start_ui, stop_ui, wait_json
from tests.e2e._ui_browser_support import browser as browser  # noqa: PLC0414 (a fixture)
from tests.e2e._ui_browser_support import page as page  # noqa: PLC0414 (a fixture)
from tests.e2e.test_grpc_subprocess import _free_port

with contextlib.suppress(ImportError):
    from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_the_health_page_says_when_the_server_stopped_answering(page: Page, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe deploy runs on Fridays.\n")
    config = tmp_path / "kw.json5"
    config.write_text('{agents: {defaults: {memorySearch: {provider: "none"}}}}')
    port = str(_free_port())
    args = ["--config", str(config), "--state-dir", str(tmp_path / "state"),
            "--workspace", str(workspace), "ui", "--port", port]  # fmt: skip
    process = start_ui(tmp_path, args)
    try:
        wait_json(f"{process.url}/status.json", lambda d: d["firstSyncDone"])
        page.goto(f"{process.url}/status")
        page.wait_for_function("Number(document.body.dataset.polled || 0) > 0")
        expect(page.locator("#offline")).to_have_count(0)

        stop_ui(process)

        expect(page.locator("#offline")).to_be_visible(timeout=BACKGROUND_MS)
        expect(page.locator("#offline")).to_contain_text("not answering")
    finally:
        stop_ui(process)
