"""How many neighbouring runs lend their words to an episode's index entry."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fleetmem.errors import InvalidInput
from fleetmem.providers.builtin import BuiltinProvider, RankingOptions
from fleetmem.service.bootstrap import App
from fleetmem.service.memory import MemoryService
from tests.conftest import ingest_text, make_record, session

API = "github.com/acme/api"
SCOPE = f"project:{API}"
TEXTS = (
    "Pinned the settlement clock in tests.",
    "Follow-up: the fixture now uses UTC.",
    "Bumped the logging library.",
    "Renamed the release script.",
    "Cleaned the build cache.",
)


def _memory(app: App, options: RankingOptions) -> MemoryService:
    provider = BuiltinProvider(app.store, None, options)
    return MemoryService(store=app.store, settings=lambda: app.config.current, provider=provider)


def _chain(memory: MemoryService, minutes_apart: int = 20) -> list[str]:
    """Five runs of one agent in one repository, ``minutes_apart`` from each other."""
    ids = []
    for i, text in enumerate(TEXTS):
        at = f"2026-11-28T{9 + (i * minutes_apart) // 60:02d}:{(i * minutes_apart) % 60:02d}:00Z"
        record = make_record(
            run_id=f"r{i}",
            started_at=at,
            ended_at=at,
            result_text=text,
            sessions=[session(repo=API)],
        )
        result = memory.ingest_run(record)
        assert result.status == "recorded" and result.episode_id is not None, result
        ids.append(result.episode_id)
    return ids


def _found(memory: MemoryService, query: str) -> list[str]:
    return [h.episode_id for h in memory.recall(query, scopes=[SCOPE], limit=20).items]


@pytest.mark.parametrize("neighbours", [0, 1, 2, 3])
def test_the_middle_run_lends_its_words_to_that_many_runs_on_each_side(
    make_app: Callable[..., App], neighbours: int
) -> None:
    app = make_app()
    memory = _memory(app, RankingOptions(context_neighbours=neighbours))
    ids = _chain(memory)
    found = _found(memory, "logging library")
    assert found[0] == ids[2]  # the run that holds the words ranks first
    lenders = {ids[i] for i in range(len(ids)) if i != 2 and abs(i - 2) <= neighbours}
    assert set(found[1:]) == lenders


def test_the_walk_stops_at_a_gap_longer_than_the_window(make_app: Callable[..., App]) -> None:
    app = make_app()
    # 40 minutes apart with a 30-minute window: no run is anyone's neighbour, even two away.
    memory = _memory(app, RankingOptions(context_window_s=1800, context_neighbours=2))
    ids = _chain(memory, minutes_apart=40)
    assert _found(memory, "logging library") == [ids[2]]


def test_forgetting_re_indexes_both_neighbours_on_each_side(make_app: Callable[..., App]) -> None:
    app = make_app()
    memory = _memory(app, RankingOptions(context_neighbours=2))
    ids = _chain(memory)
    assert ids[0] in _found(memory, "logging library")
    memory.forget(ids[2])
    # Every run that held the forgotten words as context was rewritten without them.
    assert _found(memory, "logging library") == []
    # The survivors close ranks: the first run now reaches the fourth (two away after the gap).
    found = _found(memory, "release script")
    assert found[0] == ids[3] and set(found[1:]) == {ids[0], ids[1], ids[4]}


@pytest.mark.parametrize(
    ("field", "value"),
    [("context_neighbours", -1), ("candidates", -5), ("rrf_k", 2.5), ("feedback_items", True)],
)
def test_bad_ranking_options_name_the_field_and_the_value(field: str, value: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        RankingOptions(**{field: value})  # type: ignore[arg-type]
    assert f"RankingOptions.{field}" in str(caught.value)
    assert str(value) in str(caught.value)


def test_neighbours_cross_agents_on_one_branch_but_not_branches(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    memory = _memory(app, RankingOptions(context_neighbours=1))

    def run(run_id: str, minute: int, agent: str, branch: str, text: str) -> str:
        at = f"2026-11-28T09:{minute:02d}:00Z"
        return ingest_text(memory, run_id, at, text, agent=agent, repo=API, branch=branch)

    asked = run("a", 0, "coder", "fix-clock", "Asked for a review of the clock fix.")
    reviewed = run("b", 5, "reviewer", "fix-clock", "Settlement timezone handling approved.")
    run("c", 6, "coder", "main", "Bumped the logging library.")
    # The reviewer's words reach the coder's run on the same branch, not the run on main.
    assert _found(memory, "settlement timezone") == [reviewed, asked]
