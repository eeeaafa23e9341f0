"""The agent-facing operations behind the MCP tools, and "ask an agent to update this"."""

from __future__ import annotations

import threading

import pytest

from fleetmem.core.budget import SKIPPED_END, SKIPPED_LABEL
from fleetmem.core.contextfiles import MAX_FILE_BYTES
from fleetmem.errors import InvalidInput, NotAttributed, NotFound, NotPermitted, StaleRevision
from fleetmem.service.files import CANNOT_EDIT, ContextFileService
from tests.core.test_budget import unmark
from tests.files.conftest import MARINA, ServiceFactory, corpus

PERMITTED = "[agent.research-agent]\nedit_agent_files = true\n"
SECRET = "xoxb-" + "1234567890-abcdefghij"


# ---- read_context_file (FR-30) ---------------------------------------------------------------
def test_an_agent_reads_an_on_demand_file_whole_and_the_run_records_it(
    files: ContextFileService,
) -> None:
    big = (corpus()["cjk.md"] * 200).encode("utf-8")[:MAX_FILE_BYTES].decode("utf-8", "ignore")
    files.save(files.ref("people"), big, base_revision=0, actor=MARINA)
    read = files.read_context_file(agent="research-agent", name="People", run_id="run-1")
    assert (read.name, read.mode, read.revision, read.text) == ("people", "on_demand", 1, big)
    assert read.tokens > 1500  # no load budget applies
    [load] = files.run_loads("run-1")
    assert (load.segment, load.ref, load.revision) == ("on_demand", "workspace/people", 1)
    assert files.activity()[0].action == "read"


def test_reading_needs_an_attributed_agent(files: ContextFileService) -> None:
    with pytest.raises(NotAttributed):
        files.read_context_file(agent=None, name="voice")
    with pytest.raises(NotFound, match="--agent"):
        files.read_context_file(agent="research-agent", name="notes")  # not a workspace file


# ---- note_project (seed 004) -----------------------------------------------------------------
def test_note_project_appends_attributed_and_revisioned(files: ContextFileService) -> None:
    repo = "github.com/acme/api"
    ref = files.ref("notebook", repo=repo)
    files.save(ref, "# api\nRun `make check` before pushing.\n", base_revision=0, actor=MARINA)
    view = files.note_project(
        agent="api-fixer", repo=repo, text="Settlement tests need TZ=UTC.", run_id="r9"
    )
    assert view.body == "# api\nRun `make check` before pushing.\nSettlement tests need TZ=UTC.\n"
    assert view.revision == 2 and view.updated_by == "agent:api-fixer"
    top = files.history(ref)[0]
    assert (top.author_kind, top.author, top.run_id, top.action) == (
        "agent", "api-fixer", "r9", "append",
    )  # fmt: skip
    assert "Settlement tests need TZ=UTC." in files.assemble("other", repo=repo).text


def test_note_project_is_secret_scanned_and_bounded(files: ContextFileService) -> None:
    repo = "github.com/acme/api"
    with pytest.raises(InvalidInput) as caught:
        files.note_project(agent="api-fixer", repo=repo, text=f"slack bot {SECRET}")
    assert SECRET not in str(caught.value) and "slack" in str(caught.value)
    with pytest.raises(InvalidInput, match="at most 2,000"):
        files.note_project(agent="api-fixer", repo=repo, text="x" * 2001)
    with pytest.raises(NotAttributed):
        files.note_project(agent="", repo=repo, text="anonymous")
    ref = files.ref("notebook", repo=repo)
    files.save(ref, "y" * (MAX_FILE_BYTES - 10), base_revision=0, actor=MARINA)
    with pytest.raises(InvalidInput, match="64 KB"):
        files.note_project(agent="api-fixer", repo=repo, text="one note too many")


