"""The provided segments wired in the composition root: facts, scope, activity, recent runs.

A real app (real SQLite) is set up in-process; ``fleetmem context`` and ``fleetmem report`` run
as real subprocesses over the same home.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from fleetmem.core.facts import Actor
from fleetmem.service.bootstrap import App
from fleetmem.service.context_providers import recent_run_line
from fleetmem.service.files import Actor as FileActor
from tests.conftest import fail_inserts, home_store, make_record, session, sql_rows
from tests.surfaces.cli_helpers import run_cli, run_json

REPO = "github.com/acme/api"
AGENT = "api-fixer"
VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
HUMAN = Actor("human", "marina")


def exposures(home: Path) -> list[tuple[str, str, str]]:
    with home_store(home) as store:
        rows = sql_rows(
            store, "SELECT run_id, fact_id, surface FROM fact_exposures ORDER BY fact_id"
        )
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def seed(app: App) -> dict[str, str]:
    """A pinned workspace fact, a project fact, another project's fact and three stored runs."""
    pinned = app.facts.add("Run make test before every push", actor=HUMAN, pin=True)
    local = app.facts.add(
        "The staging database is read-only on Fridays", actor=HUMAN, scope=f"project:{REPO}"
    )
    other = app.facts.add(
        "Deploys of the web app need a feature flag",
        actor=HUMAN,
        scope="project:github.com/acme/web",
    )
    for i in range(3):
        app.memory.ingest_run(
            make_record(
                run_id=f"past-{i}",
                started_at=f"2026-11-2{i}T08:00:00Z",
                ended_at=f"2026-11-2{i}T09:00:00Z",
                sessions=[session(branch="main", edits=("billing/ledger.py",))],
            ),
            process_now=False,
        )
    return {"pinned": pinned.fact.id, "local": local.fact.id, "other": other.fact.id}


