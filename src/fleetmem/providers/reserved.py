"""Provider tools are reserved to fleetmem's memory code (seed 000 REQ-2).

No agent may reach a provider's tools through fleetmem: an agent calling ``memory_recall``
directly would bypass the index filter and the fence, and ``memory_forget`` would let it
erase history. fleetmem's ``[mcp.NAME]`` upstreams exist only to be episode providers, so
every tool of every upstream is reserved, and so are the contract's four tool names
whatever server they are attributed to.

fleetmem has no agent-facing MCP server yet. When it has one, it must build its tool list
with :func:`visible_tools` and pass every ``call_tool`` name through :func:`refuse_reserved`
before doing anything else; both are tested here so the rule exists before the surface does.
Agents also get no tool that records, edits or forgets an episode: :data:`AGENT_TOOLS`
is the complete list a later server may offer, and none of them writes an episode.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from fleetmem.config import BUILTIN_PROVIDER, Settings
from fleetmem.errors import ProviderReserved
from fleetmem.providers.calllog import CallLog, write_row
from fleetmem.providers.contract import TOOLS

log = logging.getLogger("fleetmem.providers")

#: How a gateway would name an upstream's tool: ``<upstream>__<tool>``.
NAMESPACE_SEPARATOR: Final = "__"

#: The agent-facing tools of DESIGN.md; none records, edits or forgets an episode.
AGENT_TOOLS: Final = frozenset(
    {
        "recall",
        "briefing",
        "remember",
        "vote_fact",
        "read_context_file",
        "update_notes",
        "note_project",
    }
)


def reserved_servers(settings: Settings) -> frozenset[str]:
    """Servers whose tools no agent may see: the built-in provider and every upstream."""
    return frozenset({BUILTIN_PROVIDER, *settings.mcp})


def reserved_reason(name: str, settings: Settings) -> str | None:
    """Why a tool name is reserved, or None if an agent may see it."""
    bare = name
    if NAMESPACE_SEPARATOR in name:
        server, _, bare = name.partition(NAMESPACE_SEPARATOR)
        if server in reserved_servers(settings):
            return f"{server} is an episode provider, reserved to fleetmem"
    if bare in TOOLS:
        return f"{bare} is an episode-provider tool, reserved to fleetmem"
    return None


def visible_tools(names: Iterable[str], settings: Settings) -> list[str]:
    """``names`` without the reserved ones, order kept: what a tools/list may show."""
    return [n for n in names if reserved_reason(n, settings) is None]


def refuse_reserved(
    name: str,
    arguments: Mapping[str, Any],
    settings: Settings,
    *,
    caller: str,
    call_log: CallLog | None,
    clock: Callable[[], float] = time.time,
) -> None:
    """Raise ``ProviderReserved`` (code ``not_permitted``) if ``name`` is reserved.

    The refusal is logged as a denied call-log row (arguments hashed) and nothing is sent
    to any upstream.
    """
    reason = reserved_reason(name, settings)
    if reason is None:
        return
    server = name.partition(NAMESPACE_SEPARATOR)[0] if NAMESPACE_SEPARATOR in name else "-"
    write_row(
        call_log,
        at=clock(),
        caller=caller,
        upstream=server,
        tool=name,
        args=arguments,
        outcome="denied",
        duration_ms=None,
        error="not_permitted",
    )
    log.warning("provider.call_denied caller=%s tool=%s", caller, name)
    raise ProviderReserved(f"tool {name} is not permitted: {reason}", provider=server)
