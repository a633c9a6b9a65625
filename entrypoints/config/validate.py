"""Entry points, configuration stage 2, validate: the raw tree checked against the key table.

The tree has the reference system's shape, so its config can be brought unchanged::

    {"agents": {"defaults": {"memorySearch": {...}, "workspace": "..."},
                "list": [{"id": "main", "memorySearch": {...}, "workspace": "..."}]},
     "memory": {"citations": "auto"},
     "models": {"providers": {"<id>": {"baseUrl": ..., "apiKey": ..., "headers": ...}}}}

Every key inside a `memorySearch` block and the `memory` block is checked, every agent's block
too, so a typo anywhere is reported: an unknown key or a value of the wrong type raises
ConfigError whose key is the full dotted path where the value was written
(`agents.list[1].memorySearch.query.hybrid.vectorWeight`). NaN, infinities, booleans and strings
where numbers are expected are errors; range is not checked here (the merge stage clamps). A
JSON `null` counts as unset. Keys outside those blocks belong to the host system's config (model,
gateway, channels, ...) and are tolerated; `ValidConfig.ignored` lists them. Of
`models.providers` only the fields embeddings use are checked (`baseUrl`, `apiKey`, `headers`,
`api`).

An agent id must match `[A-Za-z0-9][A-Za-z0-9_-]{0,63}` (it becomes a directory name); asking
for an id that is not in a non-empty `agents.list` is an error rather than a silent new agent.

The result, `ValidConfig`, holds each block's set leaves by relative dotted key with the path
they were written at, so the later stages name the key of any error without the tree.

This module walks the tree; one value against its row is checked in validating/leaves.py, the
`models.providers` entries are read in validating/models_providers.py.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeAlias, get_args

from memlane.domain.config import CitationsMode
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.keys import MEMORY_KEYS, MEMORY_SEARCH_KEYS, Key, KeyTree, key_tree
from memlane.entrypoints.config.validating.leaves import check_leaf, object_at, optional_string
from memlane.entrypoints.config.validating.models_providers import RawEndpoint, parse_providers

DEFAULT_AGENT_ID: Final = "main"
AGENT_ID_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
_AGENT_ID = re.compile(AGENT_ID_PATTERN)
_MEMORY_SEARCH_TREE: Final = key_tree(MEMORY_SEARCH_KEYS)
_MEMORY_TREE: Final = key_tree(MEMORY_KEYS)
_ROOT_KEYS: Final = frozenset({"agents", "memory", "models", "env"})
_AGENTS_KEYS: Final = frozenset({"defaults", "list"})
_DEFAULTS_KEYS: Final = frozenset({"memorySearch", "workspace"})
_ENTRY_KEYS: Final = frozenset({"id", "default", "workspace", "memorySearch"})
_CITATIONS: Final[tuple[CitationsMode, ...]] = get_args(CitationsMode)


@dataclass(frozen=True, slots=True)
class IgnoredKey:
    """A key of the reference's config that memlane accepts but does not implement."""

    key: str  # the full dotted path where it was written
    reason: str
    # The value was not dropped but brought into range (the reason says the value used).
    adjusted: bool = False

    @property
    def verb(self) -> str:
        """How a warning line names what became of it: "is ignored" or "is adjusted"."""
        return "is adjusted" if self.adjusted else "is ignored"


@dataclass(frozen=True, slots=True)
class Value:
    """A validated leaf and the full dotted path where it was written."""

    value: object
    origin: str


Flat: TypeAlias = dict[str, Value]


def validate(
    tree: Mapping[str, object],
    written: Mapping[str, object] | None = None,
    agent_id: str | None = None,
    *,
    set_by: Mapping[str, str] | None = None,
) -> ValidConfig:
    """Stage 2: check the whole tree against the key table (see the module doc), then the agent
    asked for (None: the default agent) against `agents.list`.

    `written` is the tree as the file wrote it, before the environment's and the flags'
    overrides: it is checked first (an error there is reported even when an override hides it)
    and the ignored keys are reported from it, as written. `set_by` names who set a
    memorySearch key in every block (`{"provider": "MEMLANE_PROVIDER"}`): that name is the
    value's origin, so this stage's and the build stage's errors name it.

    Raises:
        ConfigError: an unknown key, a wrong type, a bad agent id; the key is the dotted path.
    """
    first = None if written is None or written == tree else ValidConfig.parse(written)
    valid = ValidConfig.parse(tree, set_by)
    agent = valid.select(agent_id)
    return replace(
        valid, agent=agent, agent_workspace=valid.workspace(agent), as_written=first or valid
    )


