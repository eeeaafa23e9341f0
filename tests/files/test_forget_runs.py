"""Forget means forget: a forgotten episode's run shows no text, summary or files on any
surface, and ``fleetmem forget --run RUN`` takes a run out of the run graph (real SQLite,
the real CLI)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fleetmem.errors import NotFound
from fleetmem.service.bootstrap import App
from fleetmem.store.sqlite.packed import unpack
from tests.conftest import home_store, make_record, session, sql_rows
from tests.surfaces.cli_helpers import run_cli

REPO = "github.com/acme/api"
AGENT = "api-fixer"
SECRET_WORDS = "settlement fixture writes rows in the local timezone"


def _record(app: App, run_id: str) -> str:
    record = make_record(
        run_id=run_id,
        sessions=[session(repo=REPO, edits=("billing/ledger.py",))],
    )
    result = app.memory.ingest_run(record)
    assert result.episode_id is not None
    return result.episode_id


def _stored(home: Path, run_id: str) -> dict[str, object] | None:
    with home_store(home) as store:
        found = sql_rows(store, "SELECT record_json FROM runs WHERE run_id = ?", (run_id,))
        paths = sql_rows(store, "SELECT count(*) FROM run_paths WHERE run_id = ?", (run_id,))
        events = sql_rows(store, "SELECT count(*) FROM events WHERE run_id = ?", (run_id,))
        counts = (paths[0][0], events[0][0])
    if not found:
        return None
    row = found[0]
    data: dict[str, object] = json.loads(unpack(row[0]) or "{}")
    data["_rows"] = counts
    return data


def test_a_forgotten_episode_takes_its_runs_text_and_files_off_every_surface(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app()
    kept, gone = _record(app, "run-kept"), _record(app, "run-gone")
    assert kept != gone
    before = app.files.assemble(AGENT, repo=REPO).text
    assert "run-gone" in before
    assert [r.run_id for r in app.runs.runs_editing(REPO, ["billing/ledger.py"])] == [
        "run-kept",
        "run-gone",
    ] or {r.run_id for r in app.runs.runs_editing(REPO, ["billing/ledger.py"])} == {
        "run-kept",
        "run-gone",
    }
    app.memory.forget(gone)
    stored = _stored(home, "run-gone")
    assert stored is not None and SECRET_WORDS not in json.dumps(stored)
    assert "result_text" not in stored and "sessions" not in stored and "prompt" not in stored
    assert stored["_rows"] == (0, 0) and stored["outcome"] == "failed"  # metadata stays
    # Recent runs in the context, in briefings, and "who edited this file" leave it out.
    assert "run-gone" not in app.files.assemble(AGENT, repo=REPO).text
    assert [r.run_id for r in app.runs.recent_runs(REPO)] == ["run-kept"]
    assert [r.run_id for r in app.runs.runs_editing(REPO, ["billing/ledger.py"])] == ["run-kept"]
    detail = app.runs.show_run("run-gone")
    assert detail.stored is not None and detail.stored.episode_status == "forgotten"
    assert detail.events == ()
    assert _stored(home, "run-kept") is not None and SECRET_WORDS in json.dumps(
        _stored(home, "run-kept")
    )


def test_forget_run_removes_the_run_from_the_graph_tombstone_first(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app()
    episode = _record(app, "run-out")
    _record(app, "run-stays")
    proc = run_cli(home, "forget", "--run", "run-out")  # the real CLI, beside this app
    assert "removed run run-out from the run graph" in proc.stdout
    with pytest.raises(NotFound):
        app.runs.show_run("run-out")
    assert "run-out" not in {s.run_id for s in app.runs.list_runs()}
    assert app.memory.get_episode(episode).forgotten_at is not None  # the tombstone first
    stored = _stored(home, "run-out")
    assert stored is None or stored == {"_rows": (0, 0)}  # at most a bare tombstone row
    assert {s.run_id for s in app.runs.list_runs()} == {"run-stays"}
    # Forgetting it again, or a run never stored, is an error naming the run.
    again = run_cli(home, "forget", "--run", "run-never", check=False)
    assert again.returncode != 0 and "run-never" in again.stderr
    both = run_cli(home, "forget", "ep", "--run", "run-stays", check=False)
    assert both.returncode != 0 and "episode_id" in both.stderr
