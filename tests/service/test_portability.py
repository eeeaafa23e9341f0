"""Export, import and backup through the service layer, on real SQLite homes."""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import string
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleetmem.core.facts import Actor
from fleetmem.errors import InvalidInput
from fleetmem.service.bootstrap import App, build
from fleetmem.service.portability import FORMAT_VERSION
from fleetmem.store.archive import ARCHIVE_TABLES
from tests.conftest import make_record, session, write_config

NO_VECTORS = '[model_api]\nembedding_model = ""\n'
PERSON = Actor("human", "marina")


@pytest.fixture
def homes(tmp_path: Path) -> Any:
    apps: list[App] = []

    def factory(name: str) -> App:
        home = tmp_path / name
        home.mkdir()
        write_config(home, NO_VECTORS)
        app = build(home, {"HOME": str(tmp_path)})
        apps.append(app)
        return app

    yield factory
    for app in apps:
        app.close()


def _fill(app: App) -> dict[str, str]:
    """A home with a history: facts edited, pinned, forgotten and proposed; a context file
    with two revisions; three runs, one of whose episodes is forgotten."""
    kept = app.facts.add("Ledger tests run in UTC.", kind="decision", actor=PERSON)
    app.facts.edit(kept.fact.id, "Ledger tests always run in UTC.", actor=PERSON)
    app.facts.pin(kept.fact.id, actor=PERSON)
    gone = app.facts.add("The old staging host is db-7.", actor=PERSON)
    app.facts.forget(gone.fact.id, actor=PERSON)
    app.facts.add("Billing lives in project api.", scope="project:github.com/acme/api")
    app.facts.propose("Prefer pytest -x for quick loops.", agent="api-fixer", run_id="run-p1")
    ref = app.files.ref("voice")
    first = app.files.save(ref, "Short sentences.\n", base_revision=0, actor=PERSON)
    app.files.save(ref, "Short sentences. No emoji.\n", base_revision=first.revision, actor=PERSON)
    episodes = {}
    for n, text in enumerate(("fixed the flaky ledger test", "bumped the SDK", "secret work")):
        record = make_record(
            run_id=f"run-{n}",
            result_text=text,
            started_at=f"2026-11-0{n + 1}T10:00:00Z",
            ended_at=f"2026-11-0{n + 1}T10:05:00Z",
            sessions=[session(repo="github.com/acme/api")],
        )
        result = app.memory.ingest_run(record)
        assert result.episode_id is not None
        episodes[f"run-{n}"] = result.episode_id
    app.memory.forget(episodes["run-2"])
    return episodes


def _exported(homes: Callable[[str], App], tmp_path: Path) -> tuple[App, Path]:
    """A home with a history (``_fill``) and its archive."""
    source = homes("a")
    _fill(source)
    archive = tmp_path / "memory.jsonl"
    source.portability.export(archive)
    return source, archive


def _tables(app: App) -> dict[str, list[dict[str, Any]]]:
    return {t.name: list(app.store.archive_rows(t)) for t in ARCHIVE_TABLES}


def _digest(app: App) -> str:
    state = {"tables": _tables(app), "runs": [r.run_id for r in app.store.archive_runs()]}
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def test_an_archive_carries_every_table_and_the_remembered_runs(
    homes: Callable[[str], App], tmp_path: Path
) -> None:
    source = homes("a")
    _fill(source)
    archive = tmp_path / "memory.jsonl"
    seen: list[tuple[int, int]] = []
    summary = source.portability.export(archive, progress=lambda d, t: seen.append((d, t)))
    assert summary.counts["runs"] == 2  # the forgotten episode's run stays behind
    assert summary.counts["facts"] == 4 and summary.counts["context_file_revisions"] >= 2
    assert seen[-1][0] == seen[-1][1] == sum(summary.counts.values())
    lines = archive.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["version"] == FORMAT_VERSION
    assert json.loads(lines[-1]) == {"end": True, "counts": summary.counts}
    assert "secret work" not in archive.read_text(encoding="utf-8")

    target = homes("b")
    result = target.portability.import_archive(archive)
    assert result.inserted["runs"] == 2 and result.present["runs"] == 0
    assert _tables(target) == _tables(source)
    # The facts are searchable and the episodes recallable where they arrived.
    hits = target.memory.recall("flaky ledger", scopes=["project:github.com/acme/api"])
    assert [h.text for h in hits.items if "flaky ledger" in (h.text or "")]


def test_import_is_idempotent_into_an_empty_and_a_populated_store(
    homes: Callable[[str], App], tmp_path: Path
) -> None:
    source, archive = _exported(homes, tmp_path)
    before = _digest(source)
    again = source.portability.import_archive(archive)
    assert sum(again.inserted.values()) == 0
    assert _digest(source) == before

    target = homes("b")
    target.facts.add("Deploys happen on Tuesdays.", actor=PERSON)
    target.portability.import_archive(archive)
    once = _digest(target)
    second = target.portability.import_archive(archive)
    assert sum(second.inserted.values()) == 0
    assert _digest(target) == once
    bodies = {f.body for f in target.facts.list().items}
    assert {"Deploys happen on Tuesdays.", "Ledger tests always run in UTC."} <= bodies


