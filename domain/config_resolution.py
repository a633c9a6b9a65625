"""Domain: resolve the raw config tree (§24) into one agent's MemorySettings, validating every key.

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
clamped as §24 says (clamping is not an error), integers are floored. Keys outside those blocks
belong to the host system's config (model, gateway, channels, ...) and are tolerated;
`ignored_keys()` lists them so an entry point can mention them.

Deliberate differences from the reference:

- `sources` defaults to `["memory", "sessions"]`; `experimental.sessionMemory` is accepted but not
  required for `sessions` to be kept. An empty list still means `["memory"]`.
- `provider` also accepts `"none"`: explicit keyword-only mode, no embeddings (§32.3). An explicit
  provider without a `model` gets that provider's default model (`local`: our bundled model).
- `cache.maxEntries` defaults to 100 000 instead of unbounded (§31.23).
- `query.maxResults` is floored and clamped to [1, 100] (§31.20, §31.30); the candidate pool per
  leg is `maxResults * candidateMultiplier` capped at 1000 (`candidate_limit`), not a silent 200;
  a fused (hybrid) search fetches at least `query.hybrid.minCandidates` (ours, default 200,
  [1, 1000]) per leg, so its ranking does not depend on how few results were asked for.
- Our additions: `query.hybrid.fusion` (`"zscore"` default | `"weighted"` | `"rrf"`) and
  `query.hybrid.rrfK` (default 60, [1, 1000]). The weights' defaults follow the fusion: 0.5 / 0.5
  (vector / text) for `zscore`, the reference's 0.7 / 0.3 for `weighted` and `rrf`;
  `redaction.enabled`, `redaction.extraPatterns` (each must compile) and `redaction.notes`
  (default false: notes are indexed as written, as in the reference);
  `sync.firstSearchWaitMs` (default 30 000, [0, 600 000], §31.24); `sessions.dir`;
  `remote.timeoutSeconds` / `remote.queryTimeoutSeconds` ([1, 3600]) and `remote.maxConcurrency`
  ([1, 64]) (§32.13); `local.threads` ([1, 256]).
- `remote.apiKey` may be a string or an env SecretRef `{"source": "env", "id": "OPENAI_API_KEY"}`;
  the ref is kept (`RemoteSettings.api_key_ref`) and read from the environment by the entry points.
  `file` / `exec` SecretRefs are not supported and are errors.
- `multimodal` is accepted only with `enabled: false` (not supported yet); `memory.backend` must be
  `"builtin"` (no QMD backend); `memory.qmd` is tolerated and ignored.
- `store.path` defaults to `<state dir>/agents/<agent id>/memory.db` (the entry points compute it).
- Batch tuning is clamped too: `pollIntervalMs` [100, 3 600 000], `timeoutMinutes` [1, 1440].
- An `agent_id` that is not in a non-empty `agents.list` is an error rather than a silent new agent;
  agent ids must match `[A-Za-z0-9][A-Za-z0-9_-]{0,63}` because they become directory names.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.config import (
    DEFAULT_FUSION_WEIGHTS,
    DEFAULT_MODELS,
    BatchSettings,
    CacheSettings,
    CitationsMode,
    DecaySettings,
    FallbackName,
    FusionName,
    HybridSettings,
    LocalSettings,
    MemorySettings,
    MmrSettings,
    ProviderName,
    QuerySettings,
    RedactionSettings,
    RemoteSettings,
    SecretRef,
    SessionSyncSettings,
    StoreSettings,
    SyncSettings,
)
from memlane.domain.errors import ConfigError
from memlane.domain.sources import Source

DEFAULT_AGENT_ID: Final = "main"
MAX_RESULTS_LIMIT: Final = 100
CANDIDATE_POOL_LIMIT: Final = 1000
_MAX_SAFE_INT: Final = 2**53 - 1
_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True, slots=True)
class _Kind:
    """What a leaf key accepts: its name and, for closed sets, the allowed strings."""

    name: str
    choices: tuple[str, ...] = ()


_Schema: TypeAlias = Mapping[str, "_Schema | _Kind"]

_BOOL: Final = _Kind("bool")
_NUMBER: Final = _Kind("number")
_STRING: Final = _Kind("string")
_STRINGS: Final = _Kind("strings")
_PATTERNS: Final = _Kind("patterns")
_HEADERS: Final = _Kind("headers")
_SECRET: Final = _Kind("secret")
_OPAQUE: Final = _Kind("opaque")


def _choice(*values: str) -> _Kind:
    return _Kind("choice", values)


def _choices(*values: str) -> _Kind:
    return _Kind("choices", values)


_PROVIDERS: Final = ("auto", "none", "openai", "gemini", "voyage", "mistral", "ollama", "local")
_FALLBACKS: Final = ("none", "openai", "gemini", "voyage", "mistral", "ollama", "local")

MEMORY_SEARCH_SCHEMA: Final[_Schema] = {
    "enabled": _BOOL,
    "sources": _choices("memory", "sessions"),
    "experimental": {"sessionMemory": _BOOL},
    "extraPaths": _STRINGS,
    "multimodal": {
        "enabled": _BOOL,
        "modalities": _choices("image", "audio", "all"),
        "maxFileBytes": _NUMBER,
    },
    "provider": _choice(*_PROVIDERS),
    "model": _STRING,
    "outputDimensionality": _NUMBER,
    "fallback": _choice(*_FALLBACKS),
    "remote": {
        "baseUrl": _STRING,
        "apiKey": _SECRET,
        "headers": _HEADERS,
        "batch": {
            "enabled": _BOOL,
            "wait": _BOOL,
            "concurrency": _NUMBER,
            "pollIntervalMs": _NUMBER,
            "timeoutMinutes": _NUMBER,
        },
        "timeoutSeconds": _NUMBER,
        "queryTimeoutSeconds": _NUMBER,
        "maxConcurrency": _NUMBER,
    },
    "local": {"modelPath": _STRING, "modelCacheDir": _STRING, "threads": _NUMBER},
    "store": {
        "driver": _choice("sqlite"),
        "path": _STRING,
        "vector": {"enabled": _BOOL, "extensionPath": _STRING},
    },
    "chunking": {
        "tokens": _NUMBER,
        "overlap": _NUMBER,
        "sessionTokens": _NUMBER,
        "sessionOverlap": _NUMBER,
    },
    "sync": {
        "onSessionStart": _BOOL,
        "onSearch": _BOOL,
        "watch": _BOOL,
        "watchDebounceMs": _NUMBER,
        "intervalMinutes": _NUMBER,
        "firstSearchWaitMs": _NUMBER,
        "sessions": {"deltaBytes": _NUMBER, "deltaMessages": _NUMBER, "postCompactionForce": _BOOL},
    },
    "query": {
        "maxResults": _NUMBER,
        "minScore": _NUMBER,
        "hybrid": {
            "enabled": _BOOL,
            "vectorWeight": _NUMBER,
            "textWeight": _NUMBER,
            "candidateMultiplier": _NUMBER,
            "minCandidates": _NUMBER,
            "fusion": _choice("zscore", "weighted", "rrf"),
            "rrfK": _NUMBER,
            "mmr": {"enabled": _BOOL, "lambda": _NUMBER},
            "temporalDecay": {"enabled": _BOOL, "halfLifeDays": _NUMBER},
        },
    },
    "cache": {"enabled": _BOOL, "maxEntries": _NUMBER},
    "redaction": {"enabled": _BOOL, "extraPatterns": _PATTERNS, "notes": _BOOL},
    "sessions": {"dir": _STRING},
}

MEMORY_SCHEMA: Final[_Schema] = {
    "backend": _choice("builtin", "qmd"),
    "citations": _choice("auto", "on", "off"),
    "qmd": _OPAQUE,
}

_ROOT_KEYS: Final = frozenset({"agents", "memory"})
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
    merged = _merge(defaults, override)
    return _build(merged, config.citations)


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


def agent_ids(root: Mapping[str, object]) -> list[str]:
    """Return the configured agent ids in file order; `["main"]` when `agents.list` is empty."""
    return list(_Config.parse(root).agents)


def default_agent_id(root: Mapping[str, object]) -> str:
    """Return the default agent: the first entry with `default: true`, else the first entry."""
    return _Config.parse(root).default_agent


def ignored_keys(root: Mapping[str, object]) -> list[str]:
    """Return the dotted paths of keys outside memlane's blocks, tolerated and not used."""
    return list(_Config.parse(root).ignored)


