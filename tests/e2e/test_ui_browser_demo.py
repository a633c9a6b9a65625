"""E2E in a real browser (see _ui_browser_support): `memlane ui` on a copy of the examples/ demo
workspace (the bundled local model, real): search in English and Chinese, move through the hits
with the keyboard, open one, see its lines highlighted and in view; a note holding a script shows
as text and runs nothing; the health page's Sync now indexes a changed note.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e._ui_browser_support import (
    EXAMPLES,
    XSS_NOTE,
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


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiProcess]:
    """`memlane ui` on a copy of the demo workspace (plus one note holding a script)."""
    root = tmp_path_factory.mktemp("ui-demo")
    shutil.copytree(EXAMPLES / "workspace", root / "workspace")
    shutil.copytree(EXAMPLES / "state", root / "state")
    (root / "workspace" / "memory" / "pasted.md").write_text(XSS_NOTE, encoding="utf-8")
    port = str(_free_port())
    process = start_ui(
        root,
        ["--state-dir", str(root / "state"), "--workspace", str(root / "workspace"),
         "ui", "--port", port],
    )  # fmt: skip
    process.workspace = str(root / "workspace")
    try:
        # Every chunk embedded by the bundled model: searches are hybrid, each leg drawn.
        wait_json(
            f"{process.url}/status.json",
            lambda d: d["firstSyncDone"] and d["vectors"] and d["vectors"]["done"] == d["vectors"]["total"] > 0,
        )  # fmt: skip
        yield process
    finally:
        stop_ui(process)


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
        expect(page.locator("#no-strong-match")).to_have_count(0)  # its words find the answer
        page.screenshot(path=str(shots / "search.png"))

    def test_a_question_the_memory_holds_nothing_on_is_marked_above_its_hits(
        self, page: Page, demo: UiProcess
    ) -> None:
        _search(page, demo, "what is the boiling point of tungsten")

        note = page.locator("#no-strong-match")
        expect(note).to_contain_text("No strong match")
        expect(page.locator("#hits .hit").first).to_be_visible()  # kept, only marked

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

    def test_back_to_the_search_returns_to_the_hits(self, page: Page, demo: UiProcess) -> None:
        """It follows the referrer, which the page sends to its own origin only."""
        _search(page, demo, "how do I roll back the deploy")
        searched = page.url
        page.locator("#hits .hit a.open").first.click()
        page.wait_for_url(re.compile(r"/file\?"))

        page.locator("a[data-back]").click()

        page.wait_for_url(searched)
        expect(page.locator("#hits .hit").first).to_be_visible()

    def test_a_narrow_window_shows_the_whole_form_without_scrolling_sideways(
        self, page: Page, demo: UiProcess, shots: Path
    ) -> None:
        page.set_viewport_size({"width": 400, "height": 800})
        _search(page, demo, "deploy")

        assert page.evaluate("document.documentElement.scrollWidth") <= 400
        button = page.locator("form.search button").bounding_box()
        assert button is not None and button["x"] + button["width"] <= 400
        page.screenshot(path=str(shots / "search-narrow.png"))

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
        done = wait_json(
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
