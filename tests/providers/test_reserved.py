"""Provider tools are reserved to fleetmem (seed 000 REQ-2): the rule a gateway will apply."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fleetmem.errors import ProviderReserved
from fleetmem.providers.contract import TOOLS
from fleetmem.providers.reserved import AGENT_TOOLS, refuse_reserved, visible_tools
from fleetmem.service.bootstrap import App
from tests.providers.conftest import config, stdio_upstream


def test_provider_tools_never_appear_in_a_tool_list(make_app: Callable[..., App]) -> None:
    app = make_app(config(stdio_upstream("zep"), stdio_upstream("gitea"), provider="zep"))
    offered = [
        "recall",
        "briefing",
        "zep__memory_forget",
        "zep__memory_recall",
        "zep__search",
        "gitea__memory_record_episode",
        "gitea__list_issues",
        "builtin__memory_recall",
        "memory_forget",
        "other__memory_contract",
        "vote_fact",
    ]
    assert visible_tools(offered, app.settings) == ["recall", "briefing", "vote_fact"]


def test_call_tool_naming_a_provider_tool_is_refused_and_logged(
    make_app: Callable[..., App],
) -> None:
    app = make_app(config(stdio_upstream("zep"), provider="zep"))
    args = {"id": "ref-0123456789abcdef-full"}
    with pytest.raises(ProviderReserved) as info:
        refuse_reserved(
            "zep__memory_forget", args, app.settings, caller="api-fixer", call_log=app.store
        )
    assert info.value.code == "not_permitted"
    [row] = app.store.recent_calls("zep")
    assert (row.caller, row.tool, row.outcome, row.error) == (
        "api-fixer",
        "zep__memory_forget",
        "denied",
        "not_permitted",
    )
    assert "ref-0123456789abcdef" not in repr(row)  # arguments are hashed
    # The upstream received nothing: no session was ever opened for it.
    assert app.providers.calls("zep") == [row]
    refuse_reserved("recall", {}, app.settings, caller="api-fixer", call_log=app.store)


def test_agents_have_no_tool_that_writes_an_episode(make_app: Callable[..., App]) -> None:
    app = make_app()
    assert visible_tools(sorted(AGENT_TOOLS), app.settings) == sorted(AGENT_TOOLS)
    assert not AGENT_TOOLS & set(TOOLS)
    assert not any("episode" in tool or "forget" in tool for tool in AGENT_TOOLS)
