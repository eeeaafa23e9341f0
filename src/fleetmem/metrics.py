"""Prometheus metrics. Labels never carry a query, an id, a repository or text.

One registry per process; ``fleetmem serve`` exposes it at ``/metrics``.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

EPISODES_RECORDED = Counter(
    "fleetmem_memory_episodes_recorded_total",
    "Episodes recorded to a provider, by outcome (ok, error, skipped).",
    ["provider", "outcome"],
    registry=REGISTRY,
)
EPISODE_SUMMARIES = Counter(
    "fleetmem_memory_episode_summaries_total",
    "Episode summaries requested, by outcome (ok, fallback).",
    ["outcome"],
    registry=REGISTRY,
)
RECALLS = Counter(
    "fleetmem_memory_recalls_total",
    "Episode recalls, by outcome (ok, degraded, error).",
    ["provider", "outcome"],
    registry=REGISTRY,
)
RESULTS_DROPPED = Counter(
    "fleetmem_memory_results_dropped_total",
    "Provider items dropped by the index filter, by reason.",
    ["provider", "reason"],
    registry=REGISTRY,
)
PROVIDER_DURATION = Histogram(
    "fleetmem_memory_provider_duration_seconds",
    "Time spent in provider calls, by operation.",
    ["provider", "op"],
    registry=REGISTRY,
)
PENDING = Gauge(
    "fleetmem_memory_pending",
    "Records and forgets waiting for a retry.",
    ["provider", "kind"],
    registry=REGISTRY,
)
RUNS_SKIPPED = Counter(
    "fleetmem_memory_runs_skipped_total",
    "Closed runs that produced no episode, by reason.",
    ["reason"],
    registry=REGISTRY,
)


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    """Current value of one series (0.0 when absent); used by status and tests."""
    value = REGISTRY.get_sample_value(name, labels or {})
    return 0.0 if value is None else float(value)
