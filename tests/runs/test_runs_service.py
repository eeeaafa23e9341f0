"""RunsService over a real SQLite store: live runs, expiry, closing, presence, collisions,
recent runs, runs editing paths and caller attribution (issue 6 item 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleetmem import metrics
from fleetmem.errors import Conflict, InvalidInput, NotAttributed, NotFound
from fleetmem.service.bootstrap import App
from fleetmem.service.runs import RunsService, hash_token
from tests.conftest import make_record, session, stored_bytes

API = "github.com/acme/api"
BILLING = "github.com/acme/billing"


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def runs_for(app: App, clock: Clock) -> RunsService:
    """A runs service on the app's store with a clock the test moves; it also closes runs."""
    runs = RunsService(store=app.store, settings=lambda: app.config.current, clock=clock)
    app.memory.add_run_listener(runs.on_run_stored)
    return runs


def closed_total(how: str) -> float:
    return metrics.sample("fleetmem_runs_closed_total", {"how": how})


# ---- opening ----------------------------------------------------------------------------------
def test_open_gives_a_token_and_stores_only_its_hash(make_app: Callable[..., App]) -> None:
    app = make_app()
    before = metrics.sample("fleetmem_runs_opened_total", {"source": "hook"})
    opened = app.runs.open_run(
        "api-fixer", repo=API, branch="main", adapter="claude-code", source="hook"
    )
    assert opened.token.startswith("fmr_") and len(opened.token) > 40
    assert opened.run_id.startswith("run-") and opened.repo == API and opened.branch == "main"
    assert metrics.sample("fleetmem_runs_opened_total", {"source": "hook"}) == before + 1
    dump = stored_bytes(app.store)
    assert opened.token.encode() not in dump
    assert hash_token(opened.token).encode() in dump
    assert app.store.live_run_by_token(hash_token(opened.token)) is not None


def test_open_in_a_working_directory_takes_repository_and_branch_from_git(
    make_app: Callable[..., App], git_repo: Callable[..., Path]
) -> None:
    app = make_app()
    root = git_repo("api", remote="git@github.com:acme/api.git", branch="fix/flaky")
    (root / "pkg").mkdir()
    opened = app.runs.open_run("api-fixer", workdir=str(root / "pkg"))
    assert (opened.repo, opened.branch, opened.workdir) == (API, "fix/flaky", str(root / "pkg"))
    caller = app.runs.resolve_caller(opened.token)
    assert caller.scopes == ("workspace", f"project:{API}", "agent:api-fixer")
    assert caller.episode_scopes == (f"project:{API}",)
    # Absolute paths under the checkout become repository-relative; others are refused.
    run = app.runs.touch(opened.token, [str(root / "pkg" / "mod.py"), "README.md"])
    assert run.info.files == ("README.md", "pkg/mod.py")
    with pytest.raises(InvalidInput) as info:
        app.runs.touch(opened.token, ["/etc/passwd"])
    assert info.value.field == "paths"


def test_a_run_outside_any_repository_sees_no_episodes(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app = make_app()
    outside = tmp_path / "scratch"
    outside.mkdir()
    opened = app.runs.open_run("api-fixer", workdir=str(outside))
    caller = app.runs.resolve_caller(opened.token)
    assert caller.repo is None
    assert caller.scopes == ("workspace", "agent:api-fixer")
    assert caller.episode_scopes == ()
    assert app.runs.collisions_for(caller) == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"agent": "API Fixer", "repo": API}, "agent"),
        ({"agent": "api-fixer"}, "repo"),
        ({"agent": "api-fixer", "workdir": "relative/dir"}, "workdir"),
        ({"agent": "api-fixer", "repo": "https://github.com/acme/api"}, "repo"),
        ({"agent": "api-fixer", "repo": API, "source": "webhook"}, "source"),
        ({"agent": "api-fixer", "repo": API, "run_id": "has space"}, "run_id"),
        ({"agent": "api-fixer", "repo": API, "branch": "a\nb"}, "branch"),
        ({"agent": "api-fixer", "repo": API, "adapter": ""}, "adapter"),
    ],
)
def test_bad_open_requests_name_the_field(
    make_app: Callable[..., App], kwargs: dict[str, Any], field: str
) -> None:
    app = make_app()
    with pytest.raises(InvalidInput) as info:
        app.runs.open_run(**kwargs)
    assert info.value.field == field
    assert app.store.list_live_runs(repo=None, agent=None, include_closed=True, limit=10) == []


