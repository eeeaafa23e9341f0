"""``fleetmem hook codex EVENT`` as Codex runs it: a subprocess fed Codex-shaped hook payloads
on stdin (the fields Codex 0.171.0 sends, see docs/agents.md), over a real repository and
store. The real ``codex`` CLI is driven in test_real_codex.py."""

from __future__ import annotations

import json
import random
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

from fleetmem.core.hosts import CODEX_SESSION
from fleetmem.service.bootstrap import App
from fleetmem.service.files import Actor
from tests.integrations.conftest import FIXTURES, REPO_KEY, World
from tests.integrations.test_claude_hooks import _wait_for_detached
from tests.surfaces.cli_helpers import FLEETMEM, env_for


class CodexSession:
    """One Codex session's hook calls against a world."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.id = str(uuid.uuid4())
        self.rollout = world.tmp / f"rollout-{self.id}.jsonl"
        text = (FIXTURES / "codex_rollout.jsonl").read_text(encoding="utf-8")
        text = text.replace("@CWD@", str(world.repo))
        text = text.replace("0199a213-81c0-7800-8aa1-bbab2a035a53", self.id)
        self.rollout.write_text(text, encoding="utf-8")

    def payload(self, event: str, **fields: Any) -> bytes:
        base = {
            "session_id": self.id,
            "transcript_path": str(self.rollout),
            "cwd": str(self.world.repo),
            "hook_event_name": event,
            "model": "gpt-5",
            "permission_mode": "default",
        }
        return json.dumps({**base, **fields}).encode()

    def hook(self, event: str, **fields: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [FLEETMEM, "hook", "codex", event],
            input=self.payload(event, **fields),
            capture_output=True,
            env=env_for(self.world.home),
            cwd=self.world.repo,
            timeout=60,
            check=False,
        )

    @property
    def run_id(self) -> str:
        return "codex-" + self.id


def _context(stdout: bytes) -> str:
    answer = json.loads(stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context: str = answer["hookSpecificOutput"]["additionalContext"]
    return context


def test_a_codex_session_is_a_run_given_its_context_within_codexs_limit(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.codex]\nmemory_briefing = true\n")
    app = open_app()
    app.facts.add("The ledger tests need the fixture clock frozen.")
    # Two- and three-byte text: Codex counts bytes, so a UTF-16 fit would be too long here.
    rng = random.Random()
    lines = ["NOTEBOOK-FIRST"] + [
        " ".join(rng.choice(["ledger", "é-clé", "日本語", "façade"]) for _ in range(12))
        for _ in range(400)
    ]
    ref = app.files.ref("notebook", repo=REPO_KEY)
    app.files.save(ref, "\n".join(lines), base_revision=0, actor=Actor("user", "marina"))
    app.close()
    session = CodexSession(world)
    proc = session.hook("SessionStart", source="startup")
    assert proc.returncode == 0, proc.stderr
    context = _context(proc.stdout)
    assert len(context.encode("utf-8")) <= CODEX_SESSION.limit  # type: ignore[operator]
    assert "NOTEBOOK-FIRST" in context and "fleetmem://memory/context" in context
    app = open_app()
    run = app.runs.show_run(session.run_id)
    assert run.live is not None and run.live.state == "live"
    assert run.live.info.adapter == "codex" and run.live.info.agent == "codex"


def test_codex_prompts_capture_requests_to_remember_as_people_say_them(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.codex]\n")
    session = CodexSession(world)
    session.hook("SessionStart", source="startup")
    marker = uuid.uuid4().hex[:8]
    proc = session.hook(
        "UserPromptSubmit",
        turn_id=str(uuid.uuid4()),
        prompt=f"please remember that the {marker} queue drains before noon",
    )
    answer = json.loads(proc.stdout)
    assert answer["systemMessage"].startswith("fleetmem remembered")
    assert marker in answer["hookSpecificOutput"]["additionalContext"]
    app = open_app()
    [fact] = [f for f in app.facts.list().items if marker in f.body]
    assert fact.status == "active" and fact.origin == "human"


def test_session_end_records_the_run_from_the_rollout_in_a_detached_child(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.codex]\n")
    session = CodexSession(world)
    session.hook("SessionStart", source="startup")
    proc = session.hook("PostToolUse", tool_name="Bash", tool_input={"command": "pytest -q"},
                        tool_response="1 failed", tool_use_id="call_1")  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, b"")
    proc = session.hook("SessionEnd", reason="other")
    assert (proc.returncode, proc.stdout) == (0, b"")
    # The work goes on in a detached child (Codex stops waiting after 3 s).
    record = world.wait_for_record(session.run_id)
    assert record["adapter"] == "codex" and record["model"]["served"] == "gpt-5-codex"
    [main] = record["sessions"]
    assert main["id"] == session.id
    # The rollout's patches and its commands with their exit codes: the failed test run
    # was followed by a passing check, and the last check decides.
    assert {e["path"] for e in main["events"] if e["type"] == "edit"} == {
        "app.py",
        "docs/ledger.md",
    }
    assert {"type": "verify", "passed": False, "error_class": "test_failure"} in main["events"]
    assert (record["outcome"], record["reason"]) == ("succeeded", "completed")
    app = open_app()
    detail = app.runs.show_run(session.run_id)
    assert detail.live is not None and detail.live.state == "closed"
    # Importing the same rollout later leaves the run its hooks recorded as it was.
    imported = subprocess.run(
        [FLEETMEM, "runs", "import", "codex", str(session.rollout), "--json"],
        env=env_for(world.home), capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stdout + imported.stderr
    [row] = json.loads(imported.stdout)
    assert (row["run_id"], row["status"]) == (session.run_id, "skipped:already_recorded")
    assert world.record(session.run_id) == record
    _wait_for_detached(world.home)


def test_codex_hooks_keep_their_state_apart_from_claude_codes(world: World) -> None:
    world.config("[agent.codex]\n")
    session = CodexSession(world)
    session.hook("SessionStart", source="startup")
    assert list((world.home / "hooks" / "codex").glob("*.json"))
    assert not list(world.home.glob("hooks/claude-code/*.json"))


def test_a_bad_codex_payload_fails_open(world: World) -> None:
    world.config("[agent.codex]\n")
    for payload in (b"not json", b"[]", b'{"hook_event_name": "SessionStart"}'):
        proc = subprocess.run(
            [FLEETMEM, "hook", "codex", "SessionStart"], input=payload, capture_output=True,
            env=env_for(world.home), timeout=60, check=False,
        )  # fmt: skip
        assert (proc.returncode, proc.stdout) == (0, b"")
    log = (world.home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "hook.failed event=SessionStart" in log
