"""Entry points: the configuration API under its former module name, for existing importers.

The code lives in the `memlane.entrypoints.config` package; import from there in new code.
"""

from __future__ import annotations

from memlane.entrypoints.config.env import (
    ENV_AGENT,
    ENV_CONFIG,
    ENV_OVERRIDES,
    ENV_STATE_DIR,
    ENV_WORKSPACE,
    api_key_for,
    base_url_for,
    env_overrides,
    expand_user,
)
from memlane.entrypoints.config.files import (
    DEFAULT_CONFIG,
    ConfigFileError,
    ConfigTree,
    config_path,
    load_config,
    parse_config,
)
from memlane.entrypoints.config.runtime import (
    DEFAULT_STATE_DIR,
    RuntimeConfig,
    apply_overrides,
    resolve_runtime,
    sessions_dir,
    state_dir,
    store_path,
    workspace_dir,
)

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_STATE_DIR",
    "ENV_AGENT",
    "ENV_CONFIG",
    "ENV_OVERRIDES",
    "ENV_STATE_DIR",
    "ENV_WORKSPACE",
    "ConfigFileError",
    "ConfigTree",
    "RuntimeConfig",
    "api_key_for",
    "apply_overrides",
    "base_url_for",
    "config_path",
    "env_overrides",
    "expand_user",
    "load_config",
    "parse_config",
    "resolve_runtime",
    "sessions_dir",
    "state_dir",
    "store_path",
    "workspace_dir",
]
