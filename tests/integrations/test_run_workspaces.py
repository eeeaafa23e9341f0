"""``fleetmem run`` of agents bound to workspaces (``[agent.NAME] workspace``): the facts of
the agent's workspace reach the run (in its briefing and its context), the other workspaces'
do not, and what the run was shown is recorded there. A binding to a missing workspace stops
the run before anything starts, naming the agent and the workspace."""

from __future__ import annotations

import re

from fleetmem.core.fence import parse_block
from fleetmem.core.scope import WORKSPACE
from fleetmem.core.wrapper import parse
from tests.integrations.conftest import World
from tests.surfaces.cli_helpers import run_cli


def _setup(world: World) -> dict[str, str]:
    world.config(
        world.agent("acme-bot", extra='workspace = "Acme"\n')
        + world.agent("globex-bot", extra='workspace = "Globex"\n')
        # Without a briefing, the facts come in the run's context (pinned and relevant).
        + world.agent("acme-ctx", briefing=False, extra='workspace = "Acme"\n')
        + world.agent("globex-ctx", briefing=False, extra='workspace = "Globex"\n')
        + world.agent("lost-bot", extra='workspace = "Initech"\n')
    )
    app = world.app()
    try:
        acme = app.in_workspace(app.workspaces.create("Acme").id)
        globex = app.in_workspace(app.workspaces.create("Globex").id)
        return {
            "acme": acme.facts.add("The ledger test is flaky on Mondays.").fact.id,
            "acme-pin": acme.facts.add("Acme: never force-push main.", pin=True).fact.id,
            "globex": globex.facts.add("The ledger test is flaky on Mondays, in Globex.").fact.id,
            "globex-pin": globex.facts.add("Globex: tag every release.", pin=True).fact.id,
            "default": app.facts.add(
                "The ledger test is flaky on Mondays!", scope=WORKSPACE
            ).fact.id,
            "default-pin": app.facts.add("Default: squash every merge.", pin=True).fact.id,
        }
    finally:
        app.close()


def _run(world: World, agent: str, *before: str) -> tuple[int, str]:
    proc = run_cli(world.home, *before, "run", agent, "--workdir", str(world.repo),
                   "--prompt", "Why is the ledger test flaky on Mondays?", check=False)  # fmt: skip
    return proc.returncode, proc.stderr


def _given(world: World, facts: dict[str, str], start: int) -> tuple[set[str], set[str]]:
    """(facts in the run's briefing, facts in its context) of the ``start``-th start."""
    argv = world.starts()[start]["argv"]
    briefed: set[str] = set()
    if argv[-1].startswith("<untrusted-data"):
        block, _prompt = parse_block(argv[-1])
        section = parse(block.body)[0].section("facts")
        briefed = {str(i.get("id")) for i in section.items} if section is not None else set()
    flag = "--append-system-prompt"
    context = argv[argv.index(flag) + 1] if flag in argv else ""
    return (
        {name for name, fact_id in facts.items() if fact_id in briefed},
        {name for name, fact_id in facts.items() if f"fact {fact_id}" in context},
    )


def _run_id(stderr: str) -> str:
    found = re.search(r"run (run-[0-9a-f]{16}) of", stderr)
    assert found, stderr
    return found.group(1)


def test_each_agents_run_gets_its_workspaces_facts_and_no_others(world: World) -> None:
    facts = _setup(world)
    code, acme_err = _run(world, "acme-bot")
    assert code == 0, acme_err
    code, globex_err = _run(world, "globex-bot")
    assert code == 0, globex_err
    assert _given(world, facts, 0)[0] == {"acme", "acme-pin"}
    assert _given(world, facts, 1)[0] == {"globex", "globex-pin"}
    for agent in ("acme-ctx", "globex-ctx"):
        code, stderr = _run(world, agent)
        assert code == 0, stderr
    assert _given(world, facts, 2) == (set(), {"acme", "acme-pin"})
    assert _given(world, facts, 3) == (set(), {"globex", "globex-pin"})
    app = world.app()
    try:
        acme = app.in_workspace(app.agent_workspace("acme-bot"))
        globex = app.in_workspace(app.agent_workspace("globex-bot"))
        acme_run, globex_run = _run_id(acme_err), _run_id(globex_err)
        # What each run was shown is recorded in its agent's workspace, and nowhere else.
        assert {e.fact_id for e in acme.facts.offered_to_run(acme_run)} == {
            facts["acme"],
            facts["acme-pin"],
        }
        assert {e.fact_id for e in globex.facts.offered_to_run(globex_run)} == {
            facts["globex"],
            facts["globex-pin"],
        }
        for run_id in (acme_run, globex_run):
            assert app.facts.offered_to_run(run_id) == []
        assert globex.facts.offered_to_run(acme_run) == []
        assert acme.facts.offered_to_run(globex_run) == []
        # Its context loads too: the load meter of its own workspace knows the run.
        assert acme.files.run_loads(acme_run) and not app.files.run_loads(acme_run)
        assert acme.files.report("acme-bot").last_run_id == acme_run
    finally:
        app.close()


def test_a_run_of_an_agent_bound_to_a_missing_workspace_never_starts(world: World) -> None:
    _setup(world)
    code, stderr = _run(world, "lost-bot")
    assert code == 2, stderr
    assert "agent.lost-bot.workspace = 'Initech'" in stderr
    assert "agent lost-bot is bound to workspace 'Initech'" in stderr
    assert world.starts() == []


def test_a_run_cannot_be_moved_to_another_workspace_with_the_workspace_option(
    world: World,
) -> None:
    _setup(world)
    code, stderr = _run(world, "acme-bot", "--workspace", "Globex")
    assert code == 2, stderr
    assert "agent acme-bot acts in workspace acme-" in stderr
    assert world.starts() == []
    code, stderr = _run(world, "acme-bot", "--workspace", "Acme")
    assert code == 0, stderr
