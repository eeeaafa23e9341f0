"""Claude Code hooks of an agent bound to a workspace (``[agent.NAME] workspace``): the
SessionStart briefing and context, the facts given per prompt and the facts a person asks to
remember all belong to that workspace; an agent bound to a missing workspace is told, in the
session, that it gets no memory and why."""

from __future__ import annotations

import json
from collections.abc import Callable

from fleetmem.core.fence import parse_block
from fleetmem.core.wrapper import parse
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import World
from tests.integrations.test_claude_hooks import Session, _context, _prompt


def _setup(world: World, open_app: Callable[[], App], workspace: str) -> dict[str, str]:
    world.config(f'[agent.claude-code]\nworkspace = "{workspace}"\n[agent.other]\n')
    app = open_app()
    acme = app.in_workspace(app.workspaces.create("Acme").id)
    return {
        "acme": acme.facts.add("The ledger tests are flaky on CI; rerun with a seed.").fact.id,
        "default": app.facts.add("The ledger tests are flaky on CI; rerun them twice.").fact.id,
    }


def test_a_sessions_memory_is_its_agents_workspaces(
    world: World, open_app: Callable[[], App]
) -> None:
    facts = _setup(world, open_app, "Acme")
    session = Session(world)
    proc, _ = session.hook("SessionStart", session.payload("session_start"))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr  # nothing pinned yet
    proc, _ = session.hook("UserPromptSubmit", _prompt(session, "ledger tests flaky"))
    block, _ = parse_block(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])
    assert facts["acme"] in block.body and facts["default"] not in block.body
    said = "Remember that Acme deploys on Tuesdays."
    proc, _ = session.hook("UserPromptSubmit", _prompt(session, said))
    assert "fleetmem remembered" in json.loads(proc.stdout)["systemMessage"]
    app = open_app()
    acme = app.in_workspace(app.agent_workspace("claude-code"))
    assert [e.fact_id for e in acme.facts.offered_to_run(session.run_id())] == [facts["acme"]]
    assert app.facts.offered_to_run(session.run_id()) == []
    bodies = {f.body for f in acme.facts.list().items}
    assert "Acme deploys on Tuesdays." in bodies
    assert "Acme deploys on Tuesdays." not in {f.body for f in app.facts.list().items}


def test_a_briefed_session_is_briefed_from_its_agents_workspace(
    world: World, open_app: Callable[[], App]
) -> None:
    facts = _setup(world, open_app, "Acme")
    world.config('[agent.claude-code]\nworkspace = "Acme"\nmemory_briefing = true\n')
    session = Session(world)
    proc, _ = session.hook("SessionStart", session.payload("session_start"))
    block, _ = parse_block(_context(proc.stdout))
    section = parse(block.body)[0].section("facts")
    assert section is not None
    assert [i.get("id") for i in section.items] == [facts["acme"]]


def test_a_session_of_an_agent_bound_to_a_missing_workspace_is_told_so(
    world: World, open_app: Callable[[], App]
) -> None:
    _setup(world, open_app, "Initech")
    session = Session(world)
    proc, _ = session.hook("SessionStart", session.payload("session_start"))
    assert proc.returncode == 0
    context = _context(proc.stdout)
    assert context.startswith("fleetmem gave this session no memory: ")
    assert "agent claude-code is bound to workspace 'Initech'" in context
    proc, _ = session.hook("UserPromptSubmit", _prompt(session, "Remember that X is Y."))
    line = json.loads(proc.stdout)["systemMessage"]
    assert line.startswith('fleetmem did not remember "X is Y.": agent.claude-code.workspace')
    app = open_app()
    assert app.facts.offered_to_run(session.run_id()) == []
    # The session is still a run, recorded as any other.
    assert app.runs.show_run(session.run_id()).live is not None
