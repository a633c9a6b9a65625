"""Entry points: resolve the raw config tree into one agent's MemorySettings, validating every key.

The tree has the reference system's shape, so its config can be brought unchanged::

    {"agents": {"defaults": {"memorySearch": {...}, "workspace": "..."},
                "list": [{"id": "main", "memorySearch": {...}, "workspace": "..."}]},
     "memory": {"citations": "auto"}}

Resolution is per key: agent override ?? defaults ?? built-in default, where a JSON `null` counts as
unset (as `??` does). Sub-objects are merged key by key; `extraPaths` is concatenated (defaults
first), trimmed and deduplicated; `remote.headers` is taken whole from the level that defines it.

Validation: every key inside a `memorySearch` block and the `memory` block is checked; an unknown
key or a value of the wrong type raises ConfigError whose key is the full dotted path where the
value was written (`agents.list[1].memorySearch.query.hybrid.vectorWeight`). NaN, infinities,
booleans and strings where numbers are expected are errors; finite numbers out of range are
clamped to the range in the key table (clamping is not an error), integers are floored. Keys
outside those blocks belong to the host system's config (model, gateway, channels, ...) and are
tolerated; `ignored_keys()` lists them so an entry point can mention them.

Deliberate differences from the reference:

- `sources` defaults to `["memory", "sessions"]`; `experimental.sessionMemory` is accepted but not
  required for `sessions` to be kept. An empty list still means `["memory"]`.
- `provider` also accepts `"none"`: explicit keyword-only mode, no embeddings. An explicit
  provider without a `model` gets that provider's default model (`local`: our bundled model).
- `cache.maxEntries` defaults to 100 000 instead of unbounded (an unbounded cache grows forever).
- `query.maxResults` is floored and clamped to [1, 100]; the candidate pool per
  leg is `maxResults * candidateMultiplier` capped at 1000 (`candidate_limit`), not a silent 200;
  a fused (hybrid) search fetches at least `query.hybrid.minCandidates` (ours, default 200,
  [1, 1000]) per leg, so its ranking does not depend on how few results were asked for.
- Our additions: `query.hybrid.fusion` (`"zscore"` default | `"weighted"` | `"rrf"`) and
  `query.hybrid.rrfK` (default 60, [1, 1000]). The weights' defaults follow the fusion: 0.5 / 0.5
  (vector / text) for `zscore`, the reference's 0.7 / 0.3 for `weighted` and `rrf`;
  `redaction.enabled` and `redaction.extraPatterns` (each must compile);
  `sync.firstSearchWaitMs` (default 30 000, [0, 600 000]); `sessions.dir`;
  `remote.timeoutSeconds` / `remote.queryTimeoutSeconds` ([1, 3600]) and `remote.maxConcurrency`
  ([1, 64]); `local.threads` ([1, 256]).
- `remote.apiKey` may be a string or an env SecretRef `{"source": "env", "id": "OPENAI_API_KEY"}`;
  the ref is kept (`RemoteSettings.api_key_ref`) and read from the environment by the entry points.
  `file` / `exec` SecretRefs are not supported and are errors.
- Keys of the reference that memlane does not implement (`multimodal.enabled: true`,
  `memory.backend: "qmd"`, `local.contextSize`, `local.modelCacheDir`, `hf:` model paths,
  `store.fts.tokenizer`, `store.vector.extensionPath`, `sync.sessions.postCompactionForce`,
  `memorySearch.qmd`) are accepted and reported by `ignored_settings()`, one entry per key with
  its reason, so an existing config starts; the entry points warn once per key. `memory.qmd` is
  tolerated silently unless the backend asks for QMD.
- `models.providers.<id>` (`baseUrl`, `apiKey`, `headers`, `api`) is read as the reference reads
  it for embeddings: below `remote.*`, above the environment; see `providers.py`.
- `store.path` defaults to `<state dir>/agents/<agent id>/memory.db` (the entry points compute it).
- Batch tuning is clamped too: `pollIntervalMs` [100, 3 600 000], `timeoutMinutes` [1, 1440].
- An `agent_id` that is not in a non-empty `agents.list` is an error rather than a silent new agent;
  agent ids must match `[A-Za-z0-9][A-Za-z0-9_-]{0,63}` because they become directory names.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from memlane.domain.config import CitationsMode, MemorySettings
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.build import Flat as _Flat
from memlane.entrypoints.config.build import Value as _Value
from memlane.entrypoints.config.build import build_settings, merge_blocks
from memlane.entrypoints.config.keys import MEMORY_KEYS, MEMORY_SEARCH_KEYS, Key
from memlane.entrypoints.config.providers import RawEndpoint, parse_providers
from memlane.entrypoints.config.validate import check_leaf, object_at, optional_string

DEFAULT_AGENT_ID: Final = "main"
AGENT_ID_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
_AGENT_ID = re.compile(AGENT_ID_PATTERN)

_Tree: TypeAlias = Mapping[str, "_Tree | Key"]


def key_tree(keys: Sequence[Key], prefix: str = "") -> _Tree:
    """Nest the table's dotted paths into the shape they are written in, in table order."""
    tree: dict[str, _Tree | Key] = {}
    groups: dict[str, list[Key]] = {}
    for key in keys:
        head, dot, _ = key.path.removeprefix(prefix).partition(".")
        if dot:
            tree.setdefault(head, {})  # holds the place; filled below
            groups.setdefault(head, []).append(key)
        else:
            tree[head] = key
    for head, members in groups.items():
        tree[head] = key_tree(members, f"{prefix}{head}.")
    return tree