@dataclass(frozen=True, slots=True)
class ValidConfig:
    """The validated skeleton of the tree: agents, their blocks and the memory block."""

    agents: tuple[str, ...]
    default_agent: str
    listed: bool
    defaults_block: Flat
    defaults_workspace: str | None
    entry_blocks: dict[str, Flat]
    entry_workspaces: dict[str, str]
    citations: CitationsMode
    ignored: tuple[str, ...]
    typos: tuple[IgnoredKey, ...]  # keys outside the blocks that look like one memlane reads
    memory: Flat
    providers: Mapping[str, RawEndpoint]
    # Set by `validate`: the agent asked for and its configured workspace (None: not named).
    agent: str = DEFAULT_AGENT_ID
    agent_workspace: str | None = None
    # The tree as the file wrote it, before the overrides (ignored keys are reported from it).
    as_written: ValidConfig | None = None

    @classmethod
    def parse(
        cls, root: Mapping[str, object], set_by: Mapping[str, str] | None = None
    ) -> ValidConfig:
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
        set_by = set_by or {}
        defaults_block = _flatten_block(defaults.get("memorySearch"), "agents.defaults", set_by)
        defaults_workspace = optional_string(defaults.get("workspace"), "agents.defaults.workspace")

        entries = [] if agents_node.get("list") is None else agents_node.get("list")
        if not isinstance(entries, list):
            raise ConfigError("agents.list", "must be a list of agent objects")
        ids: list[str] = []
        flagged_default: str | None = None
        entry_blocks: dict[str, Flat] = {}
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
            entry_blocks[agent] = _flatten_block(entry.get("memorySearch"), path, set_by)

        memory = _flatten(object_at(root.get("memory"), "memory"), _MEMORY_TREE, "memory", "")
        if "qmd" in memory:
            ignored.append("memory.qmd")
        written = memory["citations"].value if "citations" in memory else None
        citations = next((mode for mode in _CITATIONS if mode == written), _CITATIONS[0])  # auto

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
            typos=tuple(typos),
            memory=memory,
            providers=parse_providers(root.get("models")),
        )

    def workspace(self, agent: str) -> str | None:
        """The configured workspace of `agent` (None: not named): `agents.list[].workspace`,
        else `agents.defaults.workspace` for the default agent only, as in the reference."""
        if agent in self.entry_workspaces:
            return self.entry_workspaces[agent]
        return self.defaults_workspace if agent == self.default_agent else None

    def select(self, agent_id: str | None) -> str:
        """The agent asked for (None: the default agent), checked against `agents.list`."""
        if agent_id is None:
            return self.default_agent
        validate_agent_id(agent_id)
        if self.listed and agent_id not in self.agents:
            known = ", ".join(self.agents)
            raise ConfigError("agents.list", f"no agent with id {agent_id!r} (known: {known})")
        return agent_id


def _flatten_block(node: object, owner: str, set_by: Mapping[str, str]) -> Flat:
    path = f"{owner}.memorySearch"
    return _flatten(object_at(node, path), _MEMORY_SEARCH_TREE, path, "", set_by)


def _flatten(
    node: Mapping[str, object],
    schema: KeyTree,
    path: str,
    relative: str,
    set_by: Mapping[str, str] | None = None,
) -> Flat:
    """Validate `node` against `schema`; return its set leaves keyed by relative dotted key.

    A leaf's origin is its dotted path, or who set it (`set_by`, by relative key)."""
    flat: Flat = {}
    for key, value in node.items():
        full = f"{path}.{key}"
        spec = schema.get(key)
        if spec is None:
            close = difflib.get_close_matches(key, list(schema), n=1)
            raise ConfigError(
                full, "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
            )
        rel = f"{relative}.{key}" if relative else key
        if isinstance(spec, Key):
            origin = (set_by or {}).get(rel, full)
            if value is not None:
                flat[rel] = Value(check_leaf(spec, value, origin), origin)
        else:
            flat.update(_flatten(object_at(value, full), spec, full, rel, set_by))
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
        for close in difflib.get_close_matches(key, list(known), n=1, cutoff=_NEAR_CUTOFF):
            meant = known[close] if "." in known[close] else f"{prefix}{known[close]}"
            reason = f"memlane reads no such key here: did you mean {meant!r}? (what it holds is "
            found.append(IgnoredKey(f"{prefix}{key}", reason + "not used)"))
    return found


def validate_agent_id(agent_id: str, key: str = "agentId") -> str:
    """Return `agent_id` unchanged if it is safe as a directory name, else raise ConfigError."""
    if not _AGENT_ID.fullmatch(agent_id):
        raise ConfigError(
            key, f"invalid agent id {agent_id!r}: use letters, digits, '_' and '-' (max 64)"
        )
    return agent_id
