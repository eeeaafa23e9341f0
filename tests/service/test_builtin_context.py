"""Neighbour context in the built-in index: found through neighbours, ranked below, forgotten."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session

API = "github.com/acme/api"
SCOPE = f"project:{API}"


def ingest(app: App, run_id: str, at: str, text: str, **overrides: Any) -> str:
    record = make_record(
        run_id=run_id,
        started_at=at,
        ended_at=at,
        result_text=text,
        **({"sessions": [session(repo=API)]} | overrides),
    )
    result = app.memory.ingest_run(record)
    assert result.status == "recorded" and result.episode_id is not None, result
    return result.episode_id


def ids(app: App, query: str) -> list[str]:
    return [h.episode_id for h in app.memory.recall(query, scopes=[SCOPE], limit=20).items]


def test_an_episode_is_found_through_its_neighbours_but_ranks_below_them(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    first = ingest(app, "r1", "2026-11-28T09:00:00Z", "Pinned the settlement clock in tests.")
    second = ingest(app, "r2", "2026-11-28T09:20:00Z", "Follow-up: the fixture now uses UTC.")
    third = ingest(app, "r3", "2026-11-28T09:40:00Z", "Bumped the logging library.")
    fourth = ingest(app, "r4", "2026-11-28T10:00:00Z", "Renamed the release script.")
    # Two runs on each side lend their words (context both ways: the first run's entry was
    # rewritten as the later ones arrived); the run holding the words ranks first, and the
    # third run away is not context. (Among runs that hold the words only as context, BM25's
    # length normalisation decides, so only membership is asserted for them.)
    found = ids(app, "settlement clock")
    assert found[0] == first and set(found[1:]) == {second, third}
    found = ids(app, "release script")
    assert found[0] == fourth and set(found[1:]) == {second, third}
    found = ids(app, "logging library")
    assert found[0] == third and set(found[1:]) == {first, second, fourth}
    # The first run is found by the second's words, which it never contained itself.
    found = ids(app, "fixture UTC")
    assert found[0] == second and set(found[1:]) == {first, third, fourth}


def test_other_branches_and_distant_runs_are_not_context(make_app: Callable[..., App]) -> None:
    app = make_app()
    mine = ingest(app, "r1", "2026-11-28T09:00:00Z", "Pinned the settlement clock in tests.")
    other = ingest(
        app,
        "r2",
        "2026-11-28T09:10:00Z",
        "Reviewed the docs.",
        agent="docs-bot",
        sessions=[session(repo=API, branch="docs")],
    )
    later = ingest(app, "r3", "2026-11-28T12:00:00Z", "Rewrote the changelog.")
    assert ids(app, "settlement clock") == [mine]
    assert ids(app, "changelog") == [later]
    assert ids(app, "docs") == [other]


def test_another_agent_on_the_same_branch_is_context(make_app: Callable[..., App]) -> None:
    app = make_app()
    mine = ingest(app, "r1", "2026-11-28T09:00:00Z", "Pinned the settlement clock in tests.")
    review = ingest(app, "r2", "2026-11-28T09:10:00Z", "Approved the change.", agent="reviewer")
    # The reviewer's run on the same branch is found by the words of the run it reviewed.
    assert ids(app, "settlement clock") == [mine, review]


def test_forgetting_a_run_removes_its_words_from_its_neighbours(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    first = ingest(app, "r1", "2026-11-28T09:00:00Z", "Pinned the settlement clock in tests.")
    secret = ingest(app, "r2", "2026-11-28T09:20:00Z", "Moved the hunter2 fixture aside.")
    third = ingest(app, "r3", "2026-11-28T09:40:00Z", "Bumped the logging library.")
    assert set(ids(app, "hunter2")) == {secret, first, third}
    app.memory.forget(secret)
    assert ids(app, "hunter2") == []
    # The survivors are now each other's neighbours.
    assert ids(app, "logging library") == [third, first]
