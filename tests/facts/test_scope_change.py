"""Changing who a fact is for (seed 003 §6.2 "Limit to one agent…", FR-13): validated,
journaled, seen by runs started afterwards, 404 for another workspace's fact."""

from __future__ import annotations

import pytest

from fleetmem.core.facts import Actor
from fleetmem.errors import DuplicateFact, InvalidInput, InvalidTransition, UnknownFact
from fleetmem.service.facts import FactService
from tests.facts.conftest import ALICE, API, Clock


def _pinned_bodies(facts: FactService, agent: str, repo: str | None = None) -> list[str]:
    return [item.body for item in facts.pinned_for_run(agent=agent, repo=repo)]


def test_limit_to_one_agent_and_back_to_the_workspace(facts: FactService, clock: Clock) -> None:
    row = facts.add("Deploys happen on Tuesdays.", pin=True, actor=ALICE).fact
    assert _pinned_bodies(facts, "research") == ["Deploys happen on Tuesdays."]

    clock.advance(60)
    limited = facts.set_scope(row.id, "agent:outreach", actor=ALICE)
    assert (limited.scope, limited.updated_at) == ("agent:outreach", clock.now)
    assert limited.pinned
    assert facts.get(row.id).fact.scope == "agent:outreach"
    # Runs started from now on: only that agent gets it.
    assert _pinned_bodies(facts, "research") == []
    assert _pinned_bodies(facts, "outreach") == ["Deploys happen on Tuesdays."]

    facts.set_scope(row.id, f"project:{API}", actor=ALICE)
    assert _pinned_bodies(facts, "outreach") == []
    assert _pinned_bodies(facts, "outreach", API) == ["Deploys happen on Tuesdays."]

    back = facts.set_scope(row.id, "workspace", actor=ALICE)
    assert back.scope == "workspace"
    assert _pinned_bodies(facts, "research") == ["Deploys happen on Tuesdays."]

    journal = facts.store.fact_journal(facts.workspace, row.id)
    scoped = [(j.before, j.after) for j in journal if j.action == "scope"]
    assert [(b["scope"], a["scope"]) for b, a in scoped if b and a] == [
        ("workspace", "agent:outreach"),
        ("agent:outreach", f"project:{API}"),
        (f"project:{API}", "workspace"),
    ]
    assert {j.actor for j in journal if j.action == "scope"} == {"alice"}


def test_the_same_scope_changes_nothing(facts: FactService) -> None:
    row = facts.add("Tabs, not spaces.", actor=ALICE).fact
    assert facts.set_scope(row.id, "workspace", actor=ALICE) == row
    assert [j.action for j in facts.store.fact_journal(facts.workspace, row.id)] == ["create"]


@pytest.mark.parametrize("scope", ["agent:", "agent:Bad Name", "team:core", "", "project:"])
def test_a_bad_scope_is_refused_naming_the_field(facts: FactService, scope: str) -> None:
    row = facts.add("Tabs, not spaces.", actor=ALICE).fact
    with pytest.raises(InvalidInput) as caught:
        facts.set_scope(row.id, scope, actor=ALICE)
    assert caught.value.field == "scope"
    assert facts.get(row.id).fact.scope == "workspace"


def test_only_people_change_a_scope_and_only_of_a_live_fact(
    facts: FactService, clock: Clock
) -> None:
    row = facts.add("Tabs, not spaces.", actor=ALICE).fact
    with pytest.raises(InvalidInput):
        facts.set_scope(row.id, "agent:research", actor=Actor("agent", "research", "run-1"))
    facts.forget(row.id, actor=ALICE)
    with pytest.raises(InvalidTransition):
        facts.set_scope(row.id, "agent:research", actor=ALICE)


def test_a_scope_that_already_holds_the_same_words_is_refused(facts: FactService) -> None:
    mine = facts.add("Tabs, not spaces.", scope="agent:research", actor=ALICE).fact
    shared = facts.add("Tabs, not spaces.", actor=ALICE).fact
    with pytest.raises(DuplicateFact) as caught:
        facts.set_scope(shared.id, "agent:research", actor=ALICE)
    assert caught.value.context["existing"] == mine.id


def test_another_workspaces_fact_is_unknown(facts: FactService) -> None:
    theirs = facts.in_workspace("acme").add("Acme's plan.", actor=ALICE).fact
    with pytest.raises(UnknownFact):
        facts.set_scope(theirs.id, "agent:research", actor=ALICE)
    assert facts.in_workspace("acme").get(theirs.id).fact.scope == "workspace"
