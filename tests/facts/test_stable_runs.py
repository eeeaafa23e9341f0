"""Stable runs: a run in flight keeps the fact and file revisions it started with for its whole
life, recall and read_context_file included; the next run gets the new ones (real SQLite)."""

from __future__ import annotations

import time
from collections.abc import Callable

from fleetmem.core.facts import Actor
from fleetmem.service.bootstrap import App
from fleetmem.service.files import Actor as FileActor

REPO = "github.com/acme/api"
AGENT = "api-fixer"
HUMAN = Actor("human", "marina")
MARINA = FileActor("human", "marina")


def _later() -> None:
    time.sleep(0.02)  # revisions and run starts are ordered by wall time


def test_recall_in_a_run_in_flight_serves_the_revision_it_started_with(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    fact = app.facts.add("Deploys of the billing service happen on Tuesdays.", actor=HUMAN).fact
    _later()
    early = app.runs.open_run(AGENT, repo=REPO)
    _later()
    app.facts.edit(fact.id, "Deploys of the billing service happen on Thursdays.", actor=HUMAN)
    _later()
    late = app.runs.open_run(AGENT, repo=REPO)

    def recalled(run_id: str) -> tuple[str, int]:
        got = app.facts.recall_for_run("billing deploys", run_id=run_id, agent=AGENT, repo=REPO)
        [item] = [i for i in got.items if i.fact.id == fact.id]
        return item.fact.body, item.fact.revision

    assert recalled(early.run_id) == ("Deploys of the billing service happen on Tuesdays.", 1)
    assert recalled(late.run_id) == ("Deploys of the billing service happen on Thursdays.", 2)
    # The exposure records what the run was really shown.
    [shown] = [e for e in app.facts.offered_to_run(early.run_id) if e.fact_id == fact.id]
    assert shown.revision == 1
    assert app.facts.get(fact.id).runs_in_flight == 1  # the fact page's "1 run in flight …"


def test_read_context_file_in_a_run_in_flight_keeps_its_start_revision(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    glossary = app.files.ref("glossary")
    app.files.save(glossary, "ACV: annual contract value.\n", base_revision=0, actor=MARINA)
    _later()
    run = app.runs.open_run(AGENT, repo=REPO)
    app.files.assemble(AGENT, repo=REPO, run_id=run.run_id)  # its context, loads recorded
    _later()
    app.files.save(glossary, "ACV: average contract value.\n", base_revision=1, actor=MARINA)
    held = app.files.read_context_file(agent=AGENT, name="glossary", run_id=run.run_id)
    assert (held.revision, held.text) == (1, "ACV: annual contract value.\n")
    _later()
    fresh = app.runs.open_run(AGENT, repo=REPO)
    app.files.assemble(AGENT, repo=REPO, run_id=fresh.run_id)
    now = app.files.read_context_file(agent=AGENT, name="glossary", run_id=fresh.run_id)
    assert (now.revision, now.text) == (2, "ACV: average contract value.\n")
