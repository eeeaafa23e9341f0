"""Seed 000 scenarios that the other integration tests left open (REQ-8, REQ-16, REQ-20).

The agent processes, the repository and the store are real. The one fault injected in this
process is a briefing computation that raises: nothing real makes the composer fail on
demand, and the scenario is about what the supervisor does then.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fleetmem import metrics
from fleetmem.integrations.supervisor import RunResult, Supervisor
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import World
from tests.surfaces.cli_helpers import run_cli

AGENT = "nightly-triage"


def _environ(world: World) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    return {**env, "HOME": str(world.tmp)}


@pytest.fixture
def app_for(world: World) -> Iterator[Callable[[], App]]:
    apps: list[App] = []

    def make() -> App:
        app = world.app()
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()


def _supervise(world: World, app: App, prompt: str | None = "Triage.") -> RunResult:
    return Supervisor(app, environ=_environ(world)).run(
        AGENT, prompt=prompt, workdir=str(world.repo)
    )


def _briefings(outcome: str) -> float:
    return metrics.sample(
        "fleetmem_briefings_total",
        {"agent": AGENT, "delivery": "prompt", "outcome": outcome},
    )


def test_req8_a_run_outside_any_repository_counts_a_skipped_episode(
    world: World, app_for: Callable[[], App]
) -> None:
    world.config(world.agent(briefing=False))
    scratch = world.tmp / "scratch"
    scratch.mkdir()
    app = app_for()
    labels = {"provider": app.memory.provider.name, "outcome": "skipped"}
    before = metrics.sample("fleetmem_episodes_recorded_total", labels)
    result = Supervisor(app, environ=_environ(world)).run(
        AGENT, prompt="Triage.", workdir=str(scratch)
    )
    assert result.episode == "skipped:no_repository"
    assert app.memory.list_episodes() == []
    assert metrics.sample("fleetmem_episodes_recorded_total", labels) == before + 1


def test_req8_a_project_file_may_opt_its_repository_out(
    world: World, app_for: Callable[[], App]
) -> None:
    # memory_record only narrows, so a repository's own file may turn it off.
    world.config(world.agent(briefing=False))
    (world.repo / ".fleetmem.toml").write_text(f"[agent.{AGENT}]\nmemory_record = false\n")
    app = app_for()
    result = _supervise(world, app)
    assert result.episode == "skipped:opted_out"
    assert app.memory.list_episodes() == []
    assert world.record(result.run_id)["outcome"] == "failed"  # the run itself is recorded


def test_req16_a_briefing_that_cannot_be_computed_spawns_the_prompt_alone(
    world: World,
    app_for: Callable[[], App],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world.config(world.agent())
    app = app_for()
    app.facts.add("The settlement fixture writes rows in local time.")

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the composer broke")

    monkeypatch.setattr(app.briefings, "briefing", broken)
    skipped = _briefings("skipped")
    with caplog.at_level(logging.WARNING, logger="fleetmem"):
        result = _supervise(world, app, prompt="Triage the failing tests.")
    assert world.starts()[0]["argv"][-1] == "Triage the failing tests."
    assert _briefings("skipped") == skipped + 1
    warnings = [m for m in caplog.messages if m.startswith("briefing.skipped")]
    assert warnings == [
        f"briefing.skipped agent={AGENT} run={result.run_id} reason=briefing_failed"
    ]
    assert app.agent_memory.stored_briefing(result.run_id) is None
    # The run is unaffected, and it still has its prompt as the operator wrote it.
    assert (result.outcome, result.reason) == ("failed", "verify_failed")
    assert world.record(result.run_id)["prompt"] == "Triage the failing tests."


def test_req20_the_stored_prompt_is_the_configured_one_without_the_briefing(
    world: World, app_for: Callable[[], App]
) -> None:
    world.config(world.agent(extra='prompt = "triage"\n'))
    app = app_for()
    app.facts.add("The settlement fixture writes rows in local time.")
    app.close()
    proc = run_cli(world.home, "run", AGENT, "--workdir", str(world.repo), "--json", check=False)
    run_id = json.loads(proc.stdout)["run_id"]
    last = world.starts()[0]["argv"][-1]
    assert last.startswith("<untrusted-data ") and last.endswith("\n\ntriage")
    # The stored run record keeps the operator's prompt; nothing the operator reads back
    # about the run carries the briefing.
    assert world.record(run_id)["prompt"] == "triage"
    shown = json.dumps(json.loads(run_cli(world.home, "runs", "show", run_id, "--json").stdout))
    assert "untrusted-data" not in shown and "local time" not in shown