def test_concurrent_notes_are_all_kept(make_files: ServiceFactory) -> None:
    services = [make_files() for _ in range(4)]
    repo = "github.com/acme/api"

    def note(service: ContextFileService, i: int) -> None:
        for j in range(5):
            service.note_project(agent=f"agent-{i}", repo=repo, text=f"note {i}-{j}")

    threads = [threading.Thread(target=note, args=(s, i)) for i, s in enumerate(services)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    body = services[0].get(services[0].ref("notebook", repo=repo)).body
    assert sorted(body.splitlines()) == sorted(f"note {i}-{j}" for i in range(4) for j in range(5))


# ---- update_notes (S8, S17, FR-34 to FR-37) --------------------------------------------------
def test_s17_without_the_permission_nothing_is_written_and_a_diff_comes_back(
    files: ContextFileService,
) -> None:
    result = files.update_notes(agent="research-agent", text="Staging is rebuilt nightly.")
    assert not result.written and result.reason == "not_permitted"
    assert (
        result.message == CANNOT_EDIT == "I can't edit my own files — here's the change I'd make."
    )
    assert "+Staging is rebuilt nightly." in result.diff
    assert result.proposed_text == "Staging is rebuilt nightly.\n"
    ref = files.ref("notes", agent="research-agent")
    assert files.get(ref).revision == 0  # nothing written
    assert files.activity()[0].action == "proposed"
    # The owner applies it: a human save based on the proposal's revision.
    applied = files.save(ref, result.proposed_text, base_revision=result.revision, actor=MARINA)
    assert applied.body == "Staging is rebuilt nightly.\n"


def test_s8_with_the_permission_the_agent_edit_is_attributed_and_revertible(
    make_files: ServiceFactory,
) -> None:
    files = make_files(PERMITTED)
    ref = files.ref("notes", agent="research-agent")
    files.save(ref, "Prefer small pull requests.\n", base_revision=0, actor=MARINA)
    result = files.update_notes(
        agent="research-agent", text="The ledger repo pins Python 3.11.", run_id="r-42"
    )
    assert result.written and result.revision == 2
    view = files.get(ref)
    assert view.body == "Prefer small pull requests.\nThe ledger repo pins Python 3.11.\n"
    assert view.updated_by == "agent:research-agent"
    entry = files.activity()[0]
    assert (entry.actor_kind, entry.actor, entry.action, entry.run_id) == (
        "agent", "research-agent", "append", "r-42",
    )  # fmt: skip
    # One click to revert: restore the revision before the agent's edit.
    reverted = files.restore(ref, 1, actor=MARINA)
    assert reverted.body == "Prefer small pull requests.\n" and reverted.revision == 3


def test_replace_needs_a_base_and_a_stale_one_is_refused(make_files: ServiceFactory) -> None:
    files = make_files(PERMITTED)
    with pytest.raises(InvalidInput, match="base_revision"):
        files.update_notes(agent="research-agent", text="all new", mode="replace")
    files.update_notes(agent="research-agent", text="first", mode="replace", base_revision=0)
    with pytest.raises(StaleRevision):
        files.update_notes(agent="research-agent", text="second", mode="replace", base_revision=0)
    done = files.update_notes(
        agent="research-agent", text="second\n", mode="replace", base_revision=1
    )
    assert done.written and done.proposed_text == "second\n"


def test_fr37_an_agent_never_writes_another_agents_files(make_files: ServiceFactory) -> None:
    files = make_files(PERMITTED + "[agent.other]\nedit_agent_files = true\n")
    with pytest.raises(NotPermitted):
        files.update_notes(agent="research-agent", text="hi", target_agent="other")
    with pytest.raises(NotPermitted):
        files.save(
            files.ref("notes", agent="other"), "x", base_revision=0,
            actor=files_actor("research-agent"),
        )  # fmt: skip
    with pytest.raises(NotPermitted):
        files.save(
            files.ref("identity", agent="research-agent"), "x", base_revision=0,
            actor=files_actor("research-agent"),
        )  # fmt: skip
    assert files.get(files.ref("notes", agent="other")).revision == 0


def files_actor(agent: str) -> object:
    from fleetmem.service.files import Actor

    return Actor("agent", agent)


def test_the_permission_is_global_only(tmp_path: object) -> None:
    from pathlib import Path

    from fleetmem.config import load_settings
    from fleetmem.errors import ConfigError

    root = Path(str(tmp_path))
    (root / "home").mkdir()
    (root / "repo").mkdir()
    (root / "repo" / ".fleetmem.toml").write_text(PERMITTED, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"edit_agent_files.*global-only"):
        load_settings(root / "home", root / "repo")


def test_notes_updates_are_secret_scanned(make_files: ServiceFactory) -> None:
    files = make_files(PERMITTED)
    with pytest.raises(InvalidInput) as caught:
        files.update_notes(agent="research-agent", text=f"token {SECRET}")
    assert SECRET not in str(caught.value)


# ---- ask an agent to update this (FR-51 to FR-56, S7) ----------------------------------------
def test_s7_agent_file_message_and_attachment_exactly_as_sent(files: ContextFileService) -> None:
    ref = files.ref("notes", agent="research-agent")
    body = "".join(f"Line {i}: always check the staging branch.\n" for i in range(1, 800))
    files.save(ref, body, base_revision=0, actor=MARINA)
    payload = files.ask(ref)
    assert payload.message == "@research-agent update your Notes file: "
    assert payload.addressed_agent == "research-agent"
    assert payload.attachment_title == "Notes — research-agent"
    assert payload.attachment_intro == "What rides along with your message, exactly as sent:"
    # The whole file rides along, the skipped region marked as in the preview, never cut.
    assert payload.attachment == files.preview(ref)
    lines = payload.attachment.split("\n")
    assert sum(SKIPPED_LABEL in line for line in lines) == 1
    assert sum(SKIPPED_END in line for line in lines) == 1
    report = files.get(ref).meter.report
    assert report is not None and report.truncated
    assert unmark(payload.attachment, body, report) == body


def test_workspace_file_addresses_no_agent_unless_one_is_picked(
    files: ContextFileService,
) -> None:
    ref = files.ref("glossary")
    files.save(ref, "invoice: a bill we send\n", base_revision=0, actor=MARINA)
    payload = files.ask(ref)
    assert payload.addressed_agent is None
    assert payload.message == "Update the Glossary context file: "
    assert payload.attachment == "invoice: a bill we send\n"
    picked = files.ask(ref, to_agent="editor")
    assert picked.message == "@editor update the Glossary context file: "
    notebook = files.ask(files.ref("notebook", repo="github.com/acme/api"))
    assert notebook.message == "Update the project notebook of github.com/acme/api: "
