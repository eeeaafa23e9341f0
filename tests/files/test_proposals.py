"""S17 / FR-36: a Notes change an agent may not make is kept, pending, until a person applies it.

Real SQLite (migration 12); the CLI runs as a real subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetmem.errors import Conflict, InvalidInput, NotFound, StaleRevision
from fleetmem.service.bootstrap import build
from fleetmem.service.files import Actor, ContextFileService
from tests.conftest import database_error, sql_rows, write_config
from tests.files.conftest import MARINA, ServiceFactory
from tests.surfaces.cli_helpers import run_cli, run_json

AGENT = "research-agent"
DEV = Actor("user", "dev")


def propose(files: ContextFileService, text: str = "Staging is rebuilt nightly.") -> int:
    result = files.update_notes(agent=AGENT, text=text, run_id="run-9")
    assert result.written is False and result.reason == "not_permitted"
    assert result.proposal_id is not None
    return result.proposal_id


def test_a_refused_update_is_stored_attributed_and_pending_and_writes_nothing(
    files: ContextFileService,
) -> None:
    ref = files.ref("notes", agent=AGENT)
    files.save(ref, "Known: the CI is slow.\n", base_revision=0, actor=MARINA)
    number = propose(files)
    assert files.get(ref).revision == 1  # the file is untouched
    [row] = files.list_proposals(agent=AGENT)
    assert (row.id, row.agent, row.run_id, row.status) == (number, AGENT, "run-9", "pending")
    assert (row.mode, row.base_revision) == ("append", 1)
    assert row.proposed_text == "Known: the CI is slow.\nStaging is rebuilt nightly.\n"
    assert "+Staging is rebuilt nightly." in row.diff
    assert files.list_proposals(agent="someone-else") == []


def test_applying_writes_a_new_revision_by_the_person_and_closes_the_proposal(
    files: ContextFileService,
) -> None:
    number = propose(files)
    view = files.apply_proposal(number, actor=DEV)
    assert view.revision == 1 and view.updated_by == "user:dev"
    assert view.body == "Staging is rebuilt nightly.\n"
    row = files.get_proposal(number)
    assert (row.status, row.decided_by, row.applied_revision) == ("applied", "user:dev", 1)
    assert files.list_proposals(agent=AGENT) == []  # nothing pending any more
    with pytest.raises(Conflict, match="already applied by user:dev"):
        files.apply_proposal(number, actor=DEV)
    assert files.get(files.ref("notes", agent=AGENT)).revision == 1
    assert [a.action for a in files.activity(limit=3)][:2] == ["applied", "save"]


def test_a_proposal_on_an_older_revision_is_refused_with_the_current_one(
    files: ContextFileService,
) -> None:
    number = propose(files)  # made on revision 0
    ref = files.ref("notes", agent=AGENT)
    files.save(ref, "Marina's own note.\n", base_revision=0, actor=MARINA)
    with pytest.raises(StaleRevision) as refused:
        files.apply_proposal(number, actor=DEV)
    assert (refused.value.base_revision, refused.value.current_revision) == (0, 1)
    assert refused.value.changed_by == "user:marina"
    assert files.get(ref).body == "Marina's own note.\n"  # nothing written
    assert files.get_proposal(number).status == "pending"  # still there to dismiss


def test_dismissing_leaves_the_file_alone(files: ContextFileService) -> None:
    number = propose(files)
    row = files.dismiss_proposal(number, actor=DEV)
    assert (row.status, row.decided_by, row.applied_revision) == ("dismissed", "user:dev", None)
    assert files.get(files.ref("notes", agent=AGENT)).revision == 0
    with pytest.raises(Conflict):
        files.apply_proposal(number, actor=DEV)


def test_with_the_permission_nothing_is_proposed(make_files: ServiceFactory) -> None:
    files = make_files(f"[agent.{AGENT}]\nedit_agent_files = true\n")
    result = files.update_notes(agent=AGENT, text="Written directly.")
    assert result.written is True and result.proposal_id is None
    assert files.list_proposals(status=None) == []


def test_bad_proposal_numbers_and_actors_are_refused_naming_the_field(
    files: ContextFileService,
) -> None:
    number = propose(files)
    for bad in (0, -3, "x", True, 1.5):
        with pytest.raises(InvalidInput) as refused:
            files.get_proposal(bad)
        assert refused.value.field == "proposal"
    with pytest.raises(NotFound):
        files.get_proposal(number + 100)
    with pytest.raises(InvalidInput) as refused:
        files.apply_proposal(number, actor=Actor("agent", AGENT))
    assert refused.value.field == "actor"
    with pytest.raises(InvalidInput) as refused:
        files.list_proposals(status="maybe")
    assert refused.value.field == "status"
    assert files.get_proposal(number).status == "pending"


def test_proposals_belong_to_their_workspace(make_files: ServiceFactory) -> None:
    default = make_files()
    other = make_files(workspace="acme")
    number = propose(default)
    assert other.list_proposals(status=None) == []
    with pytest.raises(NotFound):
        other.apply_proposal(number, actor=DEV)


def test_the_cli_lists_applies_and_refuses_a_stale_proposal(home: Path) -> None:
    write_config(home, '[model_api]\nembedding_model = ""\n')
    app = build(home, {"HOME": str(home.parent)})
    try:
        first = propose(app.files, "First idea.")
        second = propose(app.files, "Second idea.")
    finally:
        app.close()
    listed = run_json(home, "files", "proposals", "--agent", AGENT)
    assert [p["id"] for p in listed] == [second, first]  # newest first
    text = run_cli(home, "files", "proposals").stdout
    assert f"fleetmem files apply {first}" in text and "+First idea." in text
    applied = run_json(home, "files", "apply", str(first), "--user", "marina")
    assert applied["revision"] == 1 and applied["updated_by"] == "user:marina"
    stale = run_cli(home, "files", "apply", str(second), check=False)
    assert stale.returncode == 6
    assert "now at revision 1" in stale.stderr and "nothing was written" in stale.stderr
    bad = run_cli(home, "files", "apply", "zero", check=False)
    assert bad.returncode == 2 and "proposal" in bad.stderr
    dismissed = run_json(home, "files", "dismiss", str(second))
    assert dismissed["status"] == "dismissed"
    every = run_json(home, "files", "proposals", "--status", "all")
    assert {p["status"] for p in every} == {"applied", "dismissed"}
    assert json.dumps(every)


@pytest.mark.sqlite_only(reason="SQLite's migration 12 and PRAGMA table_info")
def test_migration_12_creates_the_proposals_table(files: ContextFileService) -> None:
    conn = files.store.db.conn  # type: ignore[attr-defined]
    names = dict(conn.execute("SELECT version, name FROM schema_migrations").fetchall())
    assert names[12] == "notes_proposals"
    columns = {r[1] for r in conn.execute("PRAGMA table_info(notes_proposals)").fetchall()}
    assert {"agent", "run_id", "base_revision", "proposed_text", "diff", "status"} <= columns


def test_the_proposals_table_enforces_its_status_vocabulary(files: ContextFileService) -> None:
    store = files.store
    with pytest.raises(database_error(store)):
        sql_rows(
            store,
            "INSERT INTO notes_proposals (workspace, agent, mode, base_revision, proposed_text,"
            " diff, created_at, status) VALUES ('default', 'a', 'append', 0, '', '', 0, 'maybe')",
        )
