"""Every face of `status` says whose vectors the index holds while they are not the configured
model's: the CLI text, `--json` / MCP (camelCase), gRPC (the warning line) and the web page."""

from __future__ import annotations

from dataclasses import asdict, replace

from memlane.application.ports.index_store import VectorProgress
from memlane.application.reports import Reembedding, StatusReport
from memlane.entrypoints.casing import camel_dict
from memlane.entrypoints.cli_output import status_text
from memlane.entrypoints.grpc._generated import memlane_pb2 as pb
from memlane.entrypoints.grpc.messages import status_report_from_pb, status_report_to_pb
from memlane.entrypoints.ui.html import Safe
from memlane.entrypoints.ui.status_page import status_html, status_json
from tests.unit.entrypoints.test_grpc_messages import _status

FALLBACK = Reembedding(
    indexed_provider="ollama",
    indexed_model="nomic-embed-text",
    provider="openai",
    model="text-embedding-3-small",
    vectors=VectorProgress(done=0, total=2),
    by_fallback=True,
)
REASON = "openai embeddings failed: the API key was refused (check OPENAI_API_KEY): 401"


def _fell_back() -> StatusReport:
    """A new process's report after a runtime fallback, as application/status.py makes it."""
    return replace(
        _status(VectorProgress(done=2, total=2)),
        vector_dims=768,
        fallback_from="openai",
        fallback_reason=REASON,
        reembedding=FALLBACK,
        warnings=(FALLBACK.text(),),
    )


def test_the_cli_text_names_whose_vectors_are_counted_and_the_configured_models() -> None:
    lines = status_text(_fell_back()).splitlines()

    assert (
        "Vectors: 2 / 2 (100 %) chunks embedded by ollama nomic-embed-text (the fallback); "
        "0 / 2 (0 %) by openai text-embedding-3-small (configured)"
    ) in lines
    assert f"Fallback: from openai ({REASON})" in lines
    assert f"Warning: {FALLBACK.text()}" in lines


def test_a_model_change_is_said_without_a_fallback() -> None:
    changed = replace(
        FALLBACK,
        indexed_provider="openai",
        indexed_model="text-embedding-3-large",
        by_fallback=False,
    )
    report = replace(_status(VectorProgress(done=2, total=2)), reembedding=changed)

    (line,) = [x for x in status_text(report).splitlines() if x.startswith("Vectors:")]

    assert line.endswith(
        "by openai text-embedding-3-large; 0 / 2 (0 %) by openai text-embedding-3-small "
        "(configured)"
    )
    assert "re-embedding pending" in changed.text() and "fallback" not in changed.text()


def test_json_and_mcp_carry_it_camel_cased() -> None:
    payload = camel_dict(asdict(_fell_back()))

    assert payload["reembedding"] == {
        "indexedProvider": "ollama",
        "indexedModel": "nomic-embed-text",
        "provider": "openai",
        "model": "text-embedding-3-small",
        "vectors": {"done": 0, "total": 2},
        "byFallback": True,
    }
    assert (payload["fallbackFrom"], payload["fallbackReason"]) == ("openai", REASON)


def test_grpc_carries_the_fallback_and_the_warning_line() -> None:
    message = pb.StatusReport.FromString(status_report_to_pb(_fell_back()).SerializeToString())

    back = status_report_from_pb(message)

    assert (back.fallback_from, back.fallback_reason, back.vector_dims) == ("openai", REASON, 768)
    assert back.warnings == (FALLBACK.text(),)


def test_the_web_page_says_it_in_the_vectors_section_and_the_live_text() -> None:
    report = _fell_back()
    page = str(status_html(report, [], first_sync_done=True, sync_form=Safe("")))
    live = status_json(report, first_sync_done=True)

    expected = (
        "2 / 2 (100 %) by ollama nomic-embed-text (the fallback); "
        "0 / 2 (0 %) by openai text-embedding-3-small (configured)"
    )
    assert live["vectorsText"] == expected
    assert expected in page
    assert "provider openai" in page  # the fallback, under Problems
