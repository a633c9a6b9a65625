"""E2E (the page's app over a real index): a hit deep in a long note opens where it is, a
search returning every hit it asked for offers more, and a note too large to read is refused
as such (not a server error). Found by a QA pass in a real browser."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager
from memlane.entrypoints.ui.app import UiOptions, build_ui_app

pytestmark = pytest.mark.e2e

BASE = "http://127.0.0.1:8766"
TALL_LINES = 12_000
MARK_LINE = 11_500


@pytest.fixture(scope="module")
def manager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryManager]:
    root = tmp_path_factory.mktemp("ui-long")
    workspace, state = root / "ws", root / "state"
    (workspace / "memory").mkdir(parents=True)
    tall = [f"filler line {n}" for n in range(1, TALL_LINES + 1)]
    tall[MARK_LINE - 1] = "PANGOLINMARK is on this line"
    (workspace / "memory" / "tall.md").write_text("\n".join(tall) + "\n", encoding="utf-8")
    for i in range(9):
        (workspace / "memory" / f"antelope{i}.md").write_text(f"# A{i}\n\nantelope sighting {i}\n")
    opened = open_manager(workspace=workspace, state_dir=state, config={"provider": "none"}, env={})
    opened.sync()
    yield opened
    opened.close()


@pytest.fixture
def client(manager: MemoryManager) -> Iterator[TestClient]:
    with TestClient(build_ui_app(manager, UiOptions(), start=False), base_url=BASE) as c:
        yield c


def test_a_hit_past_the_first_page_of_a_note_opens_at_the_hit(client: TestClient) -> None:
    page = client.get("/search", params={"q": "PANGOLINMARK"}).text
    link = re.search(r'href="(/file\?[^"]*tall\.md[^"]*)"', page)
    assert link is not None
    opened = client.get(link.group(1).replace("&amp;", "&")).text

    lines = [int(n) for n in re.findall(r'class="line[^"]*" id="L(\d+)"', opened)]
    highlighted = re.findall(r'<div class="line hit-line" id="L(\d+)"', opened)
    assert lines[0] > 1 and lines[0] <= MARK_LINE <= lines[-1]
    assert str(MARK_LINE) in highlighted and "PANGOLINMARK" in opened
    assert "from the first line" in opened  # the way back to line 1


def test_a_search_that_returned_all_it_asked_for_offers_more(client: TestClient) -> None:
    first = client.get("/search", params={"q": "antelope"}).text
    more = re.search(r'<a id="more" href="(/search\?[^"]*)"', first)
    assert more is not None and len(re.findall(r'class="hit"', first)) == 6  # maxResults 6
    wider = client.get(more.group(1).replace("&amp;", "&")).text

    assert len(re.findall(r'class="hit"', wider)) == 9
    assert 'id="more"' not in wider  # all nine shown: nothing more


def test_a_note_too_large_to_read_is_refused_not_a_server_error(
    client: TestClient, manager: MemoryManager
) -> None:
    big = Path(manager.workspace) / "memory" / "big.md"
    big.write_bytes(b"x" * 10_000_001)
    try:
        answer = client.get("/file", params={"path": "memory/big.md"})
    finally:
        big.unlink()

    assert answer.status_code == 403 and "too large" in answer.text


def test_referrers_stay_on_this_site(client: TestClient) -> None:
    """`back to the search` reads the search's address from the referrer."""
    assert client.get("/").headers["referrer-policy"] == "same-origin"
