"""The gRPC client refuses a number its request message cannot carry before any call, with the
InvalidQuery every other face raises (also a MemlaneRpcError, INVALID_ARGUMENT), not the raw
ValueError or TypeError of protobuf."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest

from memlane.domain.errors import InvalidQuery
from memlane.entrypoints.grpc.client import MemlaneClient, MemlaneRequestRefused, MemlaneRpcError

Call = Callable[[MemlaneClient], object]
CALLS: dict[str, Call] = {
    "get from_line over int32": lambda c: c.get("MEMORY.md", from_line=2**31),
    "get lines over int32": lambda c: c.get("MEMORY.md", lines=2**40),
    "get from_line under int32": lambda c: c.get("MEMORY.md", from_line=-(2**31) - 1),
    "get from_line not a number": lambda c: c.get("MEMORY.md", from_line="3"),  # type: ignore[arg-type]
    "search max_results over int32": lambda c: c.search("x", max_results=2**31),
    "search min_score not a number": lambda c: c.search("x", min_score="high"),  # type: ignore[arg-type]
    "events tail over uint32": lambda c: c.events(tail=2**32),
    "events tail negative": lambda c: c.events(tail=-1),
    "events after_position over uint64": lambda c: c.events(after_position=2**64),
}


@pytest.fixture
def client() -> Iterator[MemlaneClient]:
    with MemlaneClient("127.0.0.1:1") as made:  # nothing listens: no call may be made
        yield made


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_value_the_message_cannot_carry_is_refused_before_any_call(
    client: MemlaneClient, call: Call
) -> None:
    with pytest.raises(InvalidQuery) as refused:
        call(client)

    assert isinstance(refused.value, MemlaneRpcError)
    assert refused.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.request_id is None


def test_the_refusal_names_the_field_and_its_range(client: MemlaneClient) -> None:
    with pytest.raises(MemlaneRequestRefused, match=r"from_line must be between -2147483648 and "
                       r"2147483647, not 2147483648"):  # fmt: skip
        client.get("MEMORY.md", from_line=2**31)
