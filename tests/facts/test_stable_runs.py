"""Stable runs: a run in flight keeps the fact and file revisions it started with for its whole
life, recall and read_context_file included; the next run gets the new ones (real SQLite)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fleetmem.core.facts import Actor
from fleetmem.service.bootstrap import App
from fleetmem.service.context_facts import NO_MATCH_PROMPT, facts_for_prompt
from fleetmem.service.files import Actor as FileActor
from tests.facts.conftest import MINILM
from tests.facts.test_semantic import EXTRA

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


def _edited_between_runs(app: App, old: str, new: str, others: list[str]) -> tuple[Any, Any, Any]:
    """A fact written as ``old`` (beside ``others``), a run opened, the fact edited to
    ``new``, another run opened: (the fact, the early run, the late run)."""
    fact = app.facts.add(old, actor=HUMAN).fact
    for body in others:
        app.facts.add(body, actor=HUMAN)
    _later()
    early = app.runs.open_run(AGENT, repo=REPO)
    _later()
    app.facts.edit(fact.id, new, actor=HUMAN)
    _later()
    return fact, early, app.runs.open_run(AGENT, repo=REPO)


def _ids(app: App, query: str, run_id: str) -> dict[str, str]:
    got = app.facts.recall_for_run(query, run_id=run_id, agent=AGENT, repo=REPO)
    return {item.fact.id: item.fact.body for item in got.items}


def test_a_run_in_flight_finds_an_edited_fact_by_the_words_it_holds_not_the_new_ones(
    make_app: Callable[..., App],
) -> None:
    """Ranking follows the revision served: the run that opened before an edit finds the fact
    by its old words (and is shown them), never by the new ones; the next run the reverse.
    The same holds for the facts handed to a session's prompt."""
    app = make_app()
    old = "Releases ship through the kestrel pipeline on Tuesdays."
    new = "Releases ship through the osprey pipeline on Thursdays."
    fact, early, late = _edited_between_runs(
        app, old, new, ["The kestrel logo is drawn by the design team."]
    )

    # A session's prompt first (recall would count as shown, and a prompt skips what was).
    assert (
        facts_for_prompt(app.facts, "osprey pipeline", run_id=early.run_id, agent=AGENT, repo=REPO)
        == NO_MATCH_PROMPT
    )
    block = facts_for_prompt(
        app.facts, "kestrel pipeline", run_id=early.run_id, agent=AGENT, repo=REPO
    )
    assert old in block and new not in block
    [shown] = [e for e in app.facts.offered_to_run(early.run_id) if e.fact_id == fact.id]
    assert shown.revision == 1

    assert _ids(app, "kestrel pipeline", early.run_id).get(fact.id) == old
    assert fact.id not in _ids(app, "osprey pipeline", early.run_id)
    assert _ids(app, "osprey pipeline", late.run_id).get(fact.id) == new
    assert fact.id not in _ids(app, "kestrel pipeline", late.run_id)


def test_a_run_in_flight_ranks_an_edited_fact_by_the_meaning_it_holds(
    make_app: Callable[..., App],
) -> None:
    """With the offline embedder: an edit that changed what a fact means moves it out of the
    answers of a run that opened before it only for the new meaning, not the old one."""
    app = make_app(MINILM)
    old = "The staging database is refreshed from a production snapshot every Sunday night."
    new = "Invoices are emailed to every customer on the first working day of the month."
    fact, early, late = _edited_between_runs(app, old, new, EXTRA[:8])
    about_old, about_new = "when does staging get fresh data", "billing emails to clients"

    assert _ids(app, about_old, early.run_id).get(fact.id) == old
    assert fact.id not in _ids(app, about_new, early.run_id)
    assert _ids(app, about_new, late.run_id).get(fact.id) == new
    assert fact.id not in _ids(app, about_old, late.run_id)
