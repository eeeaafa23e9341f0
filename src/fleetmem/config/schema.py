"""The declarative schema: what each table and key accepts, and what a project file may do."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from fleetmem.config.settings import ADAPTERS, RECALL_CUES
from fleetmem.config.values import (
    AGENT_NAME,
    HEADER_NAME,
    MODEL_NAME,
    UPSTREAM_NAME,
    Parser,
    boolean,
    choice,
    choice_set,
    duration,
    env_name,
    environment,
    http_url,
    integer,
    number,
    postgres_url,
    prompt_text,
    server_tokens,
    short_text,
    string_list,
    string_table,
    template_text,
    verify_patterns,
    workspace_ref,
)


class Project(enum.Enum):
    """What a project file may do with a key."""

    FORBIDDEN = "global-only"
    NARROW_TO_FALSE = "narrow to false"


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One key: the settings attribute it fills, its parser, and its project-file rule."""

    attr: str
    parse: Parser
    project: Project = Project.FORBIDDEN


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One table. ``name_pattern`` is set for a ``*`` segment (``[agent.NAME]``)."""

    keys: Mapping[str, KeySpec] = field(default_factory=dict)
    global_only: bool = False
    name_pattern: re.Pattern[str] | None = None
    name_rule: str = ""


SCHEMA: Final[Mapping[str, TableSpec]] = MappingProxyType(
    {
        "": TableSpec(),
        "memory": TableSpec(
            global_only=True,
            keys={"provider": KeySpec("provider", short_text(max_len=64))},
        ),
        "memory.facts": TableSpec(
            global_only=True,
            keys={
                "promotion": KeySpec("promotion", choice("human", "corroboration")),
                "corroboration_runs": KeySpec("corroboration_runs", integer(1, 100)),
                "corroboration_agents": KeySpec("corroboration_agents", integer(1, 50)),
                "suspect_contradictions": KeySpec("suspect_contradictions", integer(1, 100)),
                "recall_timeout": KeySpec("recall_timeout_s", duration("100ms", "10s")),
            },
        ),
        "memory.facts.thresholds": TableSpec(global_only=True),
        "memory.facts.thresholds.*": TableSpec(
            global_only=True,
            name_pattern=MODEL_NAME,
            name_rule="must be an embedding_model value (printable ASCII, no spaces)",
            keys={
                "search": KeySpec("search", number(0.0, 1.0)),
                "recall": KeySpec("recall", number(0.0, 1.0)),
                "near_duplicate": KeySpec("near_duplicate", number(0.0, 1.0)),
            },
        ),
        "memory.episodes": TableSpec(
            global_only=True,
            keys={
                "retention": KeySpec("retention_s", duration("1h", "10y")),
                "summary": KeySpec("summary", boolean),
                "provider_timeout": KeySpec("provider_timeout_s", duration("100ms", "60s")),
                "excerpt_chars": KeySpec("excerpt_chars", integer(0, 2000)),
                "recall_cues": KeySpec("recall_cues", choice_set(*RECALL_CUES)),
            },
        ),
        "agent": TableSpec(),
        "agent.*": TableSpec(
            name_pattern=AGENT_NAME,
            name_rule="must match [a-z0-9][a-z0-9._-]{0,63}",
            keys={
                "memory_record": KeySpec("memory_record", boolean, Project.NARROW_TO_FALSE),
                "record_trace": KeySpec("record_trace", boolean, Project.NARROW_TO_FALSE),
                "untrusted_inline": KeySpec("untrusted_inline", boolean),
                "memory_recall": KeySpec("memory_recall", boolean, Project.NARROW_TO_FALSE),
                "edit_agent_files": KeySpec("edit_agent_files", boolean),
                "briefing_max_chars": KeySpec("briefing_max_chars", integer(500, 4000)),
                "skills_budget": KeySpec("skills_budget", integer(100, 8000)),
                "adapter": KeySpec("adapter", choice(*ADAPTERS)),
                "command": KeySpec("command", short_text(max_len=4096)),
                "args": KeySpec("args", string_list(max_items=64, max_len=4096)),
                "model": KeySpec("model", short_text()),
                "prompt": KeySpec("prompt", prompt_text),
                "prompt_file": KeySpec("prompt_file", short_text(max_len=4096)),
                "prompt_template": KeySpec("prompt_template", template_text),
                "prompt_template_file": KeySpec("prompt_template_file", short_text(max_len=4096)),
                "workdir": KeySpec("workdir", short_text(max_len=4096)),
                "env": KeySpec("env", environment(allow_empty_values=True)),
                "memory_briefing": KeySpec("memory_briefing", boolean),
                "verify_patterns": KeySpec("verify_patterns", verify_patterns),
                "timeout": KeySpec("timeout_s", duration("1s", "30d")),
                "kill_grace": KeySpec("kill_grace_s", duration("100ms", "5m")),
                "respawns": KeySpec("respawns", integer(0, 5)),
                # Global only: a repository's file must not move an agent to another tenant.
                "workspace": KeySpec("workspace", workspace_ref),
            },
        ),
        "mcp": TableSpec(global_only=True),
        "mcp.*": TableSpec(
            global_only=True,
            name_pattern=UPSTREAM_NAME,
            name_rule="must be lower-case letters and digits, words joined by single - or _",
            keys={
                "command": KeySpec("command", short_text(max_len=4096)),
                "args": KeySpec("args", string_list(max_items=64, max_len=4096)),
                "env": KeySpec("env", environment(allow_empty_values=False)),
                "url": KeySpec("url", http_url),
                "headers": KeySpec(
                    "headers",
                    string_table(HEADER_NAME, "must be an HTTP header name", env_name),
                ),
                "shared": KeySpec("shared", boolean),
                "connect_timeout": KeySpec("connect_timeout_s", duration("1s", "120s")),
                "call_timeout": KeySpec("call_timeout_s", duration("100ms", "300s")),
            },
        ),
        "runs": TableSpec(
            global_only=True,
            keys={"expire_after": KeySpec("expire_after_s", duration("30s", "24h"))},
        ),
        "server": TableSpec(global_only=True, keys={"tokens": KeySpec("tokens", server_tokens)}),
        "store": TableSpec(
            global_only=True,
            keys={
                "url": KeySpec("url", postgres_url),
                "claim_timeout": KeySpec("claim_timeout_s", duration("5s", "1h")),
            },
        ),
        "telemetry": TableSpec(
            global_only=True,
            keys={
                "enabled": KeySpec("enabled", boolean),
                "endpoint": KeySpec("endpoint", http_url),
                "service_name": KeySpec("service_name", short_text()),
                "headers": KeySpec(
                    "headers",
                    string_table(HEADER_NAME, "must be an HTTP header name", env_name),
                ),
                "export_interval": KeySpec("export_interval_s", duration("1s", "10m")),
            },
        ),
        "model_api": TableSpec(
            global_only=True,
            keys={
                "base_url": KeySpec("base_url", http_url),
                "api_key_env": KeySpec("api_key_env", env_name),
                "utility_model": KeySpec("utility_model", short_text()),
                "embedding_model": KeySpec("embedding_model", short_text(allow_empty=True)),
                "utility_rate_per_minute": KeySpec("utility_rate_per_minute", integer(1, 10_000)),
                "utility_daily_ceiling": KeySpec("utility_daily_ceiling", integer(1, 1_000_000)),
            },
        ),
    }
)