def test_context_shows_facts_scope_and_recent_runs_and_a_preview_writes_no_exposure(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(VECTORS_OFF)
    ids = seed(app)
    text = run_cli(home, "context", AGENT, "--repo", REPO).stdout
    assert text.index("## Memory facts") < text.index("## Recent runs")
    assert f"fact {ids['pinned']}" in text and f"fact {ids['local']}" in text
    assert ids["other"] not in text  # another repository's fact is not in this run's scopes
    assert text.index(ids["pinned"]) < text.index(ids["local"])  # pinned facts first
    # Newest first: the run that ended last is the first line of the feed.
    assert text.index("(run past-2)") < text.index("(run past-1)") < text.index("(run past-0)")
    assert exposures(home) == []  # `fleetmem context` is a preview

    report = run_json(home, "report", AGENT, "--repo", REPO)
    by_key = {s["key"]: s for s in report["segments"]}
    for key in ("facts", "recent_runs"):
        assert by_key[key]["used"] > 0, key
        assert by_key[key]["status"] == "ok"
    assert report["total"] == run_json(home, "context", AGENT, "--repo", REPO)["total"]
    assert sum(s["used"] for s in report["segments"]) + report["overhead"] == report["total"]
    assert exposures(home) == []  # nor is the report


def test_a_real_run_records_exposure_for_exactly_the_facts_it_was_shown(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(VECTORS_OFF)
    ids = seed(app)
    context = app.files.assemble(AGENT, repo=REPO, run_id="run-1")
    shown = {(ids["pinned"]), ids["local"]}
    assert {fact for _, fact, _ in exposures(home)} == shown
    assert {(run, surface) for run, _, surface in exposures(home)} == {("run-1", "prompt")}
    assert all(f"fact {i}" in context.text for i in shown)
    loads = {row.segment for row in app.files.run_loads("run-1")}
    assert {"facts", "recent_runs"} <= loads


def test_facts_whose_exposure_cannot_be_written_are_not_shown(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(VECTORS_OFF)
    ids = seed(app)

    fail_inserts(app.store, "fact_exposures")
    context = app.files.assemble(AGENT, repo=REPO, run_id="run-2")
    assert ids["pinned"] not in context.text and ids["local"] not in context.text
    assert context.assembly.segment("facts").used == 0
    assert "## Recent runs" in context.text  # the rest of the context is unharmed
    assert exposures(home) == []


def test_only_the_facts_that_fit_the_budget_are_exposed(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(VECTORS_OFF)
    # Eight long project facts (rare CJK characters cost a token or more each) cannot all
    # fit the 1,200-token facts budget.
    for n in range(8):
        body = "".join(chr(0x4E00 + (n * 977 + i * 131) % 20000) for i in range(480))
        app.facts.add(f"Rule {n}: {body}", actor=HUMAN, scope=f"project:{REPO}")
    context = app.files.assemble(AGENT, repo=REPO, run_id="run-3")
    segment = context.assembly.segment("facts")
    assert segment.parts[0].report.truncated
    exposed = {fact for _, fact, _ in exposures(home)}
    assert exposed and len(exposed) < 8
    assert all(f"fact {fact}" in context.text for fact in exposed)
    assert context.text.count("(note, project:") == len(exposed)


def test_recall_off_means_no_facts_segment_at_all(make_app: Callable[..., App], home: Path) -> None:
    app = make_app(VECTORS_OFF + f"[agent.{AGENT}]\nmemory_recall = false\n")
    seed(app)
    context = app.files.assemble(AGENT, repo=REPO, run_id="run-4")
    assert context.assembly.segment("facts").status == "off"
    assert "## Memory facts" not in context.text
    assert exposures(home) == []


def test_scope_names_the_other_runs_live_on_the_repository_not_the_run_itself(
    make_app: Callable[..., App],
) -> None:
    app = make_app(VECTORS_OFF)
    mine = app.runs.open_run(AGENT, repo=REPO, branch="main", run_id="mine")
    assert (
        not app.files.assemble(AGENT, repo=REPO, run_id="mine").assembly.segment("scope").present
    )  # alone on the repository: nothing to say
    other = app.runs.open_run("codex-bot", repo=REPO, branch="dev", run_id="theirs")
    app.runs.touch(other.token, ["billing/ledger.py"])
    context = app.files.assemble(AGENT, repo=REPO, run_id=mine.run_id)
    assert "## Scope" in context.text
    assert "codex-bot live since" in context.text and "on branch dev" in context.text
    assert "editing billing/ledger.py (run theirs)" in context.text
    assert "(run mine)" not in context.text


def test_recent_activity_is_the_changes_to_the_files_this_agent_receives(
    make_app: Callable[..., App],
) -> None:
    app = make_app(VECTORS_OFF)
    files = app.files
    marina = FileActor("user", "marina")
    files.save(files.ref("voice"), "Short sentences.", base_revision=0, actor=marina)
    files.save(files.ref("notes", agent=AGENT), "Mine.", base_revision=0, actor=marina)
    files.save(files.ref("notes", agent="someone-else"), "Theirs.", base_revision=0, actor=marina)
    files.note_project(agent="codex-bot", repo=REPO, text="The ledger tests are slow.")
    files.read_context_file(agent=AGENT, name="voice")  # reads are not activity
    context = files.assemble(AGENT, repo=REPO)
    segment = context.assembly.segment("recent_activity")
    lines = segment.parts[0].report.delivered.splitlines()
    assert len(lines) == 3
    assert "agent:codex-bot appended to project/" in lines[0]  # newest first
    assert f"marina saved agent/{AGENT}/notes (revision 1)" in lines[1]
    assert "marina saved workspace/voice (revision 1)" in lines[2]
    assert "someone-else" not in segment.parts[0].report.delivered


def test_with_the_briefing_on_the_context_does_not_repeat_its_facts_and_runs(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(VECTORS_OFF + f"[agent.{AGENT}]\nmemory_briefing = true\n")
    seed(app)
    context = app.files.assemble(AGENT, repo=REPO, run_id="run-5")
    for key in ("facts", "scope", "recent_runs"):
        assert context.assembly.segment(key).status == "off", key
    assert context.text == ""  # nothing written yet: nothing to add to the prompt
    assert exposures(home) == []


def test_outside_a_repository_only_facts_of_wider_scopes_are_provided(
    make_app: Callable[..., App],
) -> None:
    app = make_app(VECTORS_OFF)
    ids = seed(app)
    context = app.files.assemble(AGENT)
    assert ids["pinned"] in context.text and ids["local"] not in context.text
    for key in ("scope", "recent_runs"):
        assert not context.assembly.segment(key).present, key


def test_a_recent_run_line_names_outcome_duration_branch_and_pull_request(
    make_app: Callable[..., App],
) -> None:
    app = make_app(VECTORS_OFF)
    app.memory.ingest_run(
        make_record(
            run_id="pr-run",
            started_at="2026-11-20T08:00:00Z",
            ended_at="2026-11-20T08:30:00Z",
            pull_request="https://github.com/acme/api/pull/7",
            sessions=[session(branch="fix-ledger")],
        ),
        process_now=False,
    )
    (row,) = app.runs.recent_runs(REPO)
    line = recent_run_line(row)
    assert line.startswith("- 2026-11-20T08:30:00Z ")
    assert "on branch fix-ledger" in line and "after 30m" in line
    assert line.endswith(", pull request https://github.com/acme/api/pull/7 (run pr-run)")


def test_nfr2_facts_that_do_not_come_in_time_are_left_out_and_the_run_goes_on(
    make_app: Callable[..., App], home: Path
) -> None:
    app = make_app(VECTORS_OFF + '[memory.facts]\nrecall_timeout = "100ms"\n')
    seed(app)
    release = threading.Event()
    real = app.facts.select_for_run

    def stuck(**kw: object) -> object:
        release.wait(30)  # a recall that hangs until the test lets it go
        return real(**kw)  # type: ignore[arg-type]

    app.facts.select_for_run = stuck  # type: ignore[method-assign,assignment]
    try:
        context = app.files.assemble(AGENT, repo=REPO, run_id="run-6")
    finally:
        release.set()
    assert context.assembly.segment("facts").status == "error"
    assert "## Memory facts" not in context.text and "## Recent runs" in context.text
    assert exposures(home) == []
