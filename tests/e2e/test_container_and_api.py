"""The real container with only port providers overridden, the Python API and the tool payloads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from dependency_injector import providers

from memlane.application.embedding_runtime import EmbeddingRuntime, Selection
from memlane.application.memory import MemoryManager
from memlane.entrypoints.api import open_manager
from memlane.entrypoints.config.runtime import resolve_runtime
from memlane.entrypoints.container import Container
from memlane.entrypoints.tool_payloads import (
    chat_type,
    memory_get_tool,
    memory_search_tool,
    tool_text,
)
from tests.fakes.embedding import FakeEmbeddingProvider
from tests.fakes.event_log import FakeEventLog
from tests.fakes.index_store import FakeIndexStore

pytestmark = pytest.mark.e2e


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Team\n\nPriya owns the billing service.\n")
    (ws / "memory" / "2026-11-03.md").write_text("# Deploy\n\nDeploys happen on Tuesdays.\n")
    return ws


class TestContainer:
    def test_the_real_wiring_runs_with_fake_ports(self, tmp_path: Path) -> None:
        """Routing and handlers stay real; only the store, log and embedder are fakes."""
        ws = _workspace(tmp_path)
        runtime = resolve_runtime(
            env={"HOME": str(tmp_path)}, cwd=tmp_path, workspace=str(ws), state=str(tmp_path / "s")
        )
        container = Container(runtime_config=runtime, env={"HOME": str(tmp_path)})
        store, log, embedder = FakeIndexStore(), FakeEventLog(), FakeEmbeddingProvider()
        container.index_store.override(providers.Object(store))
        container.event_log.override(providers.Object(log))
        container.embedding_runtime.override(
            providers.Object(EmbeddingRuntime(lambda: Selection(provider=embedder)))
        )

        manager: MemoryManager = container.manager()
        manager.sync()
        response = manager.search("who owns billing", min_score=0.0)

        assert response.provider == "fake"
        assert response.results[0].path == "MEMORY.md"
        assert {f.path for f in store.files("memory")} == {"MEMORY.md", "memory/2026-11-03.md"}
        assert log.last_position() > 0
        assert not (tmp_path / "s" / "agents" / "main" / "memory.db").exists()

    def test_check_dependencies_finds_nothing_missing(self, tmp_path: Path) -> None:
        runtime = resolve_runtime(env={"HOME": str(tmp_path)}, cwd=tmp_path)
        container = Container(runtime_config=runtime, env={})

        container.check_dependencies()


class TestPythonApi:
    def test_open_returns_one_live_manager_per_key_and_a_context_manager(
        self, tmp_path: Path
    ) -> None:
        """memlane.open reuses the live manager; closing it forgets it."""
        import memlane

        ws = _workspace(tmp_path)
        env = {"HOME": str(tmp_path)}
        first = memlane.open(
            workspace=ws, state_dir=tmp_path / "s", config={"provider": "none"}, env=env
        )
        second = open_manager(
            workspace=ws, state_dir=tmp_path / "s", config={"provider": "none"}, env=env
        )
        assert first is second

        with first as memory:
            memory.sync()
            assert memory.search("Tuesdays").results[0].path == "memory/2026-11-03.md"
        second.close()  # the last holder: now it closes
        third = open_manager(
            workspace=ws, state_dir=tmp_path / "s", config={"provider": "none"}, env=env
        )
        assert third is not first
        third.close()

    @pytest.mark.parametrize("config", [["provider"], "provider: none"])
    def test_a_config_that_is_no_mapping_is_a_config_error(
        self, tmp_path: Path, config: object
    ) -> None:
        import memlane

        with pytest.raises(memlane.ConfigError, match="config: must be a memorySearch block"):
            memlane.open(workspace=_workspace(tmp_path), state_dir=tmp_path / "s", config=config)  # type: ignore[arg-type]

    def test_one_holders_close_leaves_the_manager_to_the_others(self, tmp_path: Path) -> None:
        """The README's `with memlane.open(...)` inside another holder's block closed the
        shared manager: the outer search then failed with "the database is closed"."""
        import memlane

        kw: dict[str, object] = {"workspace": _workspace(tmp_path), "state_dir": tmp_path / "s"}
        kw |= {"config": {"provider": "none"}, "env": {"HOME": str(tmp_path)}}
        with memlane.open(**kw) as outer:  # type: ignore[arg-type]
            outer.sync()
            with memlane.open(**kw) as inner:  # type: ignore[arg-type]
                assert inner is outer
                assert inner.search("Tuesdays").results
            assert outer.search("Tuesdays").results  # still open

        reopened = memlane.open(**kw)  # type: ignore[arg-type]
        assert reopened is not outer  # the last holder closed it
        reopened.close()

    def test_a_sessions_dir_that_is_not_there_is_an_issue_the_default_one_is_not(
        self, tmp_path: Path
    ) -> None:
        ws, env = _workspace(tmp_path), {"HOME": str(tmp_path)}
        typo = tmp_path / "typo-sesions"
        named = {"provider": "none", "sessions": {"dir": str(typo)}}

        with open_manager(workspace=ws, state_dir=tmp_path / "a", config=named, env=env) as one:
            one.sync()
            issues = [(i.path, i.reason) for i in one.status().issues]
        with open_manager(
            workspace=ws, state_dir=tmp_path / "b", config={"provider": "none"}, env=env
        ) as other:  # a fresh agent's own folder: no session yet, nothing wrong
            other.sync()
            default_issues = other.status().issues

        assert issues == [("sessions", f"sessions folder does not exist: {typo} (sessions.dir)")]
        assert list(default_issues) == []

    def test_awaitable_versions_do_not_block_the_event_loop(self, tmp_path: Path) -> None:
        ws = _workspace(tmp_path)
        manager = open_manager(
            workspace=ws,
            state_dir=tmp_path / "s",
            config={"provider": "none"},
            env={"HOME": str(tmp_path)},
        )

        async def scenario() -> tuple[int, list[str]]:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0)

            task = asyncio.create_task(ticker())
            await manager.async_sync()
            response = await manager.asearch("billing", min_score=0.0)
            got = await manager.aget("MEMORY.md", from_line=3, lines=1)
            task.cancel()
            return ticks, [r.path for r in response.results] + [got.text]

        ticks, found = asyncio.run(scenario())
        manager.close()

        assert ticks > 0
        assert found[0] == "MEMORY.md"
        assert found[-1] == "Priya owns the billing service."


class TestToolPayloads:
    @pytest.fixture
    def manager(self, tmp_path: Path) -> MemoryManager:
        ws = _workspace(tmp_path)
        sessions = tmp_path / "s" / "agents" / "main" / "sessions"
        sessions.mkdir(parents=True)
        (sessions / "chat.jsonl").write_text(
            json.dumps(
                {"type": "message", "message": {"role": "user", "content": "ship the kiwi release"}}
            )
            + "\n"
        )
        (tmp_path / "outside.md").write_text("not yours")
        manager = open_manager(
            workspace=ws,
            state_dir=tmp_path / "s",
            config={"provider": "none", "query": {"minScore": 0}},
            env={"HOME": str(tmp_path)},
        )
        manager.sync()
        return manager

    def test_search_payload_has_citations_in_direct_chats_only(
        self, manager: MemoryManager
    ) -> None:
        direct = memory_search_tool(manager, {"query": "billing"}, session_key="agent:main:dm:1")
        group = memory_search_tool(
            manager,
            {"query": "billing", "max_results": "2"},
            session_key="agent:main:telegram:group:9",
        )

        assert direct["citations"] == "on" and group["citations"] == "off"
        first = direct["results"][0]  # type: ignore[index]
        assert first["citation"] == "MEMORY.md#L1-L3"
        assert first["snippet"].endswith("Source: MEMORY.md#L1-L3")
        assert "citation" not in group["results"][0]  # type: ignore[index]
        assert set(first) <= {
            "path",
            "startLine",
            "endLine",
            "score",
            "snippet",
            "source",
            "citation",
            "time",  # when the hit was written (issue #26)
            "confidence",
        }
        assert json.loads(tool_text(direct))["mode"] == "keyword"
        # Keyword-only: no cosines, so no background to stand out of: not judged.
        assert first["confidence"] is None and direct["noStrongMatch"] is None
        assert "note" not in direct

    def test_search_payload_for_bad_input_is_an_error_not_disabled(
        self, manager: MemoryManager
    ) -> None:
        """A wrong call says what was wrong; `disabled` is kept for memory off or broken."""
        blank = memory_search_tool(manager, {"query": "  "})
        negative = memory_search_tool(manager, {"query": "x", "maxResults": -3})

        assert blank["error"] == "invalid arguments: query required"
        assert "maxResults" in str(negative["error"])
        assert str(negative["error"]).startswith("invalid arguments: ")
        assert "disabled" not in blank and "disabled" not in negative
        assert blank["results"] == [] and blank["action"] == "Fix the tool arguments and retry."

    @pytest.mark.parametrize(
        "value", ["ten", [3], True, {"n": 3}, float("inf"), float("-inf"), "inf"]
    )
    def test_a_number_argument_that_is_not_one_is_refused_not_ignored(
        self, manager: MemoryManager, value: object
    ) -> None:
        searched = memory_search_tool(manager, {"query": "billing", "maxResults": value})
        scored = memory_search_tool(manager, {"query": "billing", "minScore": value})
        read = memory_get_tool(manager, {"path": "MEMORY.md", "lines": value})

        for payload, name in ((searched, "maxResults"), (scored, "minScore"), (read, "lines")):
            assert str(payload["error"]).startswith(f"invalid arguments: {name} must be a")

    def test_numeric_strings_and_nan_are_read_as_the_reference_reads_them(
        self, manager: MemoryManager
    ) -> None:
        two = memory_search_tool(manager, {"query": "billing deploys", "maxResults": "1"})
        nan = memory_get_tool(manager, {"path": "MEMORY.md", "lines": float("nan")})

        assert "error" not in two and len(two["results"]) == 1  # type: ignore[arg-type]
        assert nan["text"] == "# Team\n\nPriya owns the billing service.\n"

    def test_unknown_arguments_are_named_in_a_warning(self, manager: MemoryManager) -> None:
        searched = memory_search_tool(manager, {"query": "billing", "maxRezults": 2})
        read = memory_get_tool(manager, {"path": "MEMORY.md", "line": 1})

        assert "maxRezults" in str(searched["warnings"]) and searched["results"]
        assert "line" in str(read["warnings"]) and read["text"]
        assert "warnings" not in memory_get_tool(manager, {"path": "MEMORY.md", "from": 1})

    def test_get_payload_opens_session_hits_and_refuses_escapes(
        self, manager: MemoryManager
    ) -> None:
        hit = memory_get_tool(manager, {"path": "sessions/chat.jsonl", "from": 1, "lines": 1})
        escape = memory_get_tool(manager, {"path": "../outside.md"})
        blank = memory_get_tool(manager, {"path": ""})

        assert hit["text"] == "User: ship the kiwi release"
        assert str(escape["error"]).startswith("refused: ") and escape["text"] == ""
        assert "disabled" not in escape and "disabled" not in blank
        assert blank["text"] == "" and str(blank["error"]).startswith(
            "invalid arguments: path required"
        )

    def test_get_payload_names_where_a_note_longer_than_a_read_goes_on(
        self, manager: MemoryManager, tmp_path: Path
    ) -> None:
        note = tmp_path / "ws" / "memory" / "long.md"
        note.write_text("".join(f"line {n}\n" for n in range(1, 10_003)), encoding="utf-8")

        whole = memory_get_tool(manager, {"path": "memory/long.md"})
        window = memory_get_tool(manager, {"path": "memory/long.md", "lines": 5})

        assert whole["moreFrom"] == 10_001 and "from=10001" in str(whole["note"])
        assert str(whole["text"]).endswith("line 10000")
        assert "moreFrom" not in window and "note" not in window

    def test_chat_type_follows_the_session_key(self) -> None:
        assert chat_type(None) == "direct"
        assert chat_type("agent:main:whatsapp:group:42") == "group"
        assert chat_type("agent:main:discord:channel:7") == "channel"
        assert chat_type("agent:main:main") == "direct"

    def test_get_payload_reads_a_missing_note_as_empty_and_the_reference_spellings(
        self, manager: MemoryManager, tmp_path: Path
    ) -> None:
        ws = tmp_path / "ws"
        missing = memory_get_tool(manager, {"path": "memory/2099-01-01.md"})
        spellings = [
            memory_get_tool(manager, {"path": p, "from": 0})
            for p in (
                "./memory/2026-11-03.md",
                "memory\\2026-11-03.md",
                str(ws / "memory" / "2026-11-03.md"),
            )
        ]
        probes = [
            memory_get_tool(manager, {"path": p})
            for p in (
                "..\\outside.md",
                str(tmp_path / "outside.md"),
                "./../outside.md",
                str(ws / ".." / "outside.md"),
            )
        ]

        assert missing == {  # the reference's empty text, and the fact said beside it
            "path": "memory/2099-01-01.md",
            "text": "",
            "from": 1,
            "source": "memory",
            "missing": True,
            "note": "The file does not exist (yet): its text is empty.",
        }
        assert {s["text"] for s in spellings} == {"# Deploy\n\nDeploys happen on Tuesdays.\n"}
        assert {s["path"] for s in spellings} == {"memory/2026-11-03.md"}
        assert all(str(p["error"]).startswith("refused: ") for p in probes), probes
        assert all(p["text"] == "" and "disabled" not in p for p in probes), probes

    def test_negative_from_is_clamped_to_the_first_line(self, manager: MemoryManager) -> None:
        got = memory_get_tool(manager, {"path": "MEMORY.md", "from": -4, "lines": 1})

        assert (got["from"], got["text"]) == (1, "# Team")


class TestDisabled:
    @pytest.fixture
    def manager(self, tmp_path: Path) -> MemoryManager:
        return open_manager(
            workspace=_workspace(tmp_path),
            state_dir=tmp_path / "s",
            config={"enabled": False, "provider": "none"},
            env={"HOME": str(tmp_path)},
        )

    def test_the_tools_return_the_disabled_payload_with_the_reason(
        self, manager: MemoryManager
    ) -> None:
        found = memory_search_tool(manager, {"query": "billing"})
        got = memory_get_tool(manager, {"path": "MEMORY.md"})

        assert found["disabled"] is True and found["results"] == []
        assert "memorySearch.enabled: false" in str(found["error"])
        assert got["disabled"] is True and "memorySearch.enabled" in str(got["error"])

    def test_nothing_is_indexed(self, manager: MemoryManager) -> None:
        from memlane.domain.errors import MemoryDisabled

        manager.start()
        with pytest.raises(MemoryDisabled):
            manager.sync()
        assert manager.status().files == 0
