"""E2E (in process): the `memlane ui` app over a real manager (SQLite, keyword-only), through
HTTP requests: escaping, files and their refusals, the token, the Host check, CSRF, read-only.

The browser tests (test_ui_browser_*.py) drive a real `memlane ui` process; these cover the
refusals a browser cannot easily provoke, quickly.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager
from memlane.entrypoints.cli import cli
from memlane.entrypoints.ui.app import UiOptions, build_ui_app

pytestmark = pytest.mark.e2e

BASE = "http://127.0.0.1:8766"
TOKEN = "ui-token-3f9a"
NOTES = {
    "MEMORY.md": "# Memory\n\nThe deploy runs on Fridays.\nRollback: make caddy-switch.\n",
    "memory/xss.md": '# Trap\n\nA note holding <script>alert("owned")</script> and <img src=x onerror=1>.\n',
}
SESSION = [
    {"type": "message", "message": {"role": "user", "content": "Where is the DSN?"},
     "timestamp": "2026-11-20T09:28:00Z"},
    {"type": "message", "message": {"role": "assistant",
     "content": "It is OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456 in the vault."},
     "timestamp": "2026-11-20T09:28:10Z"},
]  # fmt: skip


@pytest.fixture(scope="module")
def manager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryManager]:
    root = tmp_path_factory.mktemp("ui-app")
    workspace, state = root / "ws", root / "state"
    for relative, text in NOTES.items():
        (workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        (workspace / relative).write_text(text, encoding="utf-8")
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SESSION))
    opened = open_manager(workspace=workspace, state_dir=state, config={"provider": "none"}, env={})
    opened.sync()
    yield opened
    opened.close()


def _client(manager: MemoryManager, **options: object) -> TestClient:
    settings = UiOptions(**options)  # type: ignore[arg-type]
    return TestClient(build_ui_app(manager, settings, start=False), base_url=BASE)


@pytest.fixture
def client(manager: MemoryManager) -> Iterator[TestClient]:
    with _client(manager) as c:
        yield c


class TestEscaping:
    def test_a_note_holding_a_script_is_shown_as_text_in_search_and_file(
        self, client: TestClient
    ) -> None:
        found = client.get("/search", params={"q": "script alert owned"})
        opened = client.get("/file", params={"path": "memory/xss.md", "from": "3", "to": "3"})

        for page in (found.text, opened.text):
            assert "<script>alert" not in page and "<img src=x" not in page
            unmarked = re.sub(r"</?mark>", "", page)  # the search marks the query's words
            assert "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;" in unmarked
        assert found.status_code == opened.status_code == 200

    def test_the_query_itself_is_escaped_in_the_box_and_the_title(self, client: TestClient) -> None:
        page = client.get("/search", params={"q": '"><script>x()</script>'}).text

        assert "<script>x()" not in page
        assert 'value="&quot;&gt;&lt;script&gt;x()&lt;/script&gt;"' in page

    def test_every_page_forbids_inline_scripts(self, client: TestClient) -> None:
        csp = client.get("/").headers["content-security-policy"]

        assert "script-src 'self'" in csp and "unsafe-inline" not in csp


class TestSearch:
    def test_hits_link_to_their_lines_and_draw_their_evidence(self, client: TestClient) -> None:
        page = client.get("/search", params={"q": "rollback deploy"}).text

        link = re.search(r'class="open" href="([^"]+)"', page)
        assert link is not None
        assert link.group(1).startswith("/file?path=MEMORY.md&amp;from=1&amp;to=")
        assert 'data-evidence="keyword"' in page and "<mark>" in page

    def test_before_the_first_sync_has_finished_a_search_says_so(
        self, manager: MemoryManager
    ) -> None:
        # Without `with`, the app's start-up (which marks the first sync done) never runs.
        starting = _client(manager)

        page = starting.get("/search", params={"q": "deploy"}).text

        assert "the index is still being built (first sync running)" in page

    def test_a_bad_agent_list_is_said_not_crashed(self, client: TestClient) -> None:
        page = client.get("/search", params={"q": "deploy", "agents": "no such/agent"})

        assert page.status_code == 400 and 'class="error"' in page.text


class TestFile:
    def test_the_hit_lines_are_highlighted_and_addressable(self, client: TestClient) -> None:
        page = client.get("/file", params={"path": "MEMORY.md", "from": "3", "to": "4"}).text

        hit = re.findall(r'<div class="line hit-line" id="L(\d+)"', page)
        assert hit == ["3", "4"]

    def test_the_file_has_its_own_lines_and_no_extra_one_after_the_last_newline(
        self, client: TestClient
    ) -> None:
        page = client.get("/file", params={"path": "MEMORY.md"}).text

        assert re.findall(r'class="line[^"]*" id="L(\d+)"', page) == ["1", "2", "3", "4"]

    def test_a_transcript_is_a_conversation_with_roles_times_and_masks(
        self, client: TestClient
    ) -> None:
        page = client.get(
            "/file", params={"path": "sessions/s1.jsonl", "from": "2", "to": "2"}
        ).text

        assert re.findall(r'<span class="role">(\w+)</span>', page) == ["User", "Assistant"]
        assert "2026-11-20 09:28:10 UTC" in page
        assert '<article class="msg assistant hit-line" id="L2">' in page
        assert re.search(r'<span class="mask" title="redacted">sk-pro…3456</span>', page)
        assert "abcdefghijklmnop" not in page

    @pytest.mark.parametrize(
        "path", ["../secret.md", "memory/../../etc/passwd", "/etc/passwd", "sessions/../x.jsonl"]
    )
    def test_escapes_are_refused_as_memory_get_refuses_them(
        self, client: TestClient, path: str
    ) -> None:
        page = client.get("/file", params={"path": path})

        assert page.status_code == 403 and "refused:" in page.text

    def test_bad_line_numbers_are_a_bad_request(self, client: TestClient) -> None:
        assert client.get("/file", params={"path": "MEMORY.md", "from": "x"}).status_code == 400


class TestStatus:
    def test_the_live_part_is_json(self, client: TestClient) -> None:
        data = client.get("/status.json").json()

        assert (data["files"], data["vectors"], data["firstSyncDone"]) == (3, None, True)
        assert data["chunks"] > 0

    def test_the_page_plots_the_log_and_lists_its_events(self, client: TestClient) -> None:
        page = client.get("/status").text

        assert 'class="plot dur"' in page and 'class="plot size"' in page
        assert "index_rebuilt" in page and "No problems." in page


class TestToken:
    def test_without_the_token_every_page_is_refused(self, manager: MemoryManager) -> None:
        with _client(manager, token=TOKEN) as c:
            for path in ("/", "/search?q=deploy", "/file?path=MEMORY.md", "/status.json"):
                refused = c.get(path)
                assert refused.status_code == 401, path
                assert "deploy runs" not in refused.text
            assert c.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401

    def test_the_token_in_the_address_becomes_a_cookie_and_leaves_the_address(
        self, manager: MemoryManager
    ) -> None:
        with _client(manager, token=TOKEN) as c:
            first = c.get(f"/status?token={TOKEN}", follow_redirects=False)

            assert first.status_code == 303 and first.headers["location"] == "/status"
            assert c.get("/status").status_code == 200  # the cookie carries it now
            assert c.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200

    def test_the_redirect_after_the_token_stays_on_this_site(self, manager: MemoryManager) -> None:
        with _client(manager, token=TOKEN) as c:
            first = c.get(f"{BASE}//evil.example/x?token={TOKEN}", follow_redirects=False)

            assert first.status_code == 303 and first.headers["location"] == "/evil.example/x"


class TestHost:
    def test_a_foreign_host_name_is_refused_on_loopback(self, client: TestClient) -> None:
        assert client.get("/", headers={"Host": "evil.example:8766"}).status_code == 421

    @pytest.mark.parametrize("host", ["127.attacker.example:8766", "127.0.0.1.rebind.example"])
    def test_a_name_that_starts_like_a_loopback_address_is_refused(
        self, client: TestClient, host: str
    ) -> None:
        # DNS rebinding: such a name can resolve to 127.0.0.1 and carry another site's page
        assert client.get("/status.json", headers={"Host": host}).status_code == 421

    @pytest.mark.parametrize("host", ["127.0.0.1:8766", "localhost:8766", "[::1]:8766"])
    def test_loopback_hosts_are_served(self, client: TestClient, host: str) -> None:
        assert client.get("/status.json", headers={"Host": host}).status_code == 200


class TestSyncNow:
    def test_a_post_without_the_session_csrf_token_is_refused(self, client: TestClient) -> None:
        client.get("/status")  # a session cookie

        assert client.post("/sync", data={"csrf": "forged"}).status_code == 403
        assert client.post("/sync").status_code == 403

    def test_the_form_of_the_page_is_accepted(self, client: TestClient) -> None:
        page = client.get("/status").text
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
        assert token is not None

        done = client.post("/sync", data={"csrf": token.group(1)}, follow_redirects=False)

        assert done.status_code == 303 and done.headers["location"].startswith("/status")
        after = client.get(done.headers["location"]).text
        assert 'id="sync-requested"' in after  # the click is answered on the page
        assert 'id="sync-requested"' not in page

    def test_the_browser_s_icon_request_is_answered_without_an_error(
        self, client: TestClient
    ) -> None:
        assert client.get("/favicon.ico").status_code == 204

    def test_another_browser_session_cannot_reuse_the_token(self, manager: MemoryManager) -> None:
        with _client(manager) as one, _client(manager) as other:
            token = re.search(r'name="csrf" value="([0-9a-f]+)"', one.get("/status").text)
            assert token is not None
            other.get("/status")

            assert other.post("/sync", data={"csrf": token.group(1)}).status_code == 403

    def test_read_only_offers_no_write_and_refuses_one(self, manager: MemoryManager) -> None:
        with _client(manager, read_only=True) as c:
            page = c.get("/status").text

            assert 'id="sync-now"' not in page and 'id="read-only"' in page
            assert c.post("/sync", data={"csrf": "x"}).status_code == 403


class TestCommandLine:
    def test_an_empty_token_is_bad_usage(self, tmp_path: Path) -> None:
        result = CliRunner().invoke(cli, ["--state-dir", str(tmp_path), "ui", "--token", " "])

        assert result.exit_code == 2 and "--token must not be empty" in result.output

    def test_a_port_in_use_is_a_failure_said_before_anything_opens(self, tmp_path: Path) -> None:
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = str(busy.getsockname()[1])
            result = CliRunner().invoke(cli, ["--state-dir", str(tmp_path), "ui", "--port", port])

        assert result.exit_code == 1 and "port already in use" in result.output
        assert not (tmp_path / "agents").exists()  # no index was opened


class TestTimeWindow:
    """Each hit shows when it was written; since / until keep only a window (issue #26)."""

    def test_a_hit_shows_its_time_and_since_keeps_only_the_window(self, client: TestClient) -> None:
        everything = client.get("/search", params={"q": "DSN vault"}).text
        assert "s1.jsonl" in everything
        assert '<span class="tag time">2026-11-20T09:28' in everything

        before = client.get("/search", params={"q": "DSN vault", "until": "2026-11-19"})
        after = client.get("/search", params={"q": "DSN vault", "since": "2026-11-19"})

        assert before.status_code == 200 and "s1.jsonl" not in before.text
        assert 'value="2026-11-19"' in before.text  # the form keeps what was asked
        assert "s1.jsonl" in after.text

    def test_an_unreadable_since_is_said_on_the_page(self, client: TestClient) -> None:
        answer = client.get("/search", params={"q": "deploy", "since": "someday"})

        assert answer.status_code == 400
        assert "since" in answer.text and 'role="alert"' in answer.text


class TestAddressAndMissingFiles:
    def test_empty_filters_leave_the_address(self, client: TestClient) -> None:
        answer = client.get(
            "/search?q=deploy+Fridays&agents=&since=&until=", follow_redirects=False
        )

        assert answer.status_code == 303
        assert answer.headers["location"] == "/search?q=deploy+Fridays"
        assert "MEMORY.md" in client.get(answer.headers["location"]).text

    def test_a_set_filter_stays_in_the_address(self, client: TestClient) -> None:
        answer = client.get("/search?q=deploy&since=7d", follow_redirects=False)

        assert answer.status_code == 200

    @pytest.mark.parametrize("path", ["memory/gone.md", "sessions/gone.jsonl"])
    def test_a_file_that_does_not_exist_is_not_found(self, client: TestClient, path: str) -> None:
        answer = client.get("/file", params={"path": path, "from": "1", "to": "2"})

        assert answer.status_code == 404
        assert f"{path} does not exist" in answer.text
