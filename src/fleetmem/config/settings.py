"""The validated, frozen settings: one dataclass a table, and the defaults a missing key keeps.

What each key accepts is the declarative schema in :mod:`fleetmem.config.schema`; a new table
is a new dataclass here plus a new entry there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

GLOBAL_FILE: Final = "fleetmem.toml"
DROPIN_DIR: Final = "fleetmem.d"
PROJECT_FILE: Final = ".fleetmem.toml"
LOCAL_EMBEDDING_MODEL: Final = "local:minilm"
BUILTIN_PROVIDER: Final = "builtin"
#: What the built-in provider may read from a query besides its words, or follow from its
#: first answers: named periods, named agents, the runs that follow a question.
RECALL_CUES: Final = ("periods", "agents", "follow_ups")

_DAY: Final = 86_400.0


@dataclass(frozen=True, slots=True)
class EpisodeSettings:
    """``[memory.episodes]``: how episodes are kept, summarized and recalled."""

    retention_s: float = 90 * _DAY
    summary: bool = True
    provider_timeout_s: float = 2.0
    excerpt_chars: int = 600
    #: The built-in provider's recall cues that are on (docs/episodes.md).
    recall_cues: tuple[str, ...] = RECALL_CUES


@dataclass(frozen=True, slots=True)
class FactThresholds:
    """``[memory.facts.thresholds.NAME]``: cosine thresholds for one embedding model.

    ``NAME`` is the ``[model_api] embedding_model`` value the thresholds apply to; a key left
    out keeps fleetmem's calibrated default for that model (see docs/facts.md).
    """

    search: float | None = None
    recall: float | None = None
    near_duplicate: float | None = None


@dataclass(frozen=True, slots=True)
class FactSettings:
    """``[memory.facts]``: promotion, suspicion and per-embedder thresholds of facts."""

    promotion: str = "human"
    corroboration_runs: int = 3
    corroboration_agents: int = 2
    suspect_contradictions: int = 3
    recall_timeout_s: float = 2.0
    thresholds: Mapping[str, FactThresholds] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """``[memory]``: which episode provider is used."""

    provider: str = BUILTIN_PROVIDER
    episodes: EpisodeSettings = field(default_factory=EpisodeSettings)
    facts: FactSettings = field(default_factory=FactSettings)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """``[agent.NAME]``: per-agent switches."""

    name: str
    memory_record: bool = True
    record_trace: bool = True
    untrusted_inline: bool = False
    memory_recall: bool = True
    edit_agent_files: bool = False
    briefing_max_chars: int = 2000
    #: The Skills file's budget for this agent (None: the catalog's 4,000; FR-47).
    skills_budget: int | None = None
    # How `fleetmem run` starts the agent (docs/agents.md); every one of these is global-only.
    adapter: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    model: str | None = None
    prompt: str | None = None
    prompt_file: str | None = None
    prompt_template: str | None = None
    prompt_template_file: str | None = None
    workdir: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    memory_briefing: bool = False
    verify_patterns: tuple[VerifyPattern, ...] = ()
    timeout_s: float | None = None
    kill_grace_s: float = 10.0
    respawns: int = 0
    #: The workspace (id or name) the agent's runs act in; None: ``default``
    #: (docs/workspaces.md, "Agents in a workspace"). Resolved at use time.
    workspace: str | None = None

    @property
    def prompt_facts(self) -> bool:
        """Each prompt of an interactive session is given the facts relevant to it: recall
        is on and the briefing, which carries the agent's facts itself, is off."""
        return self.memory_recall and not self.memory_briefing

    @property
    def prompt_source(self) -> str | None:
        """The key the one-shot prompt comes from, or None when the agent has none."""
        return next((key for key in PROMPT_KEYS if getattr(self, key) is not None), None)


#: The keys a one-shot prompt may come from; at most one may be set.
PROMPT_KEYS: Final = ("prompt", "prompt_file", "prompt_template", "prompt_template_file")
ADAPTERS: Final = ("claude-code", "codex", "command")


@dataclass(frozen=True, slots=True)
class VerifyPattern:
    """``[agent.NAME] verify_patterns`` item: commands matching ``match`` (a regular
    expression searched in the command line) are verifications of class ``error_class``."""

    match: str
    error_class: str