def _rewrite(archive: Path, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    items = [json.loads(line) for line in archive.read_text(encoding="utf-8").splitlines()]
    edit(items)
    out = archive.with_name("edited.jsonl")
    out.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return out


def _first_row(items: list[dict[str, Any]], table: str) -> dict[str, Any]:
    return next(i["row"] for i in items if i.get("table") == table)


BAD_ARCHIVES: dict[str, tuple[Callable[[list[dict[str, Any]]], None], str]] = {
    "newer version": (lambda items: items[0].update(version=FORMAT_VERSION + 1), "newer"),
    "not an archive": (lambda items: items[0].update(format="something-else"), "format"),
    "truncated": (lambda items: items.pop(), "truncated"),
    "count mismatch": (lambda items: items.pop(3), "damaged"),
    "unknown table": (lambda items: items[1].update(table="api_tokens"), "table"),
    "unknown column": (lambda items: items[1]["row"].update(extra=1), "extra"),
    "null required": (lambda items: _first_row(items, "facts").update(body=None), "body"),
    "bool cell": (lambda items: _first_row(items, "facts").update(revision=True), "revision"),
    "bad run": (lambda items: items[-2]["run"].update(outcome="exploded"), "outcome"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARCHIVES))
def test_a_bad_archive_is_refused_naming_the_place_and_nothing_changes(
    homes: Callable[[str], App], tmp_path: Path, case: str
) -> None:
    _source, archive = _exported(homes, tmp_path)
    edit, needle = BAD_ARCHIVES[case]
    bad = _rewrite(archive, edit)
    target = homes("b")
    target.facts.add("Deploys happen on Tuesdays.", actor=PERSON)
    before = _digest(target)
    with pytest.raises(InvalidInput) as caught:
        target.portability.import_archive(bad)
    assert needle in str(caught.value)
    assert _digest(target) == before


def test_nan_and_broken_lines_are_refused(homes: Callable[[str], App], tmp_path: Path) -> None:
    _source, archive = _exported(homes, tmp_path)
    text = archive.read_text(encoding="utf-8").splitlines()
    row = json.loads(text[1])
    column = next(k for k, v in row["row"].items() if isinstance(v, float))
    text[1] = text[1].replace(json.dumps(row["row"][column]), "NaN", 1)
    bad = tmp_path / "nan.jsonl"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    target = homes("b")
    with pytest.raises(InvalidInput, match="line 2"):
        target.portability.import_archive(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(text[0] + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="line 2"):
        target.portability.import_archive(broken)
    with pytest.raises(InvalidInput, match="empty"):
        (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
        target.portability.import_archive(tmp_path / "empty.jsonl")
    assert not any(_tables(target).values())


def _fresh_github_token() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def test_a_secret_smuggled_into_an_archive_is_redacted_on_the_way_in(
    homes: Callable[[str], App], tmp_path: Path
) -> None:
    source = homes("a")
    source.facts.add("Deploys happen on Tuesdays.", actor=PERSON)
    archive = tmp_path / "memory.jsonl"
    source.portability.export(archive)
    token = _fresh_github_token()

    def smuggle(items: list[dict[str, Any]]) -> None:
        fact = _first_row(items, "facts")
        fact["body"] = f"Deploy with {token} please."

    bad = _rewrite(archive, smuggle)
    target = homes("b")
    target.portability.import_archive(bad)
    stored = target.facts.list().items[0]
    assert token not in stored.body and "[REDACTED]" in stored.body
    for path in target.home.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


def test_export_refuses_to_overwrite_and_leaves_no_partial_file(
    homes: Callable[[str], App], tmp_path: Path
) -> None:
    app = homes("a")
    archive = tmp_path / "memory.jsonl"
    archive.write_text("mine\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="exists"):
        app.portability.export(archive)
    assert archive.read_text(encoding="utf-8") == "mine\n"
    assert not list(tmp_path.glob("*.partial"))


def test_backup_is_a_consistent_copy_taken_while_writers_go_on(
    homes: Callable[[str], App], tmp_path: Path
) -> None:
    app = homes("a")
    stop = threading.Event()
    written: list[str] = []

    def writer() -> None:
        n = 0
        while not stop.is_set() and n < 400:
            app.facts.add(f"Fact number {n} about service {secrets.token_hex(4)}.", actor=PERSON)
            written.append(str(n))
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(written) < 20:
            stop.wait(0.01)
        target = tmp_path / "copy.sqlite"
        app.portability.backup(target)
    finally:
        stop.set()
        thread.join()
    with sqlite3.connect(target) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        facts = copy.execute("SELECT count(*) FROM facts").fetchone()[0]
        journal = copy.execute("SELECT count(*) FROM fact_journal").fetchone()[0]
    assert 20 <= facts <= len(written)
    assert journal == facts  # every fact with its journal entry: one transaction each
    assert not list(tmp_path.glob("*.partial"))
    with pytest.raises(InvalidInput, match="exists"):
        app.portability.backup(target)


def test_a_fact_already_known_here_by_its_wording_is_not_imported_twice(
    homes: Callable[[str], App], tmp_path: Path
) -> None:
    _source, archive = _exported(homes, tmp_path)
    target = homes("b")
    mine = target.facts.add("Ledger tests always run in UTC.", kind="decision", actor=PERSON)
    result = target.portability.import_archive(archive)
    assert result.present["facts"] == 1 and result.present["fact_revisions"] == 2
    same = [f for f in target.facts.list().items if f.body == "Ledger tests always run in UTC."]
    assert [f.id for f in same] == [mine.fact.id]
    ids = {f.id for f in target.facts.list(status="all", limit=500).items}
    for table in ("fact_revisions", "fact_journal", "fact_provenance"):
        spec = next(t for t in ARCHIVE_TABLES if t.name == table)
        assert {r["fact_id"] for r in target.store.archive_rows(spec)} <= ids
