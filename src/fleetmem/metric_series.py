"""Every Prometheus series fleetmem records, in one registry per process.

Labels never carry a query, an id, a repository or text. Read them through
:mod:`fleetmem.metrics`, which imports this module (and the client) on first use.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

EPISODES_RECORDED = Counter(
    "fleetmem_episodes_recorded_total",
    "Episodes recorded to a provider, by outcome (ok, error, skipped).",
    ["provider", "outcome"],
    registry=REGISTRY,
)
UTILITY_CALLS = Counter(
    "fleetmem_utility_calls_total",
    "Utility-model calls asked for, by use and outcome (called, rate_limited, daily_ceiling).",
    ["use", "outcome"],
    registry=REGISTRY,
)
EPISODE_SUMMARIES = Counter(
    "fleetmem_episode_summaries_total",
    "Episode summaries requested, by outcome (ok, fallback).",
    ["outcome"],
    registry=REGISTRY,
)
RECALLS = Counter(
    "fleetmem_recalls_total",
    "Episode recalls, by outcome (ok, degraded, error).",
    ["provider", "outcome"],
    registry=REGISTRY,
)
RESULTS_DROPPED = Counter(
    "fleetmem_results_dropped_total",
    "Provider items dropped by the index filter, by reason.",
    ["provider", "reason"],
    registry=REGISTRY,
)
PROVIDER_DURATION = Histogram(
    "fleetmem_provider_duration_seconds",
    "Time spent in provider calls, by operation.",
    ["provider", "op"],
    registry=REGISTRY,
)
PROVIDER_UP = Gauge(
    "fleetmem_provider_up",
    "1 when the provider's last contract check passed, 0 when it failed or the session is"
    " down; absent before the first check.",
    ["provider"],
    registry=REGISTRY,
)
PENDING = Gauge(
    "fleetmem_pending",
    "Records and forgets waiting for a retry.",
    ["provider", "kind"],
    registry=REGISTRY,
)
INDEX_SEGMENTS = Gauge(
    "fleetmem_index_segments",
    "Segments of the built-in text index after the last upkeep pass (1 is the fastest to"
    " query; see docs/episodes.md for when the hourly pass merges them).",
    registry=REGISTRY,
)
RUNS_SKIPPED = Counter(
    "fleetmem_runs_skipped_total",
    "Closed runs that produced no episode, by reason.",
    ["reason"],
    registry=REGISTRY,
)

BRIEFING_SKIPS = Counter(
    "fleetmem_briefing_skips_total",
    "Briefings that could not be given to a run, by agent and reason"
    " (briefing_failed, argument_too_large, exposure_failed).",
    ["agent", "reason"],
    registry=REGISTRY,
)
BRIEFINGS = Counter(
    "fleetmem_briefings_total",
    "Briefings served to runs, by delivery (prompt, tool, resource) and outcome (ok, empty,"
    " skipped). Operator previews are not counted.",
    ["agent", "delivery", "outcome"],
    registry=REGISTRY,
)
BRIEFING_BYTES = Gauge(
    "fleetmem_briefing_bytes",
    "Size in bytes of the last briefing served to a run of each agent.",
    ["agent"],
    registry=REGISTRY,
)
LIVE_RUNS = Gauge(
    "fleetmem_runs_live",
    "Open runs heard from within [runs] expire_after, as of the last read.",
    registry=REGISTRY,
)
RUNS_OPENED = Counter(
    "fleetmem_runs_opened_total",
    "Runs opened, by source (supervisor, hook, api, cli).",
    ["source"],
    registry=REGISTRY,
)
RUNS_CLOSED = Counter(
    "fleetmem_runs_closed_total",
    "Live runs closed, by how (record: its run record arrived; expired: silent too long).",
    ["how"],
    registry=REGISTRY,
)

FACT_WRITES = Counter(
    "fleetmem_facts_writes_total",
    "Fact writes by action (add, propose, edit, forget, restore, pin, unpin, review, merge,"
    " forget_all, scope, keep_both) and outcome (ok, duplicate, refused, rate_limited).",
    ["action", "outcome"],
    registry=REGISTRY,
)
FACT_PROPOSALS = Counter(
    "fleetmem_facts_proposals_total",
    "Agent fact proposals by outcome (proposed, duplicate, dropped: review backlog full,"
    " refused: memory full).",
    ["outcome"],
    registry=REGISTRY,
)
FACTS_SERVED = Counter(
    "fleetmem_facts_served_total",
    "Facts served to runs (an exposure row each), by surface and grade (instruction, data).",
    ["surface", "served_as"],
    registry=REGISTRY,
)
FACTS_WITHHELD = Counter(
    "fleetmem_facts_withheld_total",
    "Facts withheld from a run because their exposure could not be written, by surface.",
    ["surface"],
    registry=REGISTRY,
)
FACT_BLOCKS = Counter(
    "fleetmem_facts_blocks_total",
    "Facts blocks computed for runs, by outcome (ok, empty, off, timed_out, failed, withheld).",
    ["outcome"],
    registry=REGISTRY,
)
FACT_VOTES = Counter(
    "fleetmem_facts_votes_total",
    "Votes on facts by stance and whether they count (independent, exposed, author_run, repeat).",
    ["stance", "reason"],
    registry=REGISTRY,
)
FACT_SEARCHES = Counter(
    "fleetmem_facts_searches_total",
    "Fact searches by mode (meaning: embeddings used; words: degraded to exact words).",
    ["mode"],
    registry=REGISTRY,
)

CONTEXT_DELIVERIES = Counter(
    "fleetmem_context_deliveries_total",
    "Assembled contexts handed to real runs, by how and with what outcome.",
    ["how", "outcome"],
    registry=REGISTRY,
)
CONTEXT_TRUNCATIONS = Counter(
    "fleetmem_context_truncations_total",
    "Segments of real runs' contexts that did not fit their budget, by segment.",
    ["segment"],
    registry=REGISTRY,
)
PROVIDER_FAILURES = Counter(
    "fleetmem_context_provider_failures_total",
    "Provided context segments (facts, scope, feeds) that failed and were left out.",
    ["segment"],
    registry=REGISTRY,
)
FILE_WRITES = Counter(
    "fleetmem_context_file_writes_total",
    "Context-file writes, by family, author kind and outcome (written, proposed, stale).",
    ["kind", "actor", "outcome"],
    registry=REGISTRY,
)