def validate_agent_id(agent_id: str, key: str = "agentId") -> str:
    """Return `agent_id` unchanged if it is safe as a directory name, else raise ConfigError."""
    if not _AGENT_ID.fullmatch(agent_id):
        raise ConfigError(
            key, f"invalid agent id {agent_id!r}: use letters, digits, '_' and '-' (max 64)"
        )
    return agent_id


def candidate_limit(hybrid: HybridSettings, max_results: int, *, fused: bool) -> int:
    """Candidates per retriever: max_results x multiplier, at least `min_candidates` when the
    legs are fused, at most 1000 (§31.30). A single leg ranks the same at any pool size, so
    only fusion pays for the larger pool."""
    wanted = max_results * hybrid.candidate_multiplier
    if fused:
        wanted = max(wanted, hybrid.min_candidates)
    return min(CANDIDATE_POOL_LIMIT, wanted)


# --- parsing and validation -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Value:
    """A validated leaf and the full dotted path where it was written."""

    value: object
    origin: str


_Flat: TypeAlias = dict[str, _Value]


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

    @classmethod
    def parse(cls, root: Mapping[str, object]) -> _Config:
        if not isinstance(root, Mapping):
            raise ConfigError("<root>", "the configuration must be an object")
        ignored: list[str] = [key for key in root if key not in _ROOT_KEYS]
        agents_node = _object(root.get("agents"), "agents")
        ignored += [f"agents.{key}" for key in agents_node if key not in _AGENTS_KEYS]
        defaults = _object(agents_node.get("defaults"), "agents.defaults")
        ignored += [f"agents.defaults.{k}" for k in defaults if k not in _DEFAULTS_KEYS]
        defaults_block = _flatten_block(defaults.get("memorySearch"), "agents.defaults")
        defaults_workspace = _optional_string(
            defaults.get("workspace"), "agents.defaults.workspace"
        )

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
            entry = _object(raw, path)
            ignored += [f"{path}.{k}" for k in entry if k not in _ENTRY_KEYS]
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
            workspace = _optional_string(entry.get("workspace"), f"{path}.workspace")
            if workspace is not None:
                entry_workspaces[agent] = workspace
            entry_blocks[agent] = _flatten_block(entry.get("memorySearch"), path)

        memory = _flatten(_object(root.get("memory"), "memory"), MEMORY_SCHEMA, "memory", "")
        backend = memory.get("backend")
        if backend is not None and backend.value == "qmd":
            raise ConfigError(
                backend.origin, "the qmd backend is not supported; memlane is builtin only"
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
        )

    def select(self, agent_id: str | None) -> str:
        if agent_id is None:
            return self.default_agent
        validate_agent_id(agent_id)
        if self.listed and agent_id not in self.agents:
            known = ", ".join(self.agents)
            raise ConfigError("agents.list", f"no agent with id {agent_id!r} (known: {known})")
        return agent_id


