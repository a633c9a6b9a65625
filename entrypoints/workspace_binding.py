"""Entry points: the workspace an index serves, decided before the application is built.

The rule is application/workspace.py's; this module reads what it needs for it (the workspace
the index recorded for this installation, through the composition root) and says the outcome.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import structlog

from memlane.application.workspace import Origin, WorkspaceRequest, bind_workspace
from memlane.entrypoints.config.runtime import RuntimeConfig

log = structlog.get_logger()

_ORIGINS: dict[str, Origin] = {
    "flag": "flag",
    "env": "env",
    "config": "config",
    "default": "default",
}


def bound_runtime(
    runtime: RuntimeConfig,
    env: Mapping[str, str],
    *,
    move: bool,
    on_notice: Callable[[str], None] | None,
) -> RuntimeConfig:
    """`runtime` with the workspace the index is bound to (see application/workspace.py)."""
    from memlane.entrypoints.container import recorded_workspace

    recorded, store = recorded_workspace(runtime, env)
    binding = bind_workspace(
        WorkspaceRequest(
            path=str(runtime.workspace.resolve()),
            origin=_ORIGINS.get(runtime.workspace_origin, "cwd"),
        ),
        recorded,
        store=store,
        is_folder=os.path.isdir,
        exists=os.path.lexists,
        move=move,
    )
    if binding.notice is not None and on_notice is not None:
        on_notice(binding.notice)
    elif binding.notice is not None:
        log.warning("workspace_bound", detail=binding.notice)
    return replace(runtime, workspace=Path(binding.path))
