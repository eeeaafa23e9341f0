"""``fleetmem runs import codex PATH``: a recorded Codex rollout as a run record."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from fleetmem.service.bootstrap import App
from tests.integrations.conftest import FIXTURES, REPO_KEY, World
from tests.surfaces.cli_helpers import FLEETMEM, env_for

RUN_ID = "codex-0199a213-81c0-7800-8aa1-bbab2a035a53"


def _rollout(world: World, cwd: Path, name: str = "rollout-2026-11-28T09-00-00.jsonl") -> Path:
    target = world.tmp / "sessions" / "2026" / "11" / "28" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / "codex_rollout.jsonl").read_text(encoding="utf-8")
    target.write_text(text.replace("@CWD@", str(cwd)), encoding="utf-8")
    return target


def _import(world: World, path: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLEETMEM, "runs", "import", "codex", str(path), "--json"],
        capture_output=True, text=True, env=env_for(world.home), timeout=120, check=check,
    )  # fmt: skip


def test_a_rollout_becomes_a_run_with_edits_checks_model_and_result(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("")
    _rollout(world, world.repo)
    [row] = json.loads(_import(world, world.tmp / "sessions").stdout)
    assert row["run_id"] == RUN_ID and row["status"] in ("recorded", "pending")
    record = world.record(RUN_ID)
    assert record["adapter"] == "codex" and record["agent"] == "codex"
    assert record["model"] == {"served": "gpt-5-codex"}
    assert record["started_at"].startswith("2026-11-28T09:00:00")
    assert (record["outcome"], record["reason"]) == ("succeeded", "completed")  # ruff passed last
    [session] = record["sessions"]
    assert session["events"] == [
        {"type": "edit", "path": "app.py"},
        {"type": "edit", "path": "docs/ledger.md"},
        {"type": "verify", "passed": False, "error_class": "test_failure"},
        {"type": "verify", "passed": True, "error_class": "lint_failure"},
    ]
    assert "expects 2" in record["result_text"]
    app = open_app()
    [episode] = app.memory.list_episodes(repo=REPO_KEY)
    assert episode.episode["files_touched"] == ["app.py", "docs/ledger.md"]
    # Importing again is harmless.
    [again] = json.loads(_import(world, world.tmp / "sessions").stdout)
    assert again["status"] == "duplicate"


def test_a_session_from_another_machine_is_attributed_by_its_remote(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("")
    path = _rollout(world, Path("/home/someone-else/src/api"))
    _import(world, path)
    [session] = world.record(RUN_ID)["sessions"]
    assert session["repo"] == REPO_KEY and session["branch"] == "main"
    app = open_app()
    [episode] = app.memory.list_episodes(repo=REPO_KEY)
    assert episode.episode["files_touched"] == ["app.py", "docs/ledger.md"]


def test_a_file_that_is_not_a_rollout_is_reported_and_the_rest_imported(world: World) -> None:
    world.config("")
    _rollout(world, world.repo)
    bad = world.tmp / "sessions" / "2026" / "11" / "28" / "rollout-broken.jsonl"
    bad.write_text('{"timestamp": "x", "type": "event_msg", "payload": {}}\nnot json\n')
    proc = _import(world, world.tmp / "sessions", check=False)
    assert proc.returncode == 2
    rows = {Path(r["path"]).name: r for r in json.loads(proc.stdout)}
    assert rows["rollout-broken.jsonl"]["status"].startswith("error:")
    assert rows["rollout-2026-11-28T09-00-00.jsonl"]["run_id"] == RUN_ID
    shutil.rmtree(world.tmp / "sessions")
