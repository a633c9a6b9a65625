"""Application: the awaitable forms of the facade's blocking methods."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def in_thread(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[object, object, R]]:
    """The method named like `method`, as a coroutine function run in a worker thread, so the
    caller's event loop never blocks. It takes exactly `method`'s parameters (`inspect.signature`
    shows them): a parameter added to `method` reaches its awaitable form without a second copy
    of the list. The method is looked up on the instance at each call, as `self.search` would."""
    name = method.__name__

    async def awaitable(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bound: Callable[P, R] = getattr(self, name)
        return await asyncio.to_thread(bound, *args, **kwargs)

    functools.update_wrapper(awaitable, method, assigned=("__module__",), updated=())
    awaitable.__name__ = f"a{name}"
    awaitable.__qualname__ = method.__qualname__.removesuffix(name) + f"a{name}"
    awaitable.__doc__ = f"Awaitable `{name}` that never blocks the caller's event loop."
    return awaitable
