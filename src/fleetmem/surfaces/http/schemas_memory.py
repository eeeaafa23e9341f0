"""OpenAPI models of status, episodes, recall, forgetting, runs and presence.

They mirror :mod:`fleetmem.surfaces.views` and :mod:`fleetmem.surfaces.runs_views` field for
field (times are RFC 3339 UTC strings); see :mod:`fleetmem.surfaces.http.schemas` for how
they are attached to routes and checked.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fleetmem.surfaces.http.schemas import Open, Strict
from fleetmem.surfaces.http.schemas_facts import Fact


# ---- status --------------------------------------------------------------------------------
class ProviderState(Open):
    """The provider's self-description; upstreams add transport, where, breaker and more."""

    name: str
    state: str = Field(description="ok, starting, unavailable, breaker_open or incompatible")
    contract: int | None


class PendingWork(Strict):
    record: int
    forget: int
    oldest_record_age_s: float | None
    oldest_forget_age_s: float | None


class FailedWork(Strict):
    record: int
    forget: int


class UtilityRefusals(Strict):
    rate_limited: int
    daily_ceiling: int


class UtilityUse(Strict):
    calls_today: int = Field(description="utility calls let through since 00:00 UTC")
    refused_today: UtilityRefusals
    rate_per_minute: int = Field(description="[model_api] utility_rate_per_minute")
    daily_ceiling: int = Field(description="[model_api] utility_daily_ceiling")


class EmbedderHealth(Strict):
    """The same block ``/healthz`` and ``doctor --json`` carry."""

    model: str | None
    state: str = Field(description="ok, degraded, off or unchecked")
    search: str = Field(description="hybrid (words and meaning) or word-only")
    reason: str | None
    fix: str | None
    queries: str | None = Field(
        description="what search queries are embedded by (the offline model's int8 copy, or"
        " the shipped model and why); null for other embedders"
    )
    summary: str = Field(description="one line for people")


class VectorCount(Strict):
    total: int
    done: int
    missing: int


class ReembedProgress(Strict):
    """How much of the store has a vector of the active model (``fleetmem vectors``)."""

    model: str | None
    complete: bool
    percent: float
    episodes: VectorCount | None
    facts: VectorCount | None


class StatusOut(Strict):
    provider: ProviderState
    embedding_model: str | None
    embedder: EmbedderHealth
    reembed: ReembedProgress
    summaries: bool
    utility: UtilityUse
    episodes: dict[str, int] = Field(description="total, live, forgotten, with_summary")
    runs: dict[str, int] = Field(description="runs by episode status")
    pending: PendingWork
    failed: FailedWork
    vectors_missing: int
    index_segments: int = Field(
        description="segments of the built-in text index; the hourly upkeep merges them"
    )
    index_outside_largest: float = Field(
        description="share of the built-in text index outside its largest segment (0 to 1)"
    )
    retention_s: float | None


# ---- episodes ------------------------------------------------------------------------------
class IngestOut(Strict):
    run_id: str
    episode_id: str | None
    status: str = Field(description="recorded, pending, duplicate or skipped:<reason>")


class EpisodeBrief(Strict):
    episode_id: str
    run_id: str
    agent: str
    adapter: str
    model: str | None
    repo: str
    branch: str | None
    outcome: str
    scope: str
    trust_class: str
    started_at: str
    recorded_at: str
    forgotten_at: str | None
    summary: str | None


class EpisodeList(Strict):
    episodes: list[EpisodeBrief]


class IndexEntry(Strict):
    provider: str
    provider_id: str
    scope: str
    state: str
    recorded_at: str
    forgotten_at: str | None


class EpisodeDetail(EpisodeBrief):
    """What left the daemon: the episode object and text exactly as sent to providers."""

    episode: dict[str, Any] | None
    text: str | None
    summary_outcome: str | None
    index: list[IndexEntry]


class EpisodeForgotten(Strict):
    episode_id: str
    already_forgotten: bool
    provider_ids_pending: int = Field(description="provider copies still to forget (retried)")
    provider_ids_forgotten: int = Field(description="provider copies forgotten now")


class RecalledEpisode(Strict):
    kind: str
    episode_id: str
    provider: str
    provider_id: str
    score: float | None
    run_id: str
    agent: str
    adapter: str
    model: str | None
    repo: str
    branch: str | None
    outcome: str
    started_at: str
    trust_class: str
    untrusted: bool
    text: str


class RecalledFact(Fact):
    confidence: float = Field(description="from counted votes and human confirmation, 0 to 1")


