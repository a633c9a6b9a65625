"""Entry points: configuration, a pipeline of stages from a JSON5 file to one agent's settings.

Each stage is one module, called once, in order; none calls back into an earlier one::

    --config / $MEMLANE_CONFIG / ~/.memlane/config.json5, env, flags
        │
        ▼  read.py       file (bounded), $include, env block, ${VAR}, MEMLANE_* and flag overrides
    RawConfig            one raw tree (+ the tree as written, the file, the merged environment)
        │
        ▼  validate.py   every key checked against the key table, every agent's block
    ValidConfig          agents, each block's set leaves with the path they were written at,
        │                memory block, models.providers, keys outside memlane's blocks
        ▼  merge.py      agent ?? defaults ?? table default, numbers clamped
    Merged               one agent's complete leaves
        │
        ▼  build.py      the rules that join keys (provider ids, fusion weights, aliases)
    MemorySettings       + the ignored keys, each with its reason

`keys.py` is the declarative key table every stage reads (kind, choices, range, doc; defaults
come from the domain's settings objects); `schema.py` publishes it (JSON Schema, README key
list, `status --json`). `runtime.py` drives the stages for an entry point and adds the paths
(state dir, index, transcripts, workspace) and what the environment gives at use (API keys,
base URLs, the store URL). Every error is a ConfigError naming the key (dotted path) or the file.
"""
