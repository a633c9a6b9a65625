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

Eight modules a newcomer walks in that order: the four stages, the driver, `keys.py`,
`schema.py` and this one. `keys.py` is the declarative key table every stage reads (kind,
choices, range, doc; defaults come from the domain's settings objects); `schema.py` publishes it
(JSON Schema, README key list, `status --json`). `runtime.py` drives the stages for an entry
point and adds the paths (state dir, index, transcripts, workspace); its part `running/` reads
what the environment gives at use (API keys, base URLs, the store URL). Every error is a
ConfigError naming the key (dotted path) or the file.

Where a module grew past the ~400-line guide, its parts sit in a folder named for it; a part
calls no other module of this package, so the record of calls above still holds:

    key_table/   of keys.py: row.py (what a row is), embedding.py, store.py, sync.py, query.py
    reading/     of read.py: json5_text.py (parse, memo, depth), variables.py (env block,
                 ${VAR}), overrides.py (MEMLANE_* and flags)
    validating/  of validate.py: leaves.py (one value against its row), models_providers.py
    building/    of build.py: provider_choice.py (which provider and endpoints an id names)
    running/     of runtime.py: credentials.py (API keys, base URLs, the store URL, read when a
                 provider or the store is used, not while the stages run)
"""