def test_a_run_id_can_be_opened_once_and_not_after_its_record(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    app.runs.open_run("api-fixer", repo=API, run_id="run-7")
    with pytest.raises(InvalidInput, match="already open"):
        app.runs.open_run("api-fixer", repo=API, run_id="run-7")
    app.memory.ingest_run(make_record(run_id="run-8"))
    with pytest.raises(Conflict, match="already has a run record"):
        app.runs.open_run("api-fixer", repo=API, run_id="run-8")


# ---- heartbeats, expiry, closing ------------------------------------------------------------
def test_heartbeats_record_branch_and_files_once_each(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    runs = runs_for(app, clock)
    opened = runs.open_run("api-fixer", repo=API, branch="main")
    clock.now += 30
    run = runs.heartbeat(opened.token, files=["b.py", "a.py", "b.py", "./c/../d.py"])
    assert run.info.files == ("a.py", "b.py", "d.py")
    assert run.info.last_seen_at == clock.now and run.state == "live"
    run = runs.heartbeat(opened.token, branch="fix/x", files=["a.py"])
    assert run.info.branch == "fix/x" and run.info.files == ("a.py", "b.py", "d.py")
    for bad in ("../up.py", "a\x00b", "", "x" * 1025):
        with pytest.raises(InvalidInput):
            runs.heartbeat(opened.token, files=[bad])
    with pytest.raises(InvalidInput):
        runs.heartbeat(opened.token, files=[f"f{i}" for i in range(101)])


def test_files_per_run_are_capped(make_app: Callable[..., App]) -> None:
    app = make_app()
    opened = app.runs.open_run("api-fixer", repo=API)
    for start in range(0, 600, 100):
        app.runs.heartbeat(opened.token, files=[f"f{i:04d}.py" for i in range(start, start + 100)])
    caller = app.runs.resolve_caller(opened.token)
    assert len(caller.files) == 500


def test_a_silent_run_expires_and_a_heartbeat_brings_it_back(
    make_app: Callable[..., App],
) -> None:
    app = make_app('[runs]\nexpire_after = "2m"\n[model_api]\nembedding_model = ""\n')
    clock = Clock()
    runs = runs_for(app, clock)
    opened = runs.open_run("api-fixer", repo=API)
    assert [r.run_id for r in runs.live_runs(API)] == [opened.run_id]
    clock.now += 119
    assert runs.resolve_caller(opened.token).state == "live"
    clock.now += 2
    assert runs.resolve_caller(opened.token).state == "expired"  # by silence, before any sweep
    before = closed_total("expired")
    assert runs.live_runs(API) == []  # reading sweeps: the expiry is written down and counted
    assert closed_total("expired") == before + 1
    assert runs.sweep(force=True) == 0
    row = app.store.get_live_run(opened.run_id)
    assert row is not None and row.close_reason == "expired"
    # Still attributable: a quiet agent keeps its identity, and a heartbeat revives the run.
    run = runs.heartbeat(opened.token)
    assert run.state == "live" and run.info.closed_at is None
    assert [r.run_id for r in runs.live_runs(API)] == [opened.run_id]


def test_the_run_record_closes_the_live_run(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    runs = runs_for(app, clock)
    opened = runs.open_run("api-fixer", repo=API, run_id="run-2026-11-28-0042")
    other = runs.open_run("codex", repo=API, run_id="run-other")
    before = closed_total("record")
    app.memory.ingest_run(make_record())
    assert closed_total("record") == before + 1
    row = app.store.get_live_run(opened.run_id)
    assert row is not None and row.close_reason == "record"
    assert [r.run_id for r in runs.live_runs(API)] == [other.run_id]
    assert runs.resolve_caller(opened.token).state == "closed"
    with pytest.raises(NotAttributed, match="closed"):
        runs.heartbeat(opened.token)
    # A duplicate record changes nothing and counts nothing.
    app.memory.ingest_run(make_record())
    assert closed_total("record") == before + 1


def test_a_record_of_another_agent_does_not_close_the_run(make_app: Callable[..., App]) -> None:
    app = make_app()
    opened = app.runs.open_run("codex", repo=API, run_id="run-2026-11-28-0042")
    app.memory.ingest_run(make_record())  # agent api-fixer
    row = app.store.get_live_run(opened.run_id)
    assert row is not None and row.closed_at is None


def test_a_failing_listener_never_fails_the_ingest(make_app: Callable[..., App]) -> None:
    app = make_app()

    def boom(_event: object) -> None:
        raise RuntimeError("listener bug")

    app.memory.add_run_listener(boom)
    assert app.memory.ingest_run(make_record()).status == "recorded"


# ---- attribution -----------------------------------------------------------------------------
def test_unknown_or_missing_tokens_are_not_attributed(make_app: Callable[..., App]) -> None:
    app = make_app()
    for token in (None, "", "fmr_nope", "x" * 600):
        with pytest.raises(NotAttributed):
            app.runs.resolve_caller(token)
        with pytest.raises(NotAttributed):
            app.runs.heartbeat(token)


# ---- presence and collisions ----------------------------------------------------------------
def test_collisions_rank_files_then_branch_then_repository(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    runs = runs_for(app, clock)
    me = runs.open_run("api-fixer", repo=API, branch="main", run_id="me")
    runs.touch(me.token, ["billing/ledger.py", "README.md"])
    same_repo = runs.open_run("docs-bot", repo=API, branch="docs", run_id="r-repo")
    clock.now += 1
    same_branch = runs.open_run("codex", repo=API, branch="main", run_id="r-branch")
    overlap = runs.open_run("codex", repo=API, branch="other", run_id="r-files")
    runs.touch(overlap.token, ["billing/ledger.py", "x.py"])
    runs.open_run("codex", repo=BILLING, branch="main", run_id="r-elsewhere")
    clock.now += 1
    runs.heartbeat(same_repo.token)  # seen most recently, still weakest
    found = runs.collisions_for(runs.resolve_caller(me.token))
    assert [(c.run.run_id, c.strength, c.overlap) for c in found] == [
        ("r-files", "files", ("billing/ledger.py",)),
        ("r-branch", "branch", ()),
        ("r-repo", "repository", ()),
    ]
    assert same_branch.run_id == "r-branch"


def test_expired_runs_do_not_collide(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    runs = runs_for(app, clock)
    me = runs.open_run("api-fixer", repo=API, branch="main")
    runs.open_run("codex", repo=API, branch="main")
    clock.now += 601
    runs.heartbeat(me.token)
    assert runs.collisions_for(runs.resolve_caller(me.token)) == []


def test_presence_lists_live_runs_by_repository_and_branch(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock()
    runs = runs_for(app, clock)
    runs.open_run("b", repo=BILLING, branch="main", run_id="r1")
    runs.open_run("a", repo=API, branch="main", run_id="r2")
    runs.open_run("c", repo=API, branch="dev", run_id="r3")
    assert [(r.repo, r.branch, r.run_id) for r in runs.live_runs()] == [
        (API, "dev", "r3"),
        (API, "main", "r2"),
        (BILLING, "main", "r1"),
    ]
    assert [r.run_id for r in runs.live_runs(BILLING)] == ["r1"]
    assert metrics.sample("fleetmem_runs_live") == 3


# ---- stored runs -----------------------------------------------------------------------------
def ingest(app: App, run_id: str, ended: str, **kw: Any) -> None:
    app.memory.ingest_run(
        make_record(
            run_id=run_id,
            started_at="2026-11-28T08:00:00Z",
            ended_at=ended,
            **kw,
        )
    )


def test_recent_runs_are_the_newest_ends_on_repository_and_branch(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    ingest(app, "r1", "2026-11-28T09:00:00Z", sessions=[session(branch="main")])
    ingest(app, "r2", "2026-11-28T11:00:00Z", sessions=[session(branch="dev")])
    ingest(app, "r3", "2026-11-28T10:00:00Z", sessions=[session(branch="main")])
    ingest(app, "r4", "2026-11-28T12:00:00Z", sessions=[session(repo=BILLING)])
    ingest(
        app,
        "r5",
        "2026-11-28T13:00:00Z",
        pull_request="https://github.com/acme/api/pull/9",
        sessions=[session(branch="main")],
    )
    assert [r.run_id for r in app.runs.recent_runs(API)] == ["r5", "r2", "r3", "r1"]
    assert [r.run_id for r in app.runs.recent_runs(API, "main")] == ["r5", "r3", "r1"]
    assert [r.run_id for r in app.runs.recent_runs(API, "main", limit=2)] == ["r5", "r3"]
    newest = app.runs.recent_runs(API, "main")[0]
    assert newest.pull_request == "https://github.com/acme/api/pull/9"
    with pytest.raises(InvalidInput):
        app.runs.recent_runs(API, limit=0)


def test_runs_editing_paths_match_repository_relative_paths(
    make_app: Callable[..., App], git_repo: Callable[..., Path]
) -> None:
    app = make_app()
    root = git_repo("api", remote="https://github.com/acme/api.git")
    (root / "billing").mkdir()
    absolute = {
        "id": "s1",
        "cwd": str(root / "billing"),
        "events": [
            {"type": "edit", "path": str(root / "billing" / "ledger.py")},
            {"type": "edit", "path": "settlement.py"},
        ],
    }
    ingest(app, "abs", "2026-11-28T09:00:00Z", sessions=[absolute])
    ingest(
        app,
        "rel",
        "2026-11-28T10:00:00Z",
        sessions=[session(edits=("billing/ledger.py", "docs/x.md"))],
    )
    ingest(
        app,
        "other-repo",
        "2026-11-28T11:00:00Z",
        sessions=[session(repo=BILLING, edits=("billing/ledger.py",))],
    )
    ingest(
        app,
        "lookalike",
        "2026-11-28T12:00:00Z",
        sessions=[session(edits=("billingX/ledger.py", "x/billing/ledger.py"))],
    )
    assert [r.run_id for r in app.runs.runs_editing(API, ["billing/ledger.py"])] == ["rel", "abs"]
    assert [r.run_id for r in app.runs.runs_editing(API, ["billing/settlement.py"])] == ["abs"]
    assert [r.run_id for r in app.runs.runs_editing(API, ["billing/"])] == ["rel", "abs"]
    assert [r.run_id for r in app.runs.runs_editing(API, ["docs/x.md", "nope.py"])] == ["rel"]
    assert app.runs.runs_editing(API, ["ledger.py"]) == []
    assert [r.run_id for r in app.runs.runs_editing(BILLING, ["billing/ledger.py"])] == [
        "other-repo"
    ]
    with pytest.raises(InvalidInput):
        app.runs.runs_editing(API, ["/etc/passwd"])


def test_list_and_show_merge_live_and_stored_runs(make_app: Callable[..., App]) -> None:
    app = make_app()
    clock = Clock(2_000_000_000.0)
    runs = runs_for(app, clock)
    live = runs.open_run("codex", repo=API, branch="main", run_id="live-1")
    runs.touch(live.token, ["a.py"])
    runs.open_run("api-fixer", repo=API, run_id="run-2026-11-28-0042")
    app.memory.ingest_run(make_record())
    listed = runs.list_runs(repo=API)
    assert [(s.run_id, s.state, s.outcome) for s in listed] == [
        ("live-1", "live", None),
        ("run-2026-11-28-0042", "recorded", "failed"),
    ]
    assert listed[0].files == 1 and listed[1].duration_ms == 1_064_000
    assert [s.run_id for s in runs.list_runs(agent="codex")] == ["live-1"]
    detail = runs.show_run("run-2026-11-28-0042")
    assert detail.stored is not None and detail.live is not None
    assert detail.live.state == "closed"
    assert [s.session_id for s in detail.sessions] == ["s1", "s2"]
    assert [e.path for e in detail.events if e.type == "edit"][:2] == [
        "billing/ledger.py",
        "tests/test_ledger.py",
    ]
    with pytest.raises(NotFound):
        runs.show_run("nope")
    with pytest.raises(InvalidInput):
        runs.list_runs(limit=0)


@pytest.mark.sqlite_only(
    reason="reads SQLite's sqlite_master (PostgreSQL's tables: test_postgres.py)"
)
def test_the_migration_is_recorded(make_app: Callable[..., App]) -> None:
    app = make_app()
    assert app.store.db.schema_version() >= 5
    tables = {
        r[0]
        for r in app.store.db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
        )
    }
    assert {"live_runs", "live_run_files", "run_paths"} <= tables