_MEMORY_SEARCH_TREE: Final = key_tree(MEMORY_SEARCH_KEYS)
_KEYS: Final = {key.path: key for key in MEMORY_SEARCH_KEYS}
_MEMORY_TREE: Final = key_tree(MEMORY_KEYS)
_ROOT_KEYS: Final = frozenset({"agents", "memory", "models", "env"})
_AGENTS_KEYS: Final = frozenset({"defaults", "list"})
_DEFAULTS_KEYS: Final = frozenset({"memorySearch", "workspace"})
_ENTRY_KEYS: Final = frozenset({"id", "default", "workspace", "memorySearch"})


# --- public API -------------------------------------------------------------------------------


def resolve_settings(root: Mapping[str, object], agent_id: str | None = None) -> MemorySettings:
    """Return the fully resolved settings of `agent_id` (default: the default agent).

    The whole tree is validated, including other agents' blocks, so a typo anywhere is reported.

    Raises:
        ConfigError: an unknown key, a wrong type, an unknown agent id; the key is the dotted path.
    """
    config = _Config.parse(root)
    agent = config.select(agent_id)
    defaults = config.defaults_block
    override = config.entry_blocks.get(agent, _Flat())
    return build_settings(merge_blocks(defaults, override), config.citations, config.providers)


def resolve_workspace(root: Mapping[str, object], agent_id: str | None = None) -> str | None:
    """Return the configured workspace of an agent, or None when the config names none.

    As in the reference: `agents.list[].workspace`, else `agents.defaults.workspace` for the
    default agent only. The entry points fall back to `--workspace` or the current directory.
    """
    config = _Config.parse(root)
    agent = config.select(agent_id)
    if agent in config.entry_workspaces:
        return config.entry_workspaces[agent]
    if agent == config.default_agent:
        return config.defaults_workspace
    return None


def default_agent_id(root: Mapping[str, object]) -> str:
    """Return the default agent: the first entry with `default: true`, else the first entry."""
    return _Config.parse(root).default_agent


def ignored_keys(root: Mapping[str, object]) -> list[str]:
    """Return the dotted paths of keys outside memlane's blocks, tolerated and not used."""
    return list(_Config.parse(root).ignored)


@dataclass(frozen=True, slots=True)
class IgnoredKey:
    """A key of the reference's config that memlane accepts but does not implement."""

    key: str  # the full dotted path where it was written
    reason: str


def ignored_settings(root: Mapping[str, object]) -> list[IgnoredKey]:
    """Return the memory keys written in `root` that memlane accepts and ignores, in file order."""
    return list(_Config.parse(root).ignored_settings)


def validate_agent_id(agent_id: str, key: str = "agentId") -> str:
    """Return `agent_id` unchanged if it is safe as a directory name, else raise ConfigError."""
    if not _AGENT_ID.fullmatch(agent_id):
        raise ConfigError(
            key, f"invalid agent id {agent_id!r}: use letters, digits, '_' and '-' (max 64)"
        )
    return agent_id


