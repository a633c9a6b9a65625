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
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeAlias, get_args

from memlane.domain.config import CitationsMode, SecretRef
from memlane.domain.errors import ConfigError
from memlane.entrypoints.config.keys import MEMORY_KEYS, MEMORY_SEARCH_KEYS, Key, KeyTree, key_tree

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
# A `models.providers` key left as `${VAR}` by the read stage: read from the environment at use.
_UNRESOLVED: Final = re.compile(r"^\$\{([A-Z_][A-Z0-9_]*)\}$")


@dataclass(frozen=True, slots=True)
class IgnoredKey:
    """A key of the reference's config that memlane accepts but does not implement."""

    key: str  # the full dotted path where it was written
    reason: str


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
) -> ValidConfig:
    """Stage 2: check the whole tree against the key table (see the module doc), then the agent
    asked for (None: the default agent) against `agents.list`.

    `written` is the tree as the file wrote it, before the environment's and the flags'
    overrides: it is checked first (an error there is reported even when an override hides it)
    and the ignored keys are reported from it, as written.

    Raises:
        ConfigError: an unknown key, a wrong type, a bad agent id; the key is the dotted path.
    """
    first = None if written is None or written == tree else ValidConfig.parse(written)
    valid = ValidConfig.parse(tree)
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
    def parse(cls, root: Mapping[str, object]) -> ValidConfig:
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
            entry_blocks[agent] = _flatten_block(entry.get("memorySearch"), path)

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


def _flatten_block(node: object, owner: str) -> Flat:
    path = f"{owner}.memorySearch"
    return _flatten(object_at(node, path), _MEMORY_SEARCH_TREE, path, "")


def _flatten(node: Mapping[str, object], schema: KeyTree, path: str, relative: str) -> Flat:
    """Validate `node` against `schema`; return its set leaves keyed by relative dotted key."""
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
            if value is not None:
                flat[rel] = Value(check_leaf(spec, value, full), full)
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


# --- models.providers --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RawEndpoint:
    """One validated `models.providers.<id>` entry, as far as embeddings use it."""

    path: str
    base_url: str | None
    api_key: str | SecretRef | None
    headers: tuple[tuple[str, str], ...]
    api: str | None


def parse_providers(models: object) -> dict[str, RawEndpoint]:
    """Validate the embedding-relevant fields of `models.providers`; other fields are skipped.

    Raises:
        ConfigError: a field of the wrong type, named by its full path.
    """
    if models is None:
        return {}
    if not isinstance(models, Mapping):
        raise ConfigError("models", "must be an object")
    providers = models.get("providers")
    if providers is None:
        return {}
    if not isinstance(providers, Mapping):
        raise ConfigError("models.providers", "must be an object")
    parsed: dict[str, RawEndpoint] = {}
    for ident, entry in providers.items():
        path = f"models.providers.{ident}"
        if not isinstance(entry, Mapping):
            raise ConfigError(path, "must be an object")
        headers = entry.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(
            isinstance(v, str) for v in headers.values()
        ):
            raise ConfigError(f"{path}.headers", "must be an object of string values")
        parsed[str(ident)] = RawEndpoint(
            path=path,
            base_url=_text(entry.get("baseUrl"), f"{path}.baseUrl"),
            api_key=_key(entry.get("apiKey"), f"{path}.apiKey"),
            headers=tuple((str(k), str(v)) for k, v in headers.items()),
            api=_text(entry.get("api"), f"{path}.api"),
        )
    return parsed


def _text(value: object, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(path, "must be a string")
    return value.strip() or None


def _key(value: object, path: str) -> str | SecretRef | None:
    """A key string, an env SecretRef, or a `${VAR}` left for when the provider is used."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        source, ident = value.get("source"), value.get("id")
        if source != "env" or not isinstance(ident, str) or not ident:
            raise ConfigError(path, "only {source: 'env', id: 'VAR'} references are supported")
        return SecretRef(source="env", id=ident)
    if not isinstance(value, str):
        raise ConfigError(path, "must be a string or an env secret reference")
    unresolved = _UNRESOLVED.match(value.strip())
    if unresolved:
        return SecretRef(source="env", id=unresolved.group(1))
    return value.strip() or None


# --- one value against its row of the key table -------------------------------------------


def object_at(node: object, path: str) -> Mapping[str, object]:
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        raise ConfigError(path, f"must be an object, not {type_name(node)}")
    return node


def optional_string(node: object, path: str) -> str | None:
    if node is None:
        return None
    if not isinstance(node, str):
        raise ConfigError(path, f"must be a string, not {type_name(node)}")
    return node


def check_leaf(key: Key, value: object, path: str) -> object:
    """Return the validated value of one leaf, or raise ConfigError naming `path`."""
    kind = key.kind
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(path, f"must be true or false, not {type_name(value)}")
        return value
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(path, f"must be a number, not {type_name(value)}")
        if not math.isfinite(value):
            raise ConfigError(path, f"must be a finite number, not {value}")
        return value
    if kind in ("string", "provider"):
        return optional_string(value, path)
    if kind == "choice":
        if not isinstance(value, str) or value not in key.choices:
            raise ConfigError(path, f"must be one of {_listing(key.choices)}, not {value!r}")
        return value
    if kind in ("strings", "choices", "patterns"):
        items = _string_list(value, path)
        for index, item in enumerate(items):
            if kind == "choices" and item not in key.choices:
                allowed = _listing(key.choices)
                raise ConfigError(f"{path}[{index}]", f"must be one of {allowed}, not {item!r}")
            if kind == "patterns":
                _check_pattern(item, f"{path}[{index}]")
        return items
    if kind == "headers":
        headers = object_at(value, path)
        for name, header in headers.items():
            if not isinstance(header, str):
                raise ConfigError(f"{path}.{name}", "header values must be strings")
        return tuple((name, str(header)) for name, header in headers.items())
    if kind == "secret":
        return _secret(value, path)
    return value  # opaque: tolerated as written


def _string_list(value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(path, f"must be a list of strings, not {type_name(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigError(f"{path}[{index}]", f"must be a string, not {type_name(item)}")
    return tuple(str(item) for item in value)


def _check_pattern(pattern: str, path: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ConfigError(path, f"not a valid regular expression: {exc}") from exc


def _secret(value: object, path: str) -> str | SecretRef:
    if isinstance(value, str):
        return value
    ref = object_at(value, path)
    unknown = [key for key in ref if key not in ("source", "id", "provider")]
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}", "unknown key in a secret reference")
    source, ident, provider = ref.get("source"), ref.get("id"), ref.get("provider")
    if source != "env":
        raise ConfigError(
            f"{path}.source", f"only 'env' secret references are supported, not {source!r}"
        )
    if not isinstance(ident, str) or not ident:
        raise ConfigError(f"{path}.id", "must name the environment variable")
    if provider is not None and not isinstance(provider, str):
        raise ConfigError(f"{path}.provider", "must be a string")
    return SecretRef(source="env", id=ident, provider=provider)


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _listing(choices: Sequence[str]) -> str:
    return ", ".join(repr(choice) for choice in choices)