@dataclass(frozen=True, slots=True)
class RunsSettings:
    """``[runs]``: live runs (global only)."""

    #: A live run not heard from for this long is expired: no longer present or colliding.
    expire_after_s: float = 600.0


@dataclass(frozen=True, slots=True)
class ServerToken:
    """One ``[server] tokens`` item: an API token given by its SHA-256 or by a token file."""

    tier: str  # "read" or "control"
    sha256: str | None = None
    file: str | None = None
    name: str | None = None
    #: The workspace id the token is bound to (``default`` when not given).
    workspace: str | None = None


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """``[server]``: the daemon's HTTP surface (global only)."""

    #: API tokens beyond ``<home>/control.token``; one is required to bind beyond loopback.
    tokens: tuple[ServerToken, ...] = ()


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    """``[telemetry]``: OpenTelemetry traces and metrics over OTLP/HTTP, off unless enabled.

    Spans and metric points carry ids, provider names, outcomes, counts and sizes only; never
    episode text, summaries, briefings, queries or prompts (docs/telemetry.md).
    """

    enabled: bool = False
    #: The collector's OTLP/HTTP base URL; ``/v1/traces`` and ``/v1/metrics`` are appended.
    endpoint: str = "http://127.0.0.1:4318"
    service_name: str = "fleetmem"
    #: Header name -> the environment variable holding its value (a token is never written).
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    export_interval_s: float = 15.0


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """``[store]``: where fleetmem keeps its memory (global only; docs/postgres.md)."""

    #: A PostgreSQL URL shared by a fleet's daemons; None: the embedded SQLite file in the
    #: home. ``FLEETMEM_STORE_URL`` overrides it.
    url: str | None = None
    #: How long a daemon holds a job or a lease it took before another may take it over
    #: (a daemon killed mid-job loses its claims when this runs out).
    claim_timeout_s: float = 300.0


@dataclass(frozen=True, slots=True)
class ModelApiSettings:
    """``[model_api]``: an OpenAI-compatible endpoint and the models used on it."""

    base_url: str | None = None
    api_key_env: str | None = None
    utility_model: str | None = None
    embedding_model: str = LOCAL_EMBEDDING_MODEL
    #: Utility calls (summaries) let through per minute and per UTC day, shared by every
    #: process of the home; the rest fall back to no summary.
    utility_rate_per_minute: int = 30
    utility_daily_ceiling: int = 1000


@dataclass(frozen=True, slots=True)
class McpSettings:
    """``[mcp.NAME]``: an upstream MCP server, used by fleetmem only as an episode provider.

    Either ``command`` (with ``args`` and ``env``: a stdio subprocess) or ``url`` (with
    ``headers``, each naming the environment variable that holds its value: streamable HTTP).
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    shared: bool = True
    connect_timeout_s: float = 10.0
    call_timeout_s: float = 30.0

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"


@dataclass(frozen=True, slots=True)
class Entry:
    """One key as set in one file, already parsed."""

    table: tuple[str, ...]
    key: str
    attr: str
    value: object
    source: str

    @property
    def dotted(self) -> str:
        return dotted_key(*self.table, self.key)


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Settings:
    """The effective configuration: every layer merged and validated."""

    memory: MemorySettings = field(default_factory=MemorySettings)
    agents: Mapping[str, AgentSettings] = field(default_factory=_empty)
    model_api: ModelApiSettings = field(default_factory=ModelApiSettings)
    mcp: Mapping[str, McpSettings] = field(default_factory=_empty)
    runs: RunsSettings = field(default_factory=RunsSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    sources: tuple[str, ...] = ()
    # The winning entry per dotted key; needed to apply a project file on top later.
    _entries: Mapping[str, Entry] = field(default_factory=_empty, repr=False, compare=False)

    def agent(self, name: str) -> AgentSettings:
        """The settings of agent ``name``; defaults when no file declares it."""
        return self.agents.get(name) or AgentSettings(name=name)

    @property
    def origins(self) -> Mapping[str, str]:
        """Dotted key -> the file that set its effective value (keys left at defaults absent)."""
        return MappingProxyType({key: entry.source for key, entry in self._entries.items()})


def default_settings() -> Settings:
    """The settings in force when no configuration file exists."""
    return Settings()


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dotted_key(*parts: str) -> str:
    """A dotted key for messages; odd parts are quoted so invisible characters show."""
    return ".".join(p if _BARE_KEY.fullmatch(p) else json.dumps(p) for p in parts)
