"""An episode takes the pull request an earlier run linked to its branch (seed 000 REQ-5)."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from fleetmem.service.bootstrap import App
from tests.conftest import make_record, session

API = "github.com/acme/api"


def _run(app: App, n: int, branch: str, pr: str | None = None, repo: str = API) -> str | None:
    fields = {"pull_request": pr} if pr else {}
    record = make_record(
        run_id=f"run-{n}-{secrets.token_hex(3)}",
        started_at=f"2026-11-{10 + n:02d}T10:00:00Z",
        ended_at=f"2026-11-{10 + n:02d}T10:05:00Z",
        sessions=[session(repo=repo, branch=branch)],
        **fields,
    )
    if pr is None:
        record.pop("pull_request", None)  # the example record may carry one of its own
    result = app.memory.ingest_run(record)
    assert result.episode_id is not None
    episode = app.memory.get_episode(result.episode_id).episode
    assert episode is not None
    return episode.get("pull_request")


def test_a_later_run_on_the_branch_takes_the_linked_pull_request(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    first = f"https://github.com/acme/api/pull/{secrets.randbelow(9000) + 100}"
    later = f"https://github.com/acme/api/pull/{secrets.randbelow(9000) + 10000}"
    assert _run(app, 1, "fix/flaky", first) == first
    assert _run(app, 2, "fix/flaky") == first
    assert _run(app, 3, "fix/flaky", later) == later  # a run's own record wins
    assert _run(app, 4, "fix/flaky") == later  # the latest earlier link
    assert _run(app, 5, "feat/other") is None  # another branch links nothing
    assert _run(app, 6, "fix/flaky", repo="github.com/acme/web") is None  # another repo


def test_runs_on_a_default_branch_inherit_nothing(make_app: Callable[..., App]) -> None:
    app = make_app()
    _run(app, 1, "main", "https://github.com/acme/api/pull/7")
    assert _run(app, 2, "main") is None
