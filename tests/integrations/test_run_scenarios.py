"""Spawn scenarios of REQ-8, REQ-13, REQ-16 and REQ-20, supervised in this process (so the
metrics it counts can be read) with real agent processes and a real repository."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fleetmem import metrics
from fleetmem.core.fence import parse_block
from fleetmem.core.wrapper import parse
from fleetmem.errors import ConfigError, InvalidInput
from fleetmem.integrations.supervisor import RunResult, Supervisor
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import World, make_repo, toml_str

AGENT = "nightly-triage"


def _environ(world: World) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    return {**env, "HOME": str(world.tmp)}


@pytest.fixture
def supervise(world: World) -> Iterator[Callable[..., tuple[App, RunResult]]]:
    apps: list[App] = []

    def run(
        prompt: str | None = "Triage.",
        workdir: Path | None = None,
        agent: str = AGENT,
        cancel: threading.Event | None = None,
    ) -> tuple[App, RunResult]:
        app = world.app()
        apps.append(app)
        sup = Supervisor(app, environ=_environ(world))
        result = sup.run(agent, prompt=prompt, workdir=str(workdir or world.repo), cancel=cancel)
        return app, result

    yield run
    for app in apps:
        app.close()


def _facts(world: World, n: int, size: int = 40) -> None:
    app = world.app()
    try:
        for i in range(n):
            app.facts.add(f"Fact {i:02d}: " + "the ledger keeps local time. " * (size // 28 + 1))
    finally:
        app.close()


def _briefings(outcome: str) -> float:
    return metrics.sample(
        "fleetmem_briefings_total",
        {"agent": AGENT, "delivery": "prompt", "outcome": outcome},
    )


def test_an_oversized_prompt_runs_alone_with_a_warning_and_a_counted_skip(
    world: World, supervise: Callable[..., tuple[App, RunResult]], caplog: pytest.LogCaptureFixture
) -> None:
    world.config(world.agent(extra="briefing_max_chars = 4000\n"))
    _facts(world, 8, size=150)
    prompt = "x" * (127 * 1024)
    skipped = _briefings("skipped")
    with caplog.at_level(logging.WARNING, logger="fleetmem"):
        app, result = supervise(prompt=prompt)
    assert world.starts()[0]["argv"][-1] == prompt
    assert _briefings("skipped") == skipped + 1
    warning = [r.getMessage() for r in caplog.records if "briefing.skipped" in r.getMessage()]
    assert warning == [
        f"briefing.skipped agent={AGENT} run={result.run_id} reason=argument_too_large"
    ]
    assert app.facts.offered_to_run(result.run_id) == []  # nothing was shown, nothing exposed
    assert world.record(result.run_id)["prompt"] == prompt
    assert (result.outcome, result.reason) == ("failed", "verify_failed")


def test_a_prompt_just_under_the_limit_still_gets_its_briefing(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent())
    _facts(world, 1)
    _app, _result = supervise(prompt="y" * (100 * 1024))
    _block, rest = parse_block(world.starts()[0]["argv"][-1])
    assert rest == "\n\n" + "y" * (100 * 1024)
    assert _briefings("ok") >= 1


@pytest.mark.parametrize("kind", ["exits", "hangs", "closed_port"])
def test_a_dead_provider_delays_the_spawn_at_most_provider_timeout(
    world: World,
    supervise: Callable[..., tuple[App, RunResult]],
    kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream = {
        "exits": 'command = "/bin/false"',
        "hangs": f"command = {toml_str(sys.executable)}\n"
        'args = ["-c", "import time; time.sleep(30)"]',
        "closed_port": 'url = "http://127.0.0.1:9/mcp"',
    }[kind]
    world.config(
        world.agent()
        + f'[mcp.dead]\n{upstream}\nconnect_timeout = "1s"\ncall_timeout = "1s"\n'
        + '[memory]\nprovider = "dead"\n[memory.episodes]\nprovider_timeout = "800ms"\n'
    )
    _facts(world, 1)
    with caplog.at_level(logging.INFO, logger="fleetmem"):
        _app, result = supervise()
    logged = [r.getMessage() for r in caplog.records]
    if kind == "hangs":
        # Given up on at provider_timeout, before the spawn and again at the close (not at
        # the 10 s an in-process built-in provider gets to record its episode).
        assert "briefing.provider_slow agent=nightly-triage after=0.8s" in logged
        assert any(m.startswith("episode.record_pending ") and "after=0.8s" in m for m in logged)
    block, _ = parse_block(world.starts()[0]["argv"][-1])
    document, _ = parse(block.body)
    episodes = document.section("episodes")
    assert episodes is not None and ("degraded", "provider_unavailable") in episodes.attrs
    assert (result.outcome, result.reason) == ("failed", "verify_failed")  # the run is unaffected
    assert result.episode.endswith("(pending)")  # recorded later, from fleetmem's stored copy


def test_a_respawn_of_the_same_run_reuses_its_briefing(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(scenario="crash_once", extra="respawns = 1\n"))
    _facts(world, 1)
    app, result = supervise()
    first, second = world.starts()
    assert first["argv"][-1] == second["argv"][-1]
    assert first["run_id"] == second["run_id"] == result.run_id
    assert (result.outcome, result.reason) == ("succeeded", "completed")
    exposures = app.facts.offered_to_run(result.run_id)
    assert len(exposures) == 1  # shown once, before the first spawn
    record = world.record(result.run_id)
    assert len(record["sessions"]) == 2


def test_a_process_killed_by_a_signal_crashes_the_run(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(scenario="crash_once", briefing=False))
    app, result = supervise()
    assert (result.outcome, result.reason) == ("crashed", "killed")
    assert result.exit_code == 128 + 9
    assert app.store.get_run(result.run_id) is not None


def test_a_timeout_stops_the_agent_and_the_run_times_out(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(
        world.agent(scenario="hang", briefing=False, extra='timeout = "1s"\nkill_grace = "300ms"\n')
    )
    _app, result = supervise()
    assert (result.outcome, result.reason) == ("timed_out", "deadline")
    assert result.exit_code == 124


def test_an_operator_interrupt_cancels_the_run(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(scenario="hang", briefing=False, extra='kill_grace = "300ms"\n'))
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    _app, result = supervise(cancel=cancel)
    assert (result.outcome, result.reason) == ("cancelled", "operator_cancelled")
    assert result.exit_code == 130


def test_an_agent_that_cannot_be_started_crashes_and_records_no_episode(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(
        f'[agent.{AGENT}]\nadapter = "claude-code"\ncommand = "/nonexistent/claude"\n'
        "memory_briefing = true\n"
    )
    _app, result = supervise()
    assert (result.outcome, result.reason) == ("crashed", "spawn_failed")
    assert result.exit_code == 127
    assert result.episode == "skipped:not_spawned"


def test_stream_failures_map_onto_the_outcome_vocabulary(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(scenario="max_turns", briefing=False))
    _, result = supervise()
    assert (result.outcome, result.reason, result.exit_code) == ("failed", "budget_exceeded", 1)
    world.config(world.agent(scenario="error", briefing=False))
    _, result = supervise()
    assert (result.outcome, result.reason) == ("failed", "agent_error")
    world.config(world.agent(scenario="success", briefing=False))
    _, result = supervise()
    assert (result.outcome, result.reason, result.exit_code) == ("succeeded", "completed", 0)


def test_edits_made_outside_the_agents_tools_come_from_git(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(scenario="sed", briefing=False))
    app, result = supervise()
    [session] = world.record(result.run_id)["sessions"]
    edits = [e for e in session["events"] if e["type"] == "edit"]
    assert edits == [{"type": "edit", "path": str(world.repo / "notes.txt"), "source": "git"}]
    [episode] = app.memory.list_episodes()
    assert episode.episode["files_touched"] == ["notes.txt"]


def test_an_agent_opted_out_records_no_episode(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(briefing=False, extra="memory_record = false\n"))
    app, result = supervise()
    assert result.episode == "skipped:opted_out"
    assert app.memory.list_episodes() == []


def test_a_run_outside_any_repository_records_no_episode(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(briefing=True))
    scratch = world.tmp / "scratch"
    scratch.mkdir()
    (scratch / "app.py").write_text("VALUE = 1\n")
    _app, result = supervise(workdir=scratch)
    assert result.episode == "skipped:no_repository"
    assert world.starts()[0]["argv"][-1] == "Triage."  # no repository: empty briefing


def test_a_project_file_cannot_turn_the_briefing_on(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent(briefing=False))
    (world.repo / ".fleetmem.toml").write_text(f"[agent.{AGENT}]\nmemory_briefing = true\n")
    with pytest.raises(ConfigError, match="memory_briefing") as caught:
        supervise()
    assert "global-only" in str(caught.value)
    assert world.starts() == []  # nothing was started


def test_a_template_is_rendered_and_stored_as_the_prompt(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(
        world.agent(briefing=False)
        + 'prompt_template = "Fix {{repo}} on {{branch}} as {{agent}} ({{run_id}})."\n'
    )
    _app, result = supervise(prompt=None)
    expected = f"Fix github.com/acme/api on main as {AGENT} ({result.run_id})."
    assert world.starts()[0]["argv"][-1] == expected
    assert world.record(result.run_id)["prompt"] == expected


def test_a_one_shot_without_a_prompt_is_refused_before_anything_starts(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent())
    with pytest.raises(InvalidInput, match="prompt"):
        supervise(prompt=None)
    app = world.app()
    try:
        assert app.runs.list_runs() == []
    finally:
        app.close()


def test_codex_runs_are_read_from_exec_json(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent("codex", adapter="codex", briefing=True) + 'model = "gpt-5-codex"\n')
    _facts(world, 1)
    _app, result = supervise(agent="codex")
    [start] = world.starts()
    assert start["argv"][1:4] == ["exec", "--json", "--model"]
    _block, rest = parse_block(start["argv"][-1])
    assert rest == "\n\nTriage."
    record = world.record(result.run_id)
    assert record["model"] == {"configured": "gpt-5-codex"}
    [session] = record["sessions"]
    assert session["id"] != result.run_id  # the thread id
    assert {"type": "edit", "path": str(world.repo / "app.py")} in session["events"]
    assert {"type": "verify", "passed": False, "error_class": "test_failure"} in session["events"]
    assert (result.outcome, result.reason) == ("failed", "verify_failed")
    assert "still fail" in (result.result_text or "")


def test_a_failed_codex_turn_is_a_model_error(
    world: World, supervise: Callable[..., tuple[App, RunResult]]
) -> None:
    world.config(world.agent("codex", adapter="codex", scenario="turn_failed", briefing=False))
    _app, result = supervise(agent="codex")
    assert (result.outcome, result.reason, result.exit_code) == ("failed", "model_error", 1)


def test_the_command_adapter_reads_the_line_protocol_and_passes_the_rest_through(
    world: World, tmp_path: Path
) -> None:
    script = tmp_path / "harness.py"
    script.write_text(
        "import json, sys\n"
        "print('working on it')\n"
        "print(json.dumps({'fleetmem': 'session', 'id': 'h-1', 'model': 'local-7b'}))\n"
        "print(json.dumps({'fleetmem': 'edit', 'path': 'app.py'}))\n"
        "print(json.dumps({'fleetmem': 'command', 'command': 'make test', 'exit_code': 2}))\n"
        "print(json.dumps({'fleetmem': 'result', 'text': 'done: ' + sys.argv[-1]}))\n"
        "sys.exit(2)\n"
    )
    world.config(
        f'[agent.harness]\nadapter = "command"\ncommand = {toml_str(sys.executable)}\n'
        f"args = [{toml_str(script)}]\n"
    )
    app = world.app()
    try:
        shown: list[str] = []

        class Out:
            def write(self, text: str) -> int:
                shown.append(text)
                return len(text)

            def flush(self) -> None:
                return None

        sup = Supervisor(app, environ=_environ(world), out=Out())  # type: ignore[arg-type]
        result = sup.run("harness", prompt="go", workdir=str(world.repo))
    finally:
        app.close()
    assert "".join(shown) == "working on it\n"
    assert result.result_text == "done: go"
    assert (result.outcome, result.reason, result.exit_code) == ("failed", "verify_failed", 2)
    record = world.record(result.run_id)
    assert record["model"] == {"served": "local-7b"}
    [session] = record["sessions"]
    assert session["id"] == "h-1"


def test_heartbeats_report_edited_files_while_the_run_is_live(world: World, tmp_path: Path) -> None:
    # The run lasts until the test has looked (or 30 s): what is checked is that the edit is
    # seen while the run is live, however slowly a loaded machine delivers the heartbeat.
    done = tmp_path / "seen"
    script = tmp_path / "slow.py"
    script.write_text(
        "import json, os, time\n"
        "print(json.dumps({'fleetmem': 'edit', 'path': 'app.py'}), flush=True)\n"
        "deadline = time.monotonic() + 30\n"
        f"while not os.path.exists({str(done)!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
    )
    world.config(
        f'[agent.slow]\nadapter = "command"\ncommand = {toml_str(sys.executable)}\n'
        f"args = [{toml_str(script)}]\n"
    )
    app = world.app()
    seen: list[Any] = []

    def watch() -> None:
        deadline = time.monotonic() + 25
        try:
            while time.monotonic() < deadline:
                live = app.runs.live_runs("github.com/acme/api")
                if any(r.files for r in live):
                    seen.extend(live)
                    return
                time.sleep(0.05)
        finally:
            done.write_text("")

    try:
        sup = Supervisor(app, environ=_environ(world))
        watcher = threading.Thread(target=watch)
        watcher.start()
        sup.run("slow", prompt=None, workdir=str(world.repo))
        watcher.join()
    finally:
        app.close()
    assert [r.files for r in seen] == [("app.py",)]


def test_a_second_repository_clone_is_its_own_workdir(world: World, supervise: Any) -> None:
    other = make_repo(world.tmp / "src" / "other", remote="https://github.com/acme/other.git")
    world.config(world.agent(briefing=False))
    app, _result = supervise(workdir=other)
    [episode] = app.memory.list_episodes()
    assert episode.repo == "github.com/acme/other"


def test_a_command_without_a_prompt_gets_its_briefing_computed_for_the_tools(
    world: World, tmp_path: Path
) -> None:
    script = tmp_path / "resident.py"
    script.write_text("import sys\nprint(len(sys.argv))\n")
    world.config(
        f'[agent.resident]\nadapter = "command"\ncommand = {toml_str(sys.executable)}\n'
        f"args = [{toml_str(script)}]\nmemory_briefing = true\n"
    )
    _facts(world, 1)
    app = world.app()
    try:
        result = Supervisor(app, environ=_environ(world)).run(
            "resident", prompt=None, workdir=str(world.repo)
        )
        stored = app.agent_memory.stored_briefing(result.run_id)
        assert stored is not None and stored.origin == "spawn" and stored.fact_ids
        assert app.facts.offered_to_run(result.run_id) == []  # computed, not yet shown
        assert result.result_text == "1"  # sys.argv is the script alone: no prompt argument
    finally:
        app.close()
