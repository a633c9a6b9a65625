"""Entry points: configuration, a pipeline of stages from a JSON5 file to one agent's settings.

Each stage is one module, entered once, in order, by `runtime.py`; none calls back into an
earlier one (tests/architecture/test_config_pipeline.py records the calls)::

    --config / $MEMLANE_CONFIG / ~/.memlane/config.json5, environment, flags
        │
        ▼  read.py       the file (bounded), $include, env block, ${VAR}, ~; MEMLANE_* and flag
    RawConfig            overrides -> one raw tree (+ as written); agent, workspace, state dir asked
        │
        ▼  validate.py   every value against its row of the key table, every key of every block;
    ValidConfig          the agent chosen; agents, each block's set leaves with the path written
        │                at, memory block, models.providers, keys outside memlane's blocks
        ▼  merge.py      agent ?? defaults ?? table default; numbers clamped to the table's range
    Merged               a value for every key, and where each written one was written
        │
        ▼  build.py      the rules that join keys (which provider an id names, fusion weights,
        │                aliases)
    MemorySettings       + the ignored keys, each with its reason

Eight modules: the four stages, the driver, `keys.py`, `schema.py` and this one.
`keys.py` is the declarative key table every stage reads (kind, choices, range, doc; defaults
come from the domain's settings objects); `schema.py` publishes it (JSON Schema, README key
list, `status --json`). `runtime.py` drives the stages for an entry point and adds the paths
(state dir, index, transcripts, workspace) and what the environment gives at use (API keys,
base URLs, the store URL). Every error is a ConfigError naming the key (dotted path) or the file.
"""
