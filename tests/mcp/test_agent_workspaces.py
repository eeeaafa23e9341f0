"""Two agents in two workspaces, each through a real MCP session of the official SDK client:
one over stdio (a ``fleetmem mcp`` subprocess), the other over streamable HTTP (``/mcp`` of a
running daemon). Each run sees, writes and votes only in its agent's workspace; the other
workspace's fact id is "not found"; an agent bound to no existing workspace is told so."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fleetmem.core.scope import WORKSPACE, project_scope
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.mcp.descriptions import BRIEFING_URI
from tests.mcp.conftest import (
    API,
    VECTORS_OFF,
    error_text,
    http_client_for,
    ids,
    ok_json,
    ok_text,
    resource_text,
    run_async,
    stdio_client_for,
)
from tests.surfaces.test_http import Daemon

CONFIG = (
    VECTORS_OFF
    + '[agent.acme-bot]\nworkspace = "Acme"\nedit_agent_files = true\n'
    + '[agent.globex-bot]\nworkspace = "Globex"\nedit_agent_files = true\n'
    + '[agent.lost-bot]\nworkspace = "Initech"\n'
)


@dataclass
class Tenants:
    app: App
    acme: App
    globex: App
    facts: dict[str, str]
    tokens: dict[str, str]


@pytest.fixture
def tenants(make_app: Callable[..., App]) -> Tenants:
    app = make_app(CONFIG)
    acme = app.in_workspace(app.workspaces.create("Acme").id)
    globex = app.in_workspace(app.workspaces.create("Globex").id)
    facts = {
        "acme": acme.facts.add("Acme settles invoices in euros.", scope=WORKSPACE).fact.id,
        "acme-api": acme.facts.add(
            "Acme's settlement job retries three times.", scope=project_scope(API)
        ).fact.id,
        "globex": globex.facts.add("Globex settles invoices in yen.", scope=WORKSPACE).fact.id,
        "default": app.facts.add("Default settles invoices weekly.", scope=WORKSPACE).fact.id,
    }
    tokens = {
        agent: app.runs.open_run(agent, repo=API, branch="main", run_id=f"run-{agent}").token
        for agent in ("acme-bot", "globex-bot", "lost-bot")
    }
    acme.files.save(
        acme.files.ref("organization"), "Acme: a ledger company.", base_revision=0, actor=_op()
    )
    globex.files.save(
        globex.files.ref("organization"),
        "Globex: a shipping company.",
        base_revision=0,
        actor=_op(),
    )
    return Tenants(app, acme, globex, facts, tokens)


@pytest.fixture
def daemon(tenants: Tenants) -> Iterator[Daemon]:
    d = Daemon(tenants.app.home)
    try:
        yield d
    finally:
        err = d.stop()
        assert "Traceback" not in err, err


def _op() -> Any:
    from fleetmem.core.facts import Actor

    return Actor("human", "operator")


async def _session(client: Any, own: str, other: str, tenants: Tenants) -> dict[str, Any]:
    """Everything one run does in one MCP session: read, recall, propose, vote on its own
    workspace's fact and on the other's, read a context file, write its notes."""
    out: dict[str, Any] = {}
    out["briefing"] = ok_text(await client.call_tool("briefing", {}))
    out["resource"] = resource_text(await client.read_resource(BRIEFING_URI))
    out["recall"] = ok_text(await client.call_tool("recall", {"query": "settles invoices"}))
    out["remember"] = ok_json(
        await client.call_tool("remember", {"text": f"{own} closes its books on the 5th."})
    )
    out["vote_own"] = ok_json(
        await client.call_tool("vote_fact", {"fact_id": tenants.facts[own], "stance": "support"})
    )
    for name in (other, "default"):
        out[f"vote_{name}"] = error_text(
            await client.call_tool(
                "vote_fact", {"fact_id": tenants.facts[name], "stance": "contradict"}
            )
        )
    out["file"] = ok_json(await client.call_tool("read_context_file", {"name": "organization"}))
    out["notes"] = ok_json(await client.call_tool("update_notes", {"text": f"{own} was here."}))
    return out


def _check(out: dict[str, Any], own: set[str], tenants: Tenants, view: App, agent: str) -> None:
    shown = {n for n, i in tenants.facts.items() if i in ids(out["briefing"], "facts")}
    assert shown == own
    assert out["resource"] == out["briefing"]
    recalled = {n for n, i in tenants.facts.items() if i in ids(out["recall"], "facts")}
    assert recalled and recalled <= own
    for key, value in out.items():
        if key.startswith("vote_") and key != "vote_own":
            assert value.startswith("unknown_fact: "), value  # 404, never "forbidden"
    proposed = view.facts.list(status="proposed").items
    assert [f.id for f in proposed] == [out["remember"]["fact_id"]]
    tenant = next(n for n in own if "-" not in n)
    [vote] = view.facts.votes(tenants.facts[tenant]).votes
    assert vote.agent == agent
    assert {e.fact_id for e in view.facts.offered_to_run(f"run-{agent}")} == {
        tenants.facts[n] for n in own
    }
    assert f"{tenant} was here." in view.files.get(view.files.ref("notes", agent=agent)).body


def test_two_agents_in_two_workspaces_are_isolated_both_ways(
    tenants: Tenants, daemon: Daemon, errlog: Path
) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with stdio_client_for(tenants.app.home, tenants.tokens["acme-bot"], errlog) as c:
            acme = await _session(c, "acme", "globex", tenants)
        async with http_client_for(daemon.url + "/mcp", tenants.tokens["globex-bot"]) as c:
            globex = await _session(c, "globex", "acme", tenants)
        return acme, globex

    acme, globex = run_async(main)
    _check(acme, {"acme", "acme-api"}, tenants, tenants.acme, "acme-bot")
    _check(globex, {"globex"}, tenants, tenants.globex, "globex-bot")
    assert "Acme: a ledger company." in acme["file"]["text"]
    assert "Globex: a shipping company." in globex["file"]["text"]
    # The default workspace got nothing from either run.
    app = tenants.app
    assert app.facts.list(status="proposed").items == ()
    for agent in ("acme-bot", "globex-bot"):
        assert app.facts.offered_to_run(f"run-{agent}") == []
        assert app.files.get(app.files.ref("notes", agent=agent)).body == ""
    # Nor did the other tenant.
    assert tenants.globex.facts.offered_to_run("run-acme-bot") == []
    assert tenants.acme.facts.offered_to_run("run-globex-bot") == []


def test_an_agent_bound_to_a_missing_workspace_is_told_so_on_every_tool(
    tenants: Tenants, errlog: Path
) -> None:
    async def main() -> list[str]:
        async with stdio_client_for(tenants.app.home, tenants.tokens["lost-bot"], errlog) as c:
            return [
                error_text(await c.call_tool("briefing", {})),
                error_text(await c.call_tool("recall", {"query": "settles invoices"})),
                error_text(await c.call_tool("remember", {"text": "Lost things are found."})),
                error_text(await c.call_tool("read_context_file", {"name": "organization"})),
            ]

    for said in run_async(main):
        assert said.startswith("unknown_agent_workspace: agent.lost-bot.workspace = "), said
        assert "agent lost-bot is bound to workspace 'Initech'" in said
    assert tenants.app.facts.list(status="proposed").items == ()
    assert tenants.app.facts.offered_to_run("run-lost-bot") == []
