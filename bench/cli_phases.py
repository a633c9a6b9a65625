"""Child process of bench/cli_cold_start.py: one `memlane search --json`, its steps timed.

Runs what `memlane search QUERY --json` runs, in the CLI's order and through the CLI's own
objects (Options, its manager, the JSON payload), and times each step: the interpreter's start
(from the parent's clock before it spawned this process to the first line here), the modules
the console script imports, the modules the search path imports on first use (the API and the
composition root: imported here up front so that the later steps hold no imports of them),
the configuration, opening the manager (container, store), the sync before the search, and the
search split into model load, query embedding, the two legs and the vector-progress count
(each timed by wrapping the method on its class), then the output. It is run as a file, not a
module of `memlane.bench`, so nothing outside the CLI's path is imported first.

    python bench/cli_phases.py SPAWN_MONOTONIC CONFIG STATE_DIR WORKSPACE QUERY

Prints the payload on stdout like the CLI, then one line `phases {json}` on stderr (ms).
"""

import time

# CLOCK_MONOTONIC is one clock for every process on Linux: the parent's reading before the
# spawn and this one, before any other import, bound the interpreter's own start.
_STARTED = time.monotonic()

import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402


def _wrap(owner: Any, name: str, spent: dict[str, float], key: str) -> None:
    """Add the time of every call of owner.name to spent[key] (a classmethod stays one)."""
    raw = owner.__dict__[name]
    is_class = isinstance(raw, classmethod)
    inner: Callable[..., Any] = raw.__func__ if is_class else raw

    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + (time.perf_counter() - t) * 1000

    setattr(owner, name, classmethod(timed) if is_class else timed)


def main() -> None:
    spawned, config, state_dir, workspace, query = sys.argv[1:6]
    ms: dict[str, float] = {"interpreter_start": (_STARTED - float(spawned)) * 1000}
    t = time.perf_counter()

    def lap(key: str) -> None:
        nonlocal t
        now = time.perf_counter()
        ms[key] = ms.get(key, 0.0) + (now - t) * 1000
        t = now

    from memlane.entrypoints import cli  # noqa: F401  what the `memlane` console script imports

    lap("cli_imports")
    import memlane.entrypoints.api  # the CLI imports these two on first use
    import memlane.entrypoints.container  # noqa: F401

    lap("search_path_imports")
    from memlane.adapters.embedding.local import LocalEmbeddingProvider
    from memlane.adapters.store.sqlite_index_store import SqliteIndexStore
    from memlane.domain.search import check_query_text
    from memlane.entrypoints.cli_options import Options
    from memlane.entrypoints.cli_output import result_json
    from memlane.entrypoints.logging import configure_logging

    spent: dict[str, float] = {}
    _wrap(LocalEmbeddingProvider, "__init__", spent, "model_load")
    _wrap(LocalEmbeddingProvider, "embed_query", spent, "query_embedding")
    _wrap(SqliteIndexStore, "open", spent, "store_open")
    _wrap(SqliteIndexStore, "search_keyword", spent, "keyword_leg")
    _wrap(SqliteIndexStore, "search_vector", spent, "vector_leg")
    _wrap(SqliteIndexStore, "vector_progress", spent, "vector_progress")
    lap("harness")  # not part of the CLI: subtracted from nothing, reported apart

    configure_logging(json=None, level="warning")
    options = Options(config=config, state_dir=state_dir, agent=None, workspace=workspace)
    enabled = options.enabled()
    check_query_text(query)
    lap("config")
    assert enabled, "memory search is disabled by the config"
    manager = options.manager()
    lap("manager_open")
    manager.refresh()
    lap("sync_before_search")
    before = dict(spent)
    response = manager.search(query)
    lap("search")
    payload: dict[str, object] = {
        "results": [result_json(r, False) for r in response.results],
        "provider": response.provider,
        "model": response.model,
        "mode": response.mode,
    }
    if response.warnings:
        payload["warnings"] = list(response.warnings)
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
    lap("output")
    options.close()
    lap("close")
    inside = {k: v - before.get(k, 0.0) for k, v in spent.items()}
    ms["search_other"] = ms["search"] - sum(
        inside.get(k, 0.0)
        for k in ("model_load", "query_embedding", "keyword_leg", "vector_leg", "vector_progress")
    )
    ms.update({f"search.{k}": v for k, v in inside.items() if k != "store_open"})
    ms.update({f"all_calls.{k}": v for k, v in spent.items()})  # wherever they happened
    ms["ended_clock_ms"] = time.monotonic() * 1000
    print("phases " + json.dumps({k: round(v, 1) for k, v in ms.items()}), file=sys.stderr)
    try:  # end as the console script does (no interpreter teardown), where it does so
        from memlane.entrypoints.fast_exit import exit_without_teardown
    except ImportError:  # a checkout from before that
        return
    exit_without_teardown(0)


if __name__ == "__main__":
    main()