def _flatten_block(node: object, owner: str) -> _Flat:
    path = f"{owner}.memorySearch"
    return _flatten(_object(node, path), MEMORY_SEARCH_SCHEMA, path, "")


def _flatten(node: Mapping[str, object], schema: _Schema, path: str, relative: str) -> _Flat:
    """Validate `node` against `schema`; return its set leaves keyed by relative dotted key."""
    flat: _Flat = {}
    for key, value in node.items():
        full = f"{path}.{key}"
        spec = schema.get(key)
        if spec is None:
            raise ConfigError(full, _unknown_key_message(key, schema))
        rel = f"{relative}.{key}" if relative else key
        if isinstance(spec, _Kind):
            if value is not None:
                flat[rel] = _Value(_check(spec, value, full), full)
        else:
            flat.update(_flatten(_object(value, full), spec, full, rel))
    return flat


def _unknown_key_message(key: str, schema: _Schema) -> str:
    close = difflib.get_close_matches(key, list(schema), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key{hint}"


def _object(node: object, path: str) -> Mapping[str, object]:
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        raise ConfigError(path, f"must be an object, not {_type_name(node)}")
    return node


def _optional_string(node: object, path: str) -> str | None:
    if node is None:
        return None
    if not isinstance(node, str):
        raise ConfigError(path, f"must be a string, not {_type_name(node)}")
    return node


def _check(kind: _Kind, value: object, path: str) -> object:
    """Return the validated value of one leaf, or raise ConfigError naming `path`."""
    if kind.name == "bool":
        if not isinstance(value, bool):
            raise ConfigError(path, f"must be true or false, not {_type_name(value)}")
        return value
    if kind.name == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(path, f"must be a number, not {_type_name(value)}")
        if not math.isfinite(value):
            raise ConfigError(path, f"must be a finite number, not {value}")
        return value
    if kind.name == "string":
        return _optional_string(value, path)
    if kind.name == "choice":
        if not isinstance(value, str) or value not in kind.choices:
            raise ConfigError(path, f"must be one of {_listing(kind.choices)}, not {value!r}")
        return value
    if kind.name in ("strings", "choices", "patterns"):
        items = _string_list(value, path)
        for index, item in enumerate(items):
            if kind.name == "choices" and item not in kind.choices:
                allowed = _listing(kind.choices)
                raise ConfigError(f"{path}[{index}]", f"must be one of {allowed}, not {item!r}")
            if kind.name == "patterns":
                _check_pattern(item, f"{path}[{index}]")
        return items
    if kind.name == "headers":
        headers = _object(value, path)
        for name, header in headers.items():
            if not isinstance(header, str):
                raise ConfigError(f"{path}.{name}", "header values must be strings")
        return tuple((name, str(header)) for name, header in headers.items())
    if kind.name == "secret":
        return _secret(value, path)
    return value  # opaque: tolerated as written


def _string_list(value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(path, f"must be a list of strings, not {_type_name(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigError(f"{path}[{index}]", f"must be a string, not {_type_name(item)}")
    return tuple(str(item) for item in value)


def _check_pattern(pattern: str, path: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ConfigError(path, f"not a valid regular expression: {exc}") from exc


def _secret(value: object, path: str) -> str | SecretRef:
    if isinstance(value, str):
        return value
    ref = _object(value, path)
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


def _type_name(value: object) -> str:
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


def _as_citations(value: object) -> CitationsMode:
    if value == "on":
        return "on"
    if value == "off":
        return "off"
    return "auto"


# --- merging and building ---------------------------------------------------------------------


def _merge(defaults: _Flat, override: _Flat) -> _Flat:
    """Per key: override ?? defaults; extraPaths concatenated (defaults first)."""
    merged = {**defaults, **override}
    paths = [
        path
        for block in (defaults, override)
        if "extraPaths" in block
        for path in _strings(block["extraPaths"].value)
    ]
    if paths:
        cleaned = dict.fromkeys(p.strip() for p in paths if p.strip())
        origin = (override.get("extraPaths") or defaults["extraPaths"]).origin
        merged["extraPaths"] = _Value(tuple(cleaned), origin)
    return merged


def _strings(value: object) -> tuple[str, ...]:
    return (
        tuple(item for item in value if isinstance(item, str)) if isinstance(value, tuple) else ()
    )


class _Reader:
    """Typed access to the merged leaves, with the clamps of §24."""

    def __init__(self, merged: _Flat) -> None:
        self._merged = merged

    def raw(self, key: str) -> _Value | None:
        return self._merged.get(key)

    def flag(self, key: str, default: bool) -> bool:
        found = self._merged.get(key)
        return found.value if found is not None and isinstance(found.value, bool) else default

    def number(self, key: str, default: float, low: float, high: float) -> float:
        found = self._merged.get(key)
        if found is None or not isinstance(found.value, int | float):
            return default
        return min(high, max(low, float(found.value)))

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        found = self._merged.get(key)
        if found is None or not isinstance(found.value, int | float):
            return default
        return min(high, max(low, math.floor(found.value)))

    def optional_integer(self, key: str, low: int, high: int) -> int | None:
        if key not in self._merged:
            return None
        return self.integer(key, low, low, high)

    def text(self, key: str) -> str | None:
        found = self._merged.get(key)
        return found.value if found is not None and isinstance(found.value, str) else None

    def strings(self, key: str) -> tuple[str, ...]:
        found = self._merged.get(key)
        return _strings(found.value) if found is not None else ()


def _build(merged: _Flat, citations: CitationsMode) -> MemorySettings:
    read = _Reader(merged)
    multimodal = read.raw("multimodal.enabled")
    if multimodal is not None and multimodal.value is True:
        raise ConfigError(multimodal.origin.removesuffix(".enabled"), "not supported yet")
    provider = _provider(read.text("provider"))
    return MemorySettings(
        enabled=read.flag("enabled", True),
        sources=_sources(read.strings("sources"), "sources" in merged),
        extra_paths=read.strings("extraPaths"),
        provider=provider,
        model=_model(read.text("model"), provider),
        output_dimensionality=read.optional_integer("outputDimensionality", 1, 65_536),
        fallback=_fallback(read.text("fallback")),
        remote=_remote(read),
        local=LocalSettings(
            model_path=read.text("local.modelPath"),
            model_cache_dir=read.text("local.modelCacheDir"),
            threads=read.optional_integer("local.threads", 1, 256),
        ),
        store=StoreSettings(
            path=read.text("store.path"),
            vector_enabled=read.flag("store.vector.enabled", True),
            extension_path=read.text("store.vector.extensionPath"),
        ),
        chunking=_chunking(read),
        session_chunking=_session_chunking(read),
        sync=_sync(read),
        query=_query(read),
        cache=CacheSettings(
            enabled=read.flag("cache.enabled", True),
            max_entries=read.integer("cache.maxEntries", 100_000, 1, _MAX_SAFE_INT),
        ),
        redaction=RedactionSettings(
            enabled=read.flag("redaction.enabled", True),
            extra_patterns=read.strings("redaction.extraPatterns"),
            notes=read.flag("redaction.notes", False),
        ),
        citations=citations,
        sessions_dir=read.text("sessions.dir"),
    )


def _provider(value: str | None) -> ProviderName:
    for name in _PROVIDER_NAMES:
        if value == name:
            return name
    return "auto"


_PROVIDER_NAMES: Final[tuple[ProviderName, ...]] = (
    "auto", "none", "openai", "gemini", "voyage", "mistral", "ollama", "local",
)  # fmt: skip
_FALLBACK_NAMES: Final[tuple[FallbackName, ...]] = (
    "none", "openai", "gemini", "voyage", "mistral", "ollama", "local",
)  # fmt: skip


def _fallback(value: str | None) -> FallbackName:
    for name in _FALLBACK_NAMES:
        if value == name:
            return name
    return "none"


def _model(value: str | None, provider: ProviderName) -> str:
    model = (value or "").strip()
    return model or DEFAULT_MODELS.get(provider, "")


def _sources(values: Sequence[str], configured: bool) -> tuple[Source, ...]:
    if not configured:
        return ("memory", "sessions")
    chosen: list[Source] = []
    for value in values:
        source: Source = "sessions" if value == "sessions" else "memory"
        if source not in chosen:
            chosen.append(source)
    return tuple(chosen) or ("memory",)


def _remote(read: _Reader) -> RemoteSettings:
    key = read.raw("remote.apiKey")
    api_key = key.value if key is not None and isinstance(key.value, str) else None
    api_key_ref = key.value if key is not None and isinstance(key.value, SecretRef) else None
    headers = read.raw("remote.headers")
    header_pairs = headers.value if headers is not None else ()
    return RemoteSettings(
        base_url=read.text("remote.baseUrl"),
        api_key=api_key or None,
        api_key_ref=api_key_ref,
        headers=tuple(
            (str(name), str(value))
            for name, value in (header_pairs if isinstance(header_pairs, tuple) else ())
        ),
        batch=BatchSettings(
            enabled=read.flag("remote.batch.enabled", False),
            wait=read.flag("remote.batch.wait", True),
            concurrency=read.integer("remote.batch.concurrency", 2, 1, 64),
            poll_interval_ms=read.integer("remote.batch.pollIntervalMs", 2000, 100, 3_600_000),
            timeout_minutes=read.integer("remote.batch.timeoutMinutes", 60, 1, 1440),
        ),
        timeout_seconds=read.number("remote.timeoutSeconds", 60.0, 1.0, 3600.0),
        query_timeout_seconds=read.number("remote.queryTimeoutSeconds", 20.0, 1.0, 3600.0),
        max_concurrency=read.integer("remote.maxConcurrency", 4, 1, 64),
    )


def _session_chunking(read: _Reader) -> ChunkingPolicy:
    """Transcripts get smaller chunks: a hit is a few turns, not a whole conversation."""
    tokens = read.integer("chunking.sessionTokens", 150, 1, _MAX_SAFE_INT)
    overlap = read.integer("chunking.sessionOverlap", 30, 0, _MAX_SAFE_INT)
    return ChunkingPolicy(tokens=tokens, overlap=min(overlap, max(0, tokens - 1)))


def _chunking(read: _Reader) -> ChunkingPolicy:
    tokens = read.integer("chunking.tokens", 400, 1, _MAX_SAFE_INT)
    overlap = read.integer("chunking.overlap", 80, 0, _MAX_SAFE_INT)
    return ChunkingPolicy(tokens=tokens, overlap=min(overlap, max(0, tokens - 1)))


def _sync(read: _Reader) -> SyncSettings:
    return SyncSettings(
        on_session_start=read.flag("sync.onSessionStart", True),
        on_search=read.flag("sync.onSearch", True),
        watch=read.flag("sync.watch", True),
        watch_debounce_ms=read.integer("sync.watchDebounceMs", 1500, 0, 3_600_000),
        interval_minutes=read.integer("sync.intervalMinutes", 0, 0, 525_600),
        sessions=SessionSyncSettings(
            delta_bytes=read.integer("sync.sessions.deltaBytes", 100_000, 0, _MAX_SAFE_INT),
            delta_messages=read.integer("sync.sessions.deltaMessages", 50, 0, _MAX_SAFE_INT),
            post_compaction_force=read.flag("sync.sessions.postCompactionForce", True),
        ),
        first_search_wait_ms=read.integer("sync.firstSearchWaitMs", 30_000, 0, 600_000),
    )


def _fusion_name(value: str | None) -> FusionName:
    if value == "weighted":
        return "weighted"
    return "rrf" if value == "rrf" else "zscore"


def _query(read: _Reader) -> QuerySettings:
    fusion = _fusion_name(read.text("query.hybrid.fusion"))
    default_vector, default_text = DEFAULT_FUSION_WEIGHTS[fusion]
    vector = read.number("query.hybrid.vectorWeight", default_vector, 0.0, 1.0)
    text = read.number("query.hybrid.textWeight", default_text, 0.0, 1.0)
    total = vector + text
    vector, text = (default_vector, default_text) if total == 0 else (vector / total, text / total)
    return QuerySettings(
        max_results=read.integer("query.maxResults", 6, 1, MAX_RESULTS_LIMIT),
        min_score=read.number("query.minScore", 0.35, 0.0, 1.0),
        hybrid=HybridSettings(
            enabled=read.flag("query.hybrid.enabled", True),
            vector_weight=vector,
            text_weight=text,
            candidate_multiplier=read.integer("query.hybrid.candidateMultiplier", 4, 1, 20),
            min_candidates=read.integer("query.hybrid.minCandidates", 200, 1, CANDIDATE_POOL_LIMIT),
            fusion=fusion,
            rrf_k=read.integer("query.hybrid.rrfK", 60, 1, 1000),
            mmr=MmrSettings(
                enabled=read.flag("query.hybrid.mmr.enabled", False),
                lambda_=read.number("query.hybrid.mmr.lambda", 0.7, 0.0, 1.0),
            ),
            temporal_decay=DecaySettings(
                enabled=read.flag("query.hybrid.temporalDecay.enabled", False),
                half_life_days=read.integer(
                    "query.hybrid.temporalDecay.halfLifeDays", 30, 1, 36_500
                ),
            ),
        ),
    )
