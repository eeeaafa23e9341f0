"""Workspaces (seed 003 NFR-3, S18; issue 21 part 7): create, list, rename and delete; names
checked with errors naming the field; a deleted workspace leaves no row behind; data of one
workspace never shows in another; the migration keeps existing data in its workspace.
Runs on both stores."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fleetmem.core.facts import DEFAULT_WORKSPACE
from fleetmem.core.workspaces import MAX_NAME_CHARS
from fleetmem.errors import (
    CapReached,
    DuplicateWorkspace,
    InvalidInput,
    NotFound,
    UnknownFact,
    UnknownWorkspace,
)
from fleetmem.service import api_tokens
from fleetmem.service.bootstrap import App
from fleetmem.store.base import Store
from tests.conftest import sql_rows
from tests.workspace_fill import ALICE, CONFIG, MARINA, every_table, fill


@pytest.fixture
def app(make_app: Callable[..., App]) -> App:
    return make_app(CONFIG)


def _schema_tables_with_workspace(store: Store) -> set[str]:
    """Every table of the store's schema that has a ``workspace`` column, read from the
    schema itself (so a new table cannot be missed by the deletion)."""
    from fleetmem.store.postgres.store import PostgresStore

    if isinstance(store, PostgresStore):
        rows = sql_rows(
            store,
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND column_name = 'workspace'",
        )
        return {str(r[0]) for r in rows}
    names = [
        str(r[0]) for r in sql_rows(store, "SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    return {
        name
        for name in names
        if any(r[1] == "workspace" for r in sql_rows(store, f'PRAGMA table_info("{name}")'))
    }


def _raw_counts(store: Store, workspace: str) -> dict[str, int]:
    """Rows per table that belong to ``workspace``, counted with plain SQL (not the store's
    own counting method): by the workspace column, and through its facts' ids."""
    counts = {
        table: int(
            sql_rows(store, f"SELECT count(*) FROM {table} WHERE workspace = ?", (workspace,))[0][0]
        )
        for table in sorted(_schema_tables_with_workspace(store))
    }
    for table in ("fact_revisions", "fact_provenance", "fact_vectors"):
        counts[table] = int(
            sql_rows(
                store,
                f"SELECT count(*) FROM {table} WHERE fact_id IN"
                " (SELECT id FROM facts WHERE workspace = ?)",
                (workspace,),
            )[0][0]
        )
    return counts


# ---- create, list, rename --------------------------------------------------------------------
def test_the_default_workspace_is_there_from_the_start(app: App) -> None:
    listed = app.workspaces.list()
    assert [(w.id, w.name, w.is_default) for w in listed] == [("default", "default", True)]
    assert app.workspace == DEFAULT_WORKSPACE


