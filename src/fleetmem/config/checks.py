"""Merging the winning entries into ``Settings``, then the checks that span several keys."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

from fleetmem.config.settings import (
    BUILTIN_PROVIDER,
    LOCAL_EMBEDDING_MODEL,
    PROMPT_KEYS,
    AgentSettings,
    Entry,
    EpisodeSettings,
    FactSettings,
    FactThresholds,
    McpSettings,
    MemorySettings,
    ModelApiSettings,
    RunsSettings,
    ServerSettings,
    Settings,
    StoreSettings,
    TelemetrySettings,
)
from fleetmem.core import prompt_template
from fleetmem.errors import ConfigError


def _attrs(entries: Iterable[Entry], table: tuple[str, ...]) -> dict[str, Any]:
    # Any: each value was produced by its KeySpec parser, which fixes its type.
    return {entry.attr: entry.value for entry in entries if entry.table == table}


def build_settings(
    entries: Mapping[str, Entry], tables: Iterable[tuple[str, ...]], sources: tuple[str, ...]
) -> Settings:
    winners = list(entries.values())
    episodes = dataclasses.replace(EpisodeSettings(), **_attrs(winners, ("memory", "episodes")))
    facts = _fact_settings(winners)
    memory = dataclasses.replace(
        MemorySettings(episodes=episodes, facts=facts), **_attrs(winners, ("memory",))
    )
    agent_names = sorted({table[1] for table in tables if len(table) == 2 and table[0] == "agent"})
    agents = {
        name: dataclasses.replace(AgentSettings(name=name), **_attrs(winners, ("agent", name)))
        for name in agent_names
    }
    upstream_names = sorted({table[1] for table in tables if len(table) == 2 and table[0] == "mcp"})
    upstreams = {
        name: dataclasses.replace(McpSettings(name=name), **_attrs(winners, ("mcp", name)))
        for name in upstream_names
    }
    settings = Settings(
        memory=memory,
        agents=MappingProxyType(agents),
        model_api=dataclasses.replace(ModelApiSettings(), **_attrs(winners, ("model_api",))),
        mcp=MappingProxyType(upstreams),
        runs=dataclasses.replace(RunsSettings(), **_attrs(winners, ("runs",))),
        server=dataclasses.replace(ServerSettings(), **_attrs(winners, ("server",))),
        telemetry=dataclasses.replace(TelemetrySettings(), **_attrs(winners, ("telemetry",))),
        store=dataclasses.replace(StoreSettings(), **_attrs(winners, ("store",))),
        sources=sources,
        _entries=MappingProxyType(dict(entries)),
    )
    for check in _CHECKS:
        check(settings)
    return settings


def _fact_settings(winners: list[Entry]) -> FactSettings:
    prefix = ("memory", "facts", "thresholds")
    # From the entries, not the tables: a project layer is built without the global tables.
    names = sorted({e.table[3] for e in winners if len(e.table) == 4 and e.table[:3] == prefix})
    thresholds = {
        name: dataclasses.replace(FactThresholds(), **_attrs(winners, (*prefix, name)))
        for name in names
    }
    return dataclasses.replace(
        FactSettings(thresholds=MappingProxyType(thresholds)),
        **_attrs(winners, ("memory", "facts")),
    )


def _fail_at(settings: Settings, key: str, value: object, reason: str) -> ConfigError:
    return ConfigError(key, value, reason, source=settings.origins.get(key))


def _declared_upstreams(settings: Settings) -> frozenset[str]:
    """Names of ``[mcp.NAME]`` upstreams from the global file and drop-ins.

    ``[mcp]`` is global-only (a project file declaring one fails to load), so every
    upstream in the settings comes from one of those files.
    """
    return frozenset(settings.mcp)


def _check_provider(settings: Settings) -> None:
    provider = settings.memory.provider
    if provider != BUILTIN_PROVIDER and provider not in _declared_upstreams(settings):
        reason = "no [mcp.NAME] upstream is declared in the global file or a drop-in"
        raise _fail_at(settings, "memory.provider", provider, reason)
    upstream = settings.mcp.get(provider)
    if upstream is not None and not upstream.shared:
        reason = (
            f"mcp.{provider}.shared is false, but the provider stores episodes from every "
            "agent, so it must be a shared upstream"
        )
        raise _fail_at(settings, "memory.provider", provider, reason)


def _check_upstreams(settings: Settings) -> None:
    for name, up in settings.mcp.items():

        def fail(key: str, value: object, reason: str, name: str = name) -> ConfigError:
            prefix = f"mcp.{name}."
            source = next((v for k, v in settings.origins.items() if k.startswith(prefix)), None)
            return ConfigError(
                f"mcp.{name}.{key}" if key else "mcp.NAME", value, reason, source=source
            )

        if name == BUILTIN_PROVIDER:
            raise fail("", name, "is the built-in provider's name; choose another")
        if up.command is None and up.url is None:
            raise fail("command", None, "set command (a stdio server) or url (an HTTP server)")
        if up.command is not None and up.url is not None:
            raise fail("url", up.url, f"mcp.{name} sets both command and url; set exactly one")
        if up.url is not None:
            for key, present in (("args", bool(up.args)), ("env", bool(up.env))):
                if present:
                    raise fail(key, "<set>", "applies only to a stdio upstream (with command)")
        if up.command is not None and up.headers:
            raise fail("headers", "<set>", "applies only to an HTTP upstream (with url)")


def _check_model_api(settings: Settings) -> None:
    api = settings.model_api
    if api.base_url is not None:
        return
    if api.utility_model is not None:
        reason = "requires model_api.base_url (the endpoint that serves it)"
        raise _fail_at(settings, "model_api.utility_model", api.utility_model, reason)
    if api.embedding_model not in ("", LOCAL_EMBEDDING_MODEL):
        reason = (
            f'requires model_api.base_url; use "{LOCAL_EMBEDDING_MODEL}" for the built-in '
            'model or "" to turn vectors off'
        )
        raise _fail_at(settings, "model_api.embedding_model", api.embedding_model, reason)


def _check_recording(settings: Settings) -> None:
    for name, agent in settings.agents.items():
        key = f"agent.{name}.memory_record"
        if not agent.record_trace and agent.memory_record and key in settings.origins:
            reason = (
                f"would do nothing: agent.{name}.record_trace is false, so no episode is "
                "recorded; remove the key"
            )
            raise _fail_at(settings, key, True, reason)


def _check_agent_runs(settings: Settings) -> None:
    for name, agent in settings.agents.items():
        given = [key for key in PROMPT_KEYS if getattr(agent, key) is not None]
        if len(given) > 1:
            key = f"agent.{name}.{given[1]}"
            reason = f"set only one of {', '.join(PROMPT_KEYS)} (agent.{name}.{given[0]} is set)"
            raise _fail_at(settings, key, "<set>", reason)
        if agent.adapter == "command" and agent.command is None:
            reason = 'adapter = "command" needs agent.NAME.command, the program to start'
            raise _fail_at(settings, f"agent.{name}.adapter", agent.adapter, reason)
        template = agent.prompt_template
        if (
            template is not None
            and not agent.untrusted_inline
            and prompt_template.uses_untrusted(template)
        ):
            reason = (
                f"reads an event field ({{{{untrusted event.X}}}}), which needs "
                f"agent.{name}.untrusted_inline = true; memory_briefing does not open "
                "the event fence"
            )
            raise _fail_at(settings, f"agent.{name}.prompt_template", "<template>", reason)


_CHECKS: Final[tuple[Callable[[Settings], None], ...]] = (
    _check_upstreams,
    _check_provider,
    _check_model_api,
    _check_recording,
    _check_agent_runs,
)
