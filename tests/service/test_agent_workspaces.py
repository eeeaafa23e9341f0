"""Agents bound to a workspace (``[agent.NAME] workspace``; docs/workspaces.md, "Agents in a
workspace"): everything a run reads or writes through the agent-facing paths (briefing,
recall, remember, votes, context files, notes, context assembly with its loads, exposures)
belongs to its agent's workspace, whichever application view it is called on; another
workspace's fact id is "not found"; a key naming no workspace is an error naming the agent
and the workspace, never a fallback to default; a workspace an agent names cannot be deleted.
Runs on both stores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fleetmem.config import load_settings
from fleetmem.core.facts import DEFAULT_WORKSPACE, Actor
from fleetmem.core.scope import WORKSPACE, project_scope
from fleetmem.errors import ConfigError, UnknownAgentWorkspace, UnknownFact, WorkspaceInUse
from fleetmem.integrations import context_delivery
from fleetmem.service.bootstrap import App
from fleetmem.service.runs import Caller

API = "github.com/acme/api"
VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
CONFIG = (
    VECTORS_OFF
    + '[agent.alpha]\nworkspace = "Acme Corp"\nedit_agent_files = true\n'
    + '[agent.beta]\nworkspace = "globex"\nedit_agent_files = true\n'
    + "[agent.gamma]\n"
    + '[agent.lost]\nworkspace = "nowhere"\n'
)


@dataclass
class Fleet:
    app: App
    acme: App
    globex: App
    facts: dict[str, str]
    callers: dict[str, Caller]

    def caller(self, agent: str) -> Caller:
        return self.callers[agent]


@pytest.fixture
def fleet(make_app: Callable[..., App]) -> Fleet:
    app = make_app(CONFIG)
    acme = app.in_workspace(app.workspaces.create("Acme Corp").id)
    globex = app.in_workspace(app.workspaces.create("Globex").id)
    facts = {
        "acme": acme.facts.add("Acme ledgers close at noon UTC.", scope=WORKSPACE).fact.id,
        "acme-api": acme.facts.add(
            "Acme's settlement fixture writes rows in local time.", scope=project_scope(API)
        ).fact.id,
        "globex": globex.facts.add("Globex ledgers close at midnight.", scope=WORKSPACE).fact.id,
        "default": app.facts.add("Default ledgers close on Fridays.", scope=WORKSPACE).fact.id,
    }
    callers = {}
    for agent in ("alpha", "beta", "gamma", "lost"):
        opened = app.runs.open_run(agent, repo=API, branch="main", run_id=f"run-{agent}")
        callers[agent] = app.runs.resolve_caller(opened.token)
    return Fleet(app, acme, globex, facts, callers)


def _shown(fleet: Fleet, text: str) -> set[str]:
    return {name for name, fact_id in fleet.facts.items() if fact_id in text}


# ---- configuration ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("3", "expected a string"),
        ('""', "must not be empty"),
        ('"   "', "must not be empty"),
        ('"a\\u202eb"', "U+202E"),
        ('"---"', "letter or a digit"),
        ('"' + "x" * 65 + '"', "at most 64"),
    ],
)
def test_a_bad_workspace_value_is_refused_at_load_naming_the_key(
    tmp_path: Path, value: str, reason: str
) -> None:
    (tmp_path / "fleetmem.toml").write_text(f"[agent.alpha]\nworkspace = {value}\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path)
    assert raised.value.key == "agent.alpha.workspace"
    assert reason in str(raised.value)


def test_a_project_file_cannot_bind_an_agent_to_a_workspace(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    repo.mkdir()
    (home / "fleetmem.toml").write_text("[agent.alpha]\n")
    (repo / ".fleetmem.toml").write_text('[agent.alpha]\nworkspace = "acme"\n')
    with pytest.raises(ConfigError) as raised:
        load_settings(home, repo)
    assert raised.value.key == "agent.alpha.workspace"
    assert "global-only" in str(raised.value)


def test_the_key_names_a_workspace_by_id_or_name_and_defaults_to_default(fleet: Fleet) -> None:
    app = fleet.app
    assert app.agent_workspace("alpha") == fleet.acme.workspace  # by name, as names compare
    assert app.agent_workspace("beta") == fleet.globex.workspace
    assert app.agent_workspace("gamma") == DEFAULT_WORKSPACE
    assert app.agent_workspace("undeclared") == DEFAULT_WORKSPACE
    assert app.for_agent("alpha") is fleet.acme
    # From any view, the agent's workspace is the same one.
    assert fleet.globex.for_agent("alpha") is fleet.acme
    assert fleet.acme.for_agent("gamma") is app


def test_an_unknown_workspace_is_an_error_naming_agent_and_workspace(fleet: Fleet) -> None:
    memory = fleet.app.agent_memory
    lost = fleet.caller("lost")
    for call in (
        lambda: fleet.app.for_agent("lost"),
        lambda: memory.briefing(lost),
        lambda: memory.recall(lost, "ledgers"),
        lambda: memory.remember(lost, "Ledgers are reconciled daily."),
        lambda: memory.vote(lost, fleet.facts["default"], "support"),
        lambda: memory.read_context_file(lost, "organization"),
        lambda: memory.update_notes(lost, "a note"),
    ):
        with pytest.raises(UnknownAgentWorkspace) as raised:
            call()
        assert raised.value.key == "agent.lost.workspace"
        assert "agent lost" in str(raised.value) and "'nowhere'" in str(raised.value)
    # Nothing was served from, or written to, the default workspace instead.
    assert fleet.app.facts.offered_to_run("run-lost") == []
    assert fleet.app.facts.counts()["proposed"] == 0
    # Context delivery gives nothing (and says why in the log) rather than default's files.
    text = context_delivery.assemble_for_run(fleet.app, agent="lost", repo=API, run_id="run-lost")
    assert text == ""
    assert fleet.app.files.run_loads("run-lost") == []


# ---- what runs read --------------------------------------------------------------------------
def test_each_run_is_briefed_from_its_agents_workspace_with_exposures_there(fleet: Fleet) -> None:
    memory = fleet.app.agent_memory
    alpha = memory.briefing(fleet.caller("alpha"))
    beta = memory.briefing(fleet.caller("beta"))
    gamma = memory.briefing(fleet.caller("gamma"))
    assert _shown(fleet, alpha.text) == {"acme", "acme-api"}
    assert _shown(fleet, beta.text) == {"globex"}
    assert _shown(fleet, gamma.text) == {"default"}
    # Exposures are recorded in the workspace the fact belongs to, and only there.
    assert {e.fact_id for e in fleet.acme.facts.offered_to_run("run-alpha")} == set(alpha.facts)
    assert fleet.app.facts.offered_to_run("run-alpha") == []
    assert fleet.globex.facts.offered_to_run("run-alpha") == []
    assert {e.fact_id for e in fleet.globex.facts.offered_to_run("run-beta")} == {
        fleet.facts["globex"]
    }
    assert {e.fact_id for e in fleet.app.facts.offered_to_run("run-gamma")} == {
        fleet.facts["default"]
    }


def test_whichever_view_serves_the_call_the_run_acts_in_its_agents_workspace(
    fleet: Fleet,
) -> None:
    via_globex = fleet.globex.agent_memory.recall(fleet.caller("alpha"), "ledgers close")
    assert _shown(fleet, via_globex.text) <= {"acme", "acme-api"} and via_globex.facts
    via_acme = fleet.acme.agent_memory.briefing(fleet.caller("gamma"))
    assert _shown(fleet, via_acme.text) == {"default"}


def test_recall_shows_only_the_agents_workspace_facts(fleet: Fleet) -> None:
    memory = fleet.app.agent_memory
    alpha = memory.recall(fleet.caller("alpha"), "ledgers close")
    beta = memory.recall(fleet.caller("beta"), "ledgers close")
    assert _shown(fleet, alpha.text) == {"acme"}
    assert _shown(fleet, beta.text) == {"globex"}
    assert [e.fact_id for e in fleet.acme.facts.offered_to_run("run-alpha")] == [
        fleet.facts["acme"]
    ]
    # An unattributed caller gets the default workspace's workspace facts, as before.
    anonymous = memory.recall(None, "ledgers close")
    assert _shown(fleet, anonymous.text) == {"default"}


# ---- what runs write -------------------------------------------------------------------------
def test_proposals_land_in_the_agents_workspace(fleet: Fleet) -> None:
    memory = fleet.app.agent_memory
    result = memory.remember(fleet.caller("alpha"), "Acme invoices are numbered per year.")
    assert result.fact is not None
    proposed = fleet.acme.facts.list(status="proposed").items
    assert [f.id for f in proposed] == [result.fact.id]
    assert fleet.app.facts.list(status="proposed").items == ()
    assert fleet.globex.facts.list(status="proposed").items == ()


def test_a_vote_on_another_workspaces_fact_is_not_found(fleet: Fleet) -> None:
    memory = fleet.app.agent_memory
    alpha = fleet.caller("alpha")
    for other in ("globex", "default"):
        with pytest.raises(UnknownFact):
            memory.vote(alpha, fleet.facts[other], "support")
    # The same way the id of a fact that never existed is answered.
    with pytest.raises(UnknownFact):
        memory.vote(alpha, "f-does-not-exist", "support")
    vote = memory.vote(alpha, fleet.facts["acme"], "support", reason="seen in the books")
    assert vote.vote.fact_id == fleet.facts["acme"]
    # Stored in acme's workspace: that workspace's service reads it back.
    assert [v.agent for v in fleet.acme.facts.votes(fleet.facts["acme"]).votes] == ["alpha"]
    with pytest.raises(UnknownFact):
        memory.vote(fleet.caller("gamma"), fleet.facts["acme"], "contradict")


def test_context_files_and_notebooks_are_the_agents_workspaces(fleet: Fleet) -> None:
    memory = fleet.app.agent_memory
    alpha, beta = fleet.caller("alpha"), fleet.caller("beta")
    fleet.acme.files.save(
        fleet.acme.files.ref("organization"),
        "Acme: book in UTC.",
        base_revision=0,
        actor=Actor("human", "operator"),
    )
    assert memory.read_context_file(alpha, "organization").text == "Acme: book in UTC."
    assert memory.read_context_file(beta, "organization").text == ""
    update = memory.update_notes(alpha, "Alpha's own note.")
    assert update.written
    notes = fleet.acme.files.ref("notes", agent="alpha")
    assert "Alpha's own note." in fleet.acme.files.get(notes).body
    assert fleet.app.files.get(notes).body == ""
    memory.note_project(beta, "Globex's API keeps a changelog.")
    notebook = fleet.globex.files.ref("notebook", repo=API)
    assert "changelog" in fleet.globex.files.get(notebook).body
    assert fleet.app.files.get(notebook).body == ""
    assert fleet.acme.files.get(notebook).body == ""


def test_a_runs_context_and_its_loads_come_from_its_agents_workspace(fleet: Fleet) -> None:
    pinned = fleet.acme.facts.add("Acme: never force-push main.", pin=True).fact.id
    fleet.app.facts.add("Default: squash every merge.", pin=True)
    text = context_delivery.assemble_for_run(fleet.app, agent="alpha", repo=API, run_id="run-alpha")
    assert f"fact {pinned}" in text and "never force-push" in text
    assert "squash every merge" not in text
    assert fleet.acme.files.run_loads("run-alpha")
    assert fleet.app.files.run_loads("run-alpha") == []
    # The load meter and whole-agent report read in the agent's workspace know the run.
    assert fleet.acme.files.report("alpha").last_run_id == "run-alpha"
    assert fleet.app.files.report("alpha").last_run_id is None


# ---- deleting a workspace an agent names -----------------------------------------------------
def test_a_workspace_an_agent_names_cannot_be_deleted_until_the_agent_is_rebound(
    fleet: Fleet,
) -> None:
    app = fleet.app
    for attempt in (
        lambda: app.workspaces.delete_preview(fleet.acme.workspace),
        lambda: app.workspaces.delete(fleet.acme.workspace, "Acme Corp"),
    ):
        with pytest.raises(WorkspaceInUse) as raised:
            attempt()
        assert "agent alpha acts in it (agent.alpha.workspace)" in str(raised.value)
    assert app.workspaces.exists(fleet.acme.workspace)
    config = (app.home / "fleetmem.toml").read_text(encoding="utf-8")
    (app.home / "fleetmem.toml").write_text(
        config.replace('workspace = "Acme Corp"\n', ""), encoding="utf-8"
    )
    assert app.config.reload_if_changed() is None
    app.workspaces.delete(fleet.acme.workspace, "Acme Corp")
    assert app.agent_workspace("alpha") == DEFAULT_WORKSPACE


def test_a_renamed_workspace_named_by_its_old_name_fails_clearly(fleet: Fleet) -> None:
    fleet.app.workspaces.rename(fleet.globex.workspace, "Globex Europe")
    with pytest.raises(UnknownAgentWorkspace, match="agent beta is bound to workspace 'globex'"):
        fleet.app.agent_memory.briefing(fleet.caller("beta"))