# --- parsing and validation -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Config:
    """The validated skeleton of the tree: agents, their blocks and the memory block."""

    agents: tuple[str, ...]
    default_agent: str
    listed: bool
    defaults_block: _Flat
    defaults_workspace: str | None
    entry_blocks: dict[str, _Flat]
    entry_workspaces: dict[str, str]
    citations: CitationsMode
    ignored: tuple[str, ...]
    ignored_settings: tuple[IgnoredKey, ...]
    providers: Mapping[str, RawEndpoint]

    @classmethod
    def parse(cls, root: Mapping[str, object]) -> _Config:
        if not isinstance(root, Mapping):
            raise ConfigError("<root>", "the configuration must be an object")
        ignored: list[str] = [key for key in root if key not in _ROOT_KEYS]
        typos = _near_misses(ignored, "", _ROOT_NEAR)
        agents_node = object_at(root.get("agents"), "agents")
        outside = [key for key in agents_node if key not in _AGENTS_KEYS]
        typos += _near_misses(outside, "agents.", _AGENTS_NEAR)
        ignored += [f"agents.{key}" for key in outside]
        defaults = object_at(agents_node.get("defaults"), "agents.defaults")
        outside = [k for k in defaults if k not in _DEFAULTS_KEYS]
        typos += _near_misses(outside, "agents.defaults.", _DEFAULTS_NEAR)
        ignored += [f"agents.defaults.{k}" for k in outside]
        defaults_block = _flatten_block(defaults.get("memorySearch"), "agents.defaults")
        defaults_workspace = optional_string(defaults.get("workspace"), "agents.defaults.workspace")

        entries = agents_node.get("list")
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            raise ConfigError("agents.list", "must be a list of agent objects")
        ids: list[str] = []
        flagged_default: str | None = None
        entry_blocks: dict[str, _Flat] = {}
        entry_workspaces: dict[str, str] = {}
        for index, raw in enumerate(entries):
            path = f"agents.list[{index}]"
            entry = object_at(raw, path)
            outside = [k for k in entry if k not in _ENTRY_KEYS]
            typos += _near_misses(outside, f"{path}.", _ENTRY_NEAR)
            ignored += [f"{path}.{k}" for k in outside]
            agent = entry.get("id")
            if not isinstance(agent, str):
                raise ConfigError(f"{path}.id", "every agent needs a string id")
            validate_agent_id(agent, f"{path}.id")
            if agent in ids:
                raise ConfigError(f"{path}.id", f"duplicate agent id {agent!r}")
            ids.append(agent)
            flag = entry.get("default")
            if flag is not None and not isinstance(flag, bool):
                raise ConfigError(f"{path}.default", "must be true or false")
            if flag is True and flagged_default is None:
                flagged_default = agent
            workspace = optional_string(entry.get("workspace"), f"{path}.workspace")
            if workspace is not None:
                entry_workspaces[agent] = workspace
            entry_blocks[agent] = _flatten_block(entry.get("memorySearch"), path)

        memory = _flatten(object_at(root.get("memory"), "memory"), _MEMORY_TREE, "memory", "")
        unused = typos + [
            found
            for block in (defaults_block, *entry_blocks.values())
            for found in _ignored_in_block(block)
        ]
        backend = memory.get("backend")
        if backend is not None and backend.value == "qmd":
            unused.append(
                IgnoredKey(
                    backend.origin,
                    "memlane has no QMD backend: its builtin index is used and memory.qmd is "
                    "not read",
                )
            )
        if "qmd" in memory:
            ignored.append("memory.qmd")
        citations = _as_citations(memory["citations"].value) if "citations" in memory else "auto"

        agents = tuple(ids) or (DEFAULT_AGENT_ID,)
        return cls(
            agents=agents,
            default_agent=flagged_default or agents[0],
            listed=bool(ids),
            defaults_block=defaults_block,
            defaults_workspace=defaults_workspace,
            entry_blocks=entry_blocks,
            entry_workspaces=entry_workspaces,
            citations=citations,
            ignored=tuple(ignored),
            ignored_settings=tuple(unused),
            providers=parse_providers(root.get("models")),
        )

    def select(self, agent_id: str | None) -> str:
        if agent_id is None:
            return self.default_agent
        validate_agent_id(agent_id)
        if self.listed and agent_id not in self.agents:
            known = ", ".join(self.agents)
            raise ConfigError("agents.list", f"no agent with id {agent_id!r} (known: {known})")
        return agent_id