def test_create_list_rename(app: App) -> None:
    acme = app.workspaces.create("  Acme   Corp ")
    assert acme.name == "Acme Corp"
    assert acme.id.startswith("acme-corp-") and len(acme.id) == len("acme-corp-") + 6
    other = app.workspaces.create("日本チーム")
    assert other.id.startswith("ws-")
    assert [w.id for w in app.workspaces.list()] == ["default", acme.id, other.id]
    renamed = app.workspaces.rename(acme.id, "Globex")
    assert (renamed.id, renamed.name) == (acme.id, "Globex")  # the id never changes
    assert app.workspaces.resolve("globex").id == acme.id  # by name, as names compare
    assert app.workspaces.resolve(acme.id).name == "Globex"  # by id
    assert app.workspaces.get(acme.id).name == "Globex"
    app.workspaces.rename(acme.id, "GLOBEX")  # its own name, in other letters: fine


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "must not be empty"),
        ("\u00a0 \u3000", "must not be empty"),
        ("Acme\tCorp", "invisible or control character (U+0009)"),
        ("x" * (MAX_NAME_CHARS + 1), f"is {MAX_NAME_CHARS + 1} characters long; at most 64"),
        ("Acme\u202eproC", "invisible or control character (U+202E) at position 5"),
        ("Ac\u200bme", "invisible or control character (U+200B)"),
        ("Acme\nCorp", "invisible or control character (U+000A)"),
        ("\u2028", "invisible or control character (U+2028)"),
        ("---", "must contain a letter or a digit"),
        (None, "must be a string"),
        (42, "must be a string"),
    ],
)
def test_bad_names_are_refused_naming_the_field(app: App, name: object, reason: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        app.workspaces.create(name)
    assert caught.value.field == "name"
    assert reason in str(caught.value)
    assert [w.id for w in app.workspaces.list()] == ["default"]


@pytest.mark.parametrize(
    "twin",
    [
        "acme corp",  # case
        "Acme-Corp",  # separators
        "ACME_CORP",
        "Acmé Corp",  # accents
        "Аcme Corp",  # a Cyrillic А
        "Ａｃｍｅ Ｃｏｒｐ",  # full-width
    ],
)
def test_names_that_read_the_same_are_duplicates(app: App, twin: str) -> None:
    acme = app.workspaces.create("Acme Corp")
    with pytest.raises(DuplicateWorkspace) as caught:
        app.workspaces.create(twin)
    assert caught.value.field == "name" and caught.value.existing == acme.id
    assert "already named 'Acme Corp'" in str(caught.value)
    other = app.workspaces.create("Other")
    with pytest.raises(DuplicateWorkspace):
        app.workspaces.rename(other.id, twin)
    assert app.workspaces.get(other.id).name == "Other"


def test_a_name_may_not_read_as_another_workspaces_id(app: App) -> None:
    app.workspaces.rename("default", "Main")
    with pytest.raises(DuplicateWorkspace, match="reads as the id of workspace 'Main'"):
        app.workspaces.create("Default")


def test_unknown_workspaces_are_not_found(app: App) -> None:
    for bad in ("nope", "x" * 300, "default\x00", 7):
        with pytest.raises(UnknownWorkspace):
            app.workspaces.get(bad)
    with pytest.raises(UnknownWorkspace):
        app.workspaces.rename("nope", "Fine")
    with pytest.raises(UnknownWorkspace):
        app.workspaces.resolve("No Such Name")
    with pytest.raises(InvalidInput, match="name a workspace"):
        app.workspaces.resolve("  ")


def test_at_most_200_workspaces(app: App) -> None:
    for i in range(199):
        app.workspaces.create(f"team {i}")
    with pytest.raises(CapReached, match="at most 200 workspaces"):
        app.workspaces.create("one too many")


# ---- isolation --------------------------------------------------------------------------------
def test_a_workspace_sees_only_its_own_facts_files_proposals_and_activity(app: App) -> None:
    acme = app.in_workspace(app.workspaces.create("Acme").id)
    mine = fill(acme, "acme")
    theirs = fill(app, "home")
    # Facts: another workspace's fact does not exist (404), in every read and write.
    for fact_id in (theirs["fact"], theirs["other_fact"]):
        with pytest.raises(UnknownFact):
            acme.facts.get(fact_id)
        with pytest.raises(UnknownFact):
            acme.facts.forget(fact_id, actor=ALICE)
        with pytest.raises(UnknownFact):
            acme.facts.history(fact_id)
    with pytest.raises(UnknownFact):
        app.facts.get(mine["fact"])
    assert {r.id for r in acme.facts.list().items} == {mine["fact"], mine["other_fact"]}
    assert all("acme" in hit.fact.body for hit in acme.facts.search("deploys tuesdays").hits)
    assert acme.facts.counts()["live"] == 2 == app.facts.counts()["live"]
    # Files: the same name holds each workspace's own text.
    assert acme.files.get(acme.files.ref("voice")).body == "Short sentences for acme."
    assert app.files.get(app.files.ref("voice")).body == "Short sentences for home."
    notes = acme.files.get(acme.files.ref("notes", agent="writer")).body
    assert "acme pins" in notes and "home" not in notes
    # Proposals: another workspace's proposal number is unknown.
    with pytest.raises(NotFound):
        acme.files.get_proposal(int(theirs["proposal"]))
    assert [p.id for p in acme.files.list_proposals()] == [int(mine["proposal"])]
    # The activity feed and Tidy up list only the workspace's own.
    entries = acme.activity.page(limit=200).entries
    assert entries and all(e.fact_id in (None, mine["fact"], mine["other_fact"]) for e in entries)
    assert all(e.run_id in (None, "run-acme", "r-2") for e in entries)
    assert acme.facts.tidy_up().pairs == ()  # its one pair was kept apart
    # Run context loads and exposures.
    assert acme.files.run_loads("run-home") == []
    assert acme.facts.offered_to_run("run-home") == []
    offered = {r.fact_id for r in acme.facts.offered_to_run("run-acme")}
    assert mine["fact"] in offered <= {mine["fact"], mine["other_fact"]}
    # What a run of the agent would get in the workspace: its own files and facts.
    text = acme.files.assemble("writer", repo="github.com/acme/api").text
    assert "acme" in text and "for home" not in text


def test_the_default_view_is_the_app_itself_and_views_are_kept(app: App) -> None:
    acme = app.workspaces.create("Acme").id
    assert app.in_workspace(DEFAULT_WORKSPACE) is app
    view = app.in_workspace(acme)
    assert app.in_workspace(acme) is view and view.in_workspace(acme) is view
    assert view.in_workspace(DEFAULT_WORKSPACE) is app
    assert (view.facts.workspace, view.files.workspace, view.activity.workspace) == (acme,) * 3
    view.close()  # closes nothing: the root owns the parts
    assert app.facts.counts()["live"] == 0


# ---- delete -----------------------------------------------------------------------------------
def test_the_deletion_list_covers_every_table_with_a_workspace_column(app: App) -> None:
    assert _schema_tables_with_workspace(app.store) <= set(every_table())


def test_delete_leaves_no_row_behind_and_touches_no_other_workspace(app: App) -> None:
    store = app.store
    acme = app.workspaces.create("Acme")
    kept = app.workspaces.create("Kept")
    filled = fill(app.in_workspace(acme.id), "acme")
    fill(app.in_workspace(kept.id), "kept")
    fill(app, "home")
    token = api_tokens.mint_token(app.home, api_tokens.Tier.READ, "acme-ci", 0.0, acme.id)
    api_tokens.mint_token(app.home, api_tokens.Tier.READ, "kept-ci", 0.0, kept.id)
    before = {w: _raw_counts(store, w) for w in ("default", acme.id, kept.id)}
    assert all(before[acme.id][t] > 0 for t in before[acme.id]), before[acme.id]
    preview = app.workspaces.delete_preview(acme.id)
    assert preview.rows == store.workspace_row_counts(acme.id)
    assert preview.rows == {t: before[acme.id][t] for t in preview.rows}
    assert preview.tokens == ("acme-ci",) and preview.confirm == "Acme"
    for wrong in ("acme", "ACME", "DELETE", "", None, acme.id):
        with pytest.raises(InvalidInput) as caught:
            app.workspaces.delete(acme.id, wrong)
        assert caught.value.field == "confirm"
    assert _raw_counts(store, acme.id) == before[acme.id]
    done = app.workspaces.delete(acme.id, "Acme")
    assert done.rows == {t: before[acme.id][t] for t in done.rows}
    assert done.tokens == ("acme-ci",)
    after = {w: _raw_counts(store, w) for w in ("default", acme.id, kept.id)}
    assert set(after[acme.id].values()) == {0}
    assert after["default"] == before["default"] and after[kept.id] == before[kept.id]
    assert [w.id for w in app.workspaces.list()] == ["default", kept.id]
    assert sql_rows(store, "SELECT count(*) FROM workspaces WHERE id = ?", (acme.id,)) == [(0,)]
    # The cached vector of its fact's body is gone; its minted token is revoked.
    assert store.cached_embedding(filled["content_hash"], "test-model") is None
    assert [t.name for t in api_tokens.list_minted(app.home)] == ["kept-ci"]
    assert api_tokens.token_hash(token) not in {t.sha256 for t in api_tokens.list_minted(app.home)}
    with pytest.raises(UnknownWorkspace):
        app.workspaces.get(acme.id)
    with pytest.raises(UnknownWorkspace):
        app.workspaces.delete(acme.id, "Acme")


def test_the_journal_stays_append_only_in_a_workspace_that_exists(app: App) -> None:
    from tests.conftest import database_error

    fact = app.facts.add("Rule one.", actor=ALICE).fact
    with pytest.raises(database_error(app.store), match="append-only"):
        sql_rows(app.store, "DELETE FROM fact_journal WHERE fact_id = ?", (fact.id,))


def test_the_default_workspace_cannot_be_deleted(app: App) -> None:
    fill(app, "home")
    before = _raw_counts(app.store, DEFAULT_WORKSPACE)
    for confirm in ("default", "Main"):
        with pytest.raises(InvalidInput) as caught:
            app.workspaces.delete(DEFAULT_WORKSPACE, confirm)
        assert caught.value.field == "workspace"
        assert "default workspace cannot be deleted" in str(caught.value)
        app.workspaces.rename(DEFAULT_WORKSPACE, "Main")
    with pytest.raises(InvalidInput, match="cannot be deleted"):
        app.workspaces.delete_preview(DEFAULT_WORKSPACE)
    assert _raw_counts(app.store, DEFAULT_WORKSPACE) == before


def test_a_deleted_workspace_can_be_made_again_empty_and_new(app: App) -> None:
    first = app.workspaces.create("Acme")
    fill(app.in_workspace(first.id), "acme")
    app.workspaces.delete(first.id, "Acme")
    again = app.workspaces.create("Acme")
    assert again.id != first.id
    view = app.in_workspace(again.id)
    assert view.facts.counts()["live"] == 0
    assert view.files.get(view.files.ref("voice")).body == ""
    assert view.activity.page().entries == ()


def test_a_deleted_workspace_view_is_dropped(app: App) -> None:
    acme = app.workspaces.create("Acme").id
    view = app.in_workspace(acme)
    view.facts.add("Something.", actor=ALICE)
    app.workspaces.delete(acme, "Acme")
    assert app.in_workspace(acme) is not view


# ---- the migration ------------------------------------------------------------------------------
@pytest.fixture
def legacy_app(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch, store_kind: str
) -> Iterator[Callable[[], App]]:
    """An app whose store was made before workspaces had rows, with data in ``default``
    and in ``legacy`` (a workspace only the Python API could name), then reopened."""
    from fleetmem.store.postgres import db as pg_db
    from fleetmem.store.sqlite import db as sqlite_db

    module = pg_db if store_kind == "postgres" else sqlite_db
    with monkeypatch.context() as patch:
        # Every migration before the one that gave workspaces their rows.
        names = [name for _, name, _ in module.MIGRATIONS]
        patch.setattr(module, "MIGRATIONS", module.MIGRATIONS[: names.index("workspaces")])
        old = make_app(CONFIG)
        old.facts.add("A default fact from before.", actor=ALICE)
        legacy = old.facts.in_workspace("legacy")
        legacy.add("A legacy fact from before.", actor=ALICE)
        old.files.in_workspace("legacy").save(
            old.files.ref("voice"), "Legacy voice.", base_revision=0, actor=MARINA
        )
        old.close()
    yield lambda: make_app(CONFIG)


def test_the_migration_keeps_existing_data_in_its_workspace(
    legacy_app: Callable[[], App],
) -> None:
    app = legacy_app()
    assert [(w.id, w.name) for w in app.workspaces.list()] == [
        ("default", "default"),
        ("legacy", "legacy"),
    ]
    assert [r.body for r in app.facts.list().items] == ["A default fact from before."]
    legacy = app.in_workspace("legacy")
    assert [r.body for r in legacy.facts.list().items] == ["A legacy fact from before."]
    assert legacy.files.get(legacy.files.ref("voice")).body == "Legacy voice."
    app.workspaces.delete("legacy", "legacy")
    assert set(_raw_counts(app.store, "legacy").values()) == {0}
    assert app.facts.counts()["live"] == 1


def test_an_import_brings_its_workspaces_back_into_the_list(app: App, tmp_path: Path) -> None:
    acme = app.workspaces.create("Acme").id
    app.in_workspace(acme).facts.add("Acme deploys on Fridays.", actor=ALICE)
    archive = tmp_path / "archive.jsonl"
    app.portability.export(archive)
    app.workspaces.delete(acme, "Acme")
    app.portability.import_archive(archive)
    # The archive carries the rows with their workspace id, not the name: the id names it.
    assert [(w.id, w.name) for w in app.workspaces.list()] == [
        ("default", "default"),
        (acme, acme),
    ]
    assert [r.body for r in app.in_workspace(acme).facts.list().items] == [
        "Acme deploys on Fridays."
    ]
    assert app.store.workspace_adopt(0.0) == []  # nothing left to adopt