class RecentRun(Strict):
    run_id: str
    agent: str
    adapter: str
    repo: str | None
    branch: str | None
    outcome: str
    reason: str
    ended_at: str
    duration_ms: int
    pull_request: str | None


class RecallOut(Strict):
    provider: str
    degraded: str | None = Field(description="why the answer is partial, e.g. provider_unavailable")
    dropped: dict[str, int] = Field(description="provider items dropped, by reason")
    items: list[RecalledEpisode] = Field(description="the episodes, best first")
    repo: str = Field(description="the repository recalled in")
    facts: list[RecalledFact] = Field(description="active facts of the scopes, best first")
    recent_runs: list[RecentRun] = Field(description="the runs that edited the given paths")


# ---- runs and presence ---------------------------------------------------------------------
class OpenedRun(Strict):
    run_id: str
    token: str = Field(description="the run token: Authorization: Bearer on the run endpoints")
    agent: str
    repo: str | None
    branch: str | None
    workdir: str | None
    opened_at: str
    expire_after_s: float


class HeartbeatIn(Strict):
    files: list[str] = Field(default_factory=list)
    branch: str | None = None


class LiveRun(Strict):
    run_id: str
    agent: str
    adapter: str | None
    repo: str | None
    branch: str | None
    workdir: str | None
    source: str
    opened_at: str
    last_seen_at: str
    closed_at: str | None
    close_reason: str | None
    files: list[str]
    state: str | None = None


class RunSummary(Strict):
    run_id: str
    agent: str
    adapter: str | None
    repo: str | None
    branch: str | None
    state: str = Field(description="live, expired or recorded")
    started_at: str
    ended_at: str | None
    outcome: str | None
    reason: str | None
    duration_ms: int | None
    pull_request: str | None
    files: int = Field(description="how many files the run touched")


class RunList(Strict):
    runs: list[RunSummary]


class StoredRun(Strict):
    agent: str
    adapter: str
    model: str | None
    trigger: str
    repo: str | None
    branch: str | None
    started_at: str
    ended_at: str
    duration_ms: int
    outcome: str
    reason: str
    pull_request: str | None
    episode: str = Field(description="the episode id, or skipped:<reason>")


class RunSession(Strict):
    session_id: str
    parent_id: str | None
    subagent: bool
    cwd: str
    repo: str | None
    branch: str | None
    edits: list[str]


class RunDetail(Strict):
    run_id: str
    live: LiveRun | None
    record: StoredRun | None
    sessions: list[RunSession]


class Presence(Strict):
    runs: list[LiveRun]


class Collision(Strict):
    strength: str
    overlap: list[str]
    run: LiveRun


class CallerOut(Strict):
    run_id: str
    agent: str
    repo: str | None
    branch: str | None
    scopes: list[str]
    state: str
    collisions: list[Collision]


# ---- briefing preview ----------------------------------------------------------------------
class BriefingSection(Strict):
    name: str
    shown: int
    omitted: int = Field(description="items that matched but did not fit (dropped)")
    chars: int = Field(description="characters of the items shown")
    budget_chars: int = Field(description="the section's share of max_chars")


class BriefingPreview(Strict):
    agent: str
    workspace: str = Field(description="the workspace the agent's runs act in ([agent.NAME])")
    repo: str | None = Field(description="the repository briefed for; null outside any")
    branch: str | None
    run_id: str | None = Field(description="the agent's live run the preview stands for, if any")
    text: str = Field(description="the document, byte for byte as the agent would receive it")
    empty: bool
    chars: int
    bytes: int
    max_chars: int = Field(description="the agent's briefing_max_chars")
    max_bytes: int
    sections: list[BriefingSection]
    facts: list[str] = Field(description="ids of the facts the document shows")
    provider: str
    degraded: str | None
    memory_briefing: bool = Field(description="whether runs get it prepended to their prompt")


# ---- provider conformance ------------------------------------------------------------------
class ProviderCheckIn(Strict):
    provider: str | None = Field(
        None,
        pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$",
        max_length=64,
        description="builtin or an [mcp.NAME]; default: configured",
    )


class ConformanceCheck(Strict):
    number: int
    name: str
    outcome: str = Field(description="pass, warn, fail or skip")
    detail: str


class ConformanceCleanup(Strict):
    recorded: int
    forgotten: int
    failed: int


class ProviderCheckOut(Strict):
    provider: str
    transport: str
    contract: int | None = Field(description="the contract version the provider declared")
    implementation: dict[str, Any] | None
    passed: bool
    checks: list[ConformanceCheck]
    cleanup: ConformanceCleanup