_REMOTE_MODEL_PREFIXES: Final = ("hf:", "http:", "https:")


def _ignored_in_block(block: _Flat) -> list[IgnoredKey]:
    """The ignored keys set in one memorySearch block, with the values that make them so."""
    found: list[IgnoredKey] = []
    for rel, leaf in block.items():
        key = _KEYS[rel]
        if key.ignored:
            found.append(IgnoredKey(leaf.origin, key.ignored))
        elif rel == "multimodal.enabled" and leaf.value is True:
            found.append(
                IgnoredKey(leaf.origin, "memlane indexes text only: images and audio are skipped")
            )
        elif (
            rel == "local.modelPath"
            and isinstance(leaf.value, str)
            and leaf.value.startswith(_REMOTE_MODEL_PREFIXES)
        ):
            found.append(
                IgnoredKey(
                    leaf.origin,
                    "memlane does not download models: the bundled local model is used instead",
                )
            )
    return found


def _flatten_block(node: object, owner: str) -> _Flat:
    path = f"{owner}.memorySearch"
    return _flatten(object_at(node, path), _MEMORY_SEARCH_TREE, path, "")


def _flatten(node: Mapping[str, object], schema: _Tree, path: str, relative: str) -> _Flat:
    """Validate `node` against `schema`; return its set leaves keyed by relative dotted key."""
    flat: _Flat = {}
    for key, value in node.items():
        full = f"{path}.{key}"
        spec = schema.get(key)
        if spec is None:
            raise ConfigError(full, _unknown_key_message(key, schema))
        rel = f"{relative}.{key}" if relative else key
        if isinstance(spec, Key):
            if value is not None:
                flat[rel] = _Value(check_leaf(spec, value, full), full)
        else:
            flat.update(_flatten(object_at(value, full), spec, full, rel))
    return flat


# Keys outside memlane's blocks belong to the reference system's config and are tolerated (it
# has dozens memlane does not read). One that is a near miss of a key memlane reads, or a key
# of memlane's written at the wrong level, is most likely a typo whose settings would silently
# go unused: it is reported (a warning, `ignoredKeys` in `status --json`) with the key meant.
# Name -> where it is written, per level.
_ROOT_NEAR: Final = {
    **{k: k for k in _ROOT_KEYS},
    "memorySearch": "agents.defaults.memorySearch",
    "workspace": "agents.defaults.workspace",
}
_AGENTS_NEAR: Final = {
    **{k: f"agents.{k}" for k in _AGENTS_KEYS},
    "memorySearch": "agents.defaults.memorySearch",
    "workspace": "agents.defaults.workspace",
}
_DEFAULTS_NEAR: Final = {k: f"agents.defaults.{k}" for k in _DEFAULTS_KEYS}
_ENTRY_NEAR: Final = {k: k for k in _ENTRY_KEYS}
_NEAR_CUTOFF: Final = 0.75  # `agent`, `memorySerach`, `defualts`; no key of the reference's


def _near_misses(keys: Sequence[str], prefix: str, known: Mapping[str, str]) -> list[IgnoredKey]:
    """The `keys` (unknown at their level) that look like a key memlane reads, as warnings."""
    found = []
    for key in keys:
        close = difflib.get_close_matches(key, list(known), n=1, cutoff=_NEAR_CUTOFF)
        if close:
            meant = known[close[0]]
            meant = meant if "." in meant else f"{prefix}{meant}"
            found.append(
                IgnoredKey(
                    f"{prefix}{key}",
                    f"memlane reads no such key here: did you mean {meant!r}? (what it holds is "
                    "not used)",
                )
            )
    return found


def _unknown_key_message(key: str, schema: _Tree) -> str:
    close = difflib.get_close_matches(key, list(schema), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key{hint}"


def _as_citations(value: object) -> CitationsMode:
    if value == "on":
        return "on"
    if value == "off":
        return "off"
    return "auto"
