"""``fleetmem hook claude-code EVENT`` as Claude Code runs it: a subprocess fed recorded hook
payloads on stdin, over a real repository and store."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleetmem.core.capture import captured_facts
from fleetmem.core.fence import parse_block
from fleetmem.core.wrapper import parse
from fleetmem.errors import NotFound
from fleetmem.service.bootstrap import App
from tests.integrations.conftest import FIXTURES, REPO_KEY, World
from tests.surfaces.cli_helpers import FLEETMEM, env_for

HOOKS = FIXTURES / "hooks"


class Session:
    """One Claude Code session's hook calls against a world."""

    def __init__(self, world: World, **env: str) -> None:
        self.world = world
        self.id = str(uuid.uuid4())
        self.transcript = world.tmp / "transcript.jsonl"
        text = (HOOKS / "transcript.jsonl").read_text(encoding="utf-8")
        self.transcript.write_text(self._fill(text), encoding="utf-8")
        self.env = env

    def _fill(self, text: str) -> str:
        return (
            text.replace("@SESSION@", self.id)
            .replace("@CWD@", str(self.world.repo))
            .replace("@TRANSCRIPT@", str(self.transcript))
        )

    def payload(self, name: str) -> bytes:
        return self._fill((HOOKS / f"{name}.json").read_text(encoding="utf-8")).encode()

    def hook(
        self, event: str, payload: bytes, *args: str
    ) -> tuple[subprocess.CompletedProcess[bytes], float]:
        began = time.monotonic()
        proc = subprocess.run(
            [FLEETMEM, "hook", "claude-code", event, *args],
            input=payload,
            capture_output=True,
            env=env_for(self.world.home, **self.env),
            cwd=self.world.repo,
            timeout=60,
            check=False,
        )
        return proc, time.monotonic() - began

    def run_id(self) -> str:
        return "claude-" + self.id


def _context(stdout: bytes) -> str:
    answer = json.loads(stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context: str = answer["hookSpecificOutput"]["additionalContext"]
    return context


def _briefed(world: World, open_app: Callable[[], App], extra: str = "") -> None:
    world.config("[agent.claude-code]\nmemory_briefing = true\n" + extra)
    app = open_app()
    if not app.facts.list().items:
        app.facts.add("Run the tests with -p no:cacheprovider.")
    app.close()


def test_session_start_opens_a_run_and_briefs_only_with_memory_briefing(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    proc, _ = session.hook("SessionStart", session.payload("session_start"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    app = open_app()
    live = app.runs.show_run(session.run_id()).live
    assert live is not None and live.state == "live" and live.info.repo == REPO_KEY
    assert live.info.source == "hook" and live.info.adapter == "claude-code"
    assert app.facts.offered_to_run(session.run_id()) == []


def test_hooks_inside_a_fleetmem_run_leave_the_session_to_the_supervisor(
    world: World, open_app: Callable[[], App]
) -> None:
    # `claude -p` started by `fleetmem run` fires the user's installed hooks too.
    world.config("[agent.claude-code]\nmemory_briefing = true\n")
    session = Session(world, FLEETMEM_RUN_ID="run-supervised")
    for event, name in (
        ("SessionStart", "session_start"),
        ("UserPromptSubmit", "user_prompt_submit"),
        ("SessionEnd", "session_end"),
    ):
        proc, _ = session.hook(event, session.payload(name))
        assert (proc.returncode, proc.stdout) == (0, b""), event
    app = open_app()
    with pytest.raises(NotFound):
        app.runs.show_run(session.run_id())
    assert app.facts.list().items == ()
    # The same session outside a supervised run is recorded as usual.
    Session(world).hook("SessionStart", session.payload("session_start"))
    assert app.runs.show_run(session.run_id()).live is not None


def test_session_start_returns_the_fenced_briefing_and_writes_exposure(
    world: World, open_app: Callable[[], App]
) -> None:
    _briefed(world, open_app)
    env_file = world.tmp / "claude-env.sh"
    session = Session(world, CLAUDE_ENV_FILE=str(env_file))
    proc, _ = session.hook("SessionStart", session.payload("session_start"))
    assert proc.returncode == 0, proc.stderr
    block, rest = parse_block(_context(proc.stdout))
    assert rest == ""
    assert block.nonce not in block.body
    document, _ = parse(block.body)
    facts = document.section("facts")
    assert facts is not None and "no:cacheprovider" in facts.items[0].text
    app = open_app()
    assert [e.surface for e in app.facts.offered_to_run(session.run_id())] == ["prompt"]
    # The session's own commands are attributed to its run.
    exported = env_file.read_text()
    assert f"export FLEETMEM_RUN_ID={session.run_id()}" in exported
    token = exported.split("FLEETMEM_RUN_TOKEN=")[1].split("\n")[0]
    assert app.runs.resolve_caller(token).run_id == session.run_id()
    # A resumed session keeps its run and gets the same briefing (a fresh fence).
    again, _ = session.hook("SessionStart", session.payload("session_start"))
    block2, _ = parse_block(_context(again.stdout))
    assert block2.body == block.body and block2.nonce != block.nonce


def test_user_prompt_remember_lines_become_active_human_facts(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    proc, _ = session.hook("UserPromptSubmit", session.payload("user_prompt_submit"))
    assert proc.returncode == 0
    answer = json.loads(proc.stdout)
    lines = answer["systemMessage"].splitlines()
    assert len(lines) == 2
    app = open_app()
    facts = {f.body: f for f in app.facts.list().items}
    first = facts["we never quote a delivery date shorter than ten working days"]
    second = facts["The staging database is reset every Monday."]
    for fact in (first, second):
        assert fact.status == "active" and fact.origin == "human"
        assert fact.conversation == f"claude-code:{session.id}"
        assert fact.run_id == session.run_id()
    assert lines[0] == f'fleetmem remembered "{first.body}" ({first.id})'
    assert "Not a remember" not in json.dumps(answer)
    # Saying it again names the fact already kept, and stores nothing new.
    again, _ = session.hook("UserPromptSubmit", session.payload("user_prompt_submit"))
    assert "already remembered as" in json.loads(again.stdout)["systemMessage"]
    assert len(app.facts.list().items) == 2


def _events_file(world: World, session: Session) -> Path:
    [path] = (world.home / "hooks" / "claude-code").glob("*.events.jsonl")
    return path


def _prompt(session: Session, text: str) -> bytes:
    payload = json.loads(session.payload("user_prompt_submit"))
    payload["prompt"] = text
    return json.dumps(payload).encode()


def test_requests_said_as_people_say_them_are_captured(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    text = (
        "Fix the flaky ledger test. Remember that we never deploy billing on Fridays.\n"
        "Do you remember how the cache works? Don't forget to add a test."
    )
    proc, _ = session.hook("UserPromptSubmit", _prompt(session, text))
    [line] = json.loads(proc.stdout)["systemMessage"].splitlines()
    [fact] = open_app().facts.list().items
    assert fact.body == "we never deploy billing on Fridays."
    assert (fact.status, fact.origin) == ("active", "human")
    assert line == f'fleetmem remembered "{fact.body}" ({fact.id})'
    # An ordinary prompt remembers nothing (and tells the person nothing).
    quiet, _ = session.hook("UserPromptSubmit", _prompt(session, "I remember this bug, fix it."))
    assert quiet.returncode == 0 and "systemMessage" not in json.loads(quiet.stdout or b"{}")
    assert len(open_app().facts.list().items) == 1


def test_a_request_only_the_learned_reading_hears_is_captured_by_the_hook(
    world: World, open_app: Callable[[], App], rng: random.Random
) -> None:
    """Phrasings the rules have no words for (fleetmem.core.capture_learned) are stored
    through the real hook process, confirmed in the same one line."""
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    asks = (
        "Hold this thought for the long haul: {}",
        "Treat this as known from here on out: {}",
    )
    for count, ask in enumerate(asks, 1):
        team = rng.choice(["mobile", "payments", "growth", "platform"])
        fact = f"The {team} team owns the {''.join(rng.choices('bcdfgklmnprstvz', k=7))} service."
        text = ask.format(fact)
        assert captured_facts(text, learned=False) == []  # the rules alone hear nothing
        proc, _ = session.hook("UserPromptSubmit", _prompt(session, text))
        [line] = json.loads(proc.stdout)["systemMessage"].splitlines()
        stored = open_app().facts.list().items
        assert len(stored) == count
        [kept] = [f for f in stored if f.body == fact]
        assert (kept.status, kept.origin) == ("active", "human")
        assert line == f'fleetmem remembered "{fact}" ({kept.id})'


def test_each_prompt_is_given_the_facts_relevant_to_it_once(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.claude-code]\n")
    app = open_app()
    ledger = app.facts.add("The ledger tests are flaky on CI; rerun with a fixed seed.").fact
    parking = app.facts.add("Parking is first come, first served.").fact
    app.close()
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    proc, _ = session.hook("UserPromptSubmit", _prompt(session, "ledger tests flaky"))
    answer = json.loads(proc.stdout)
    assert "systemMessage" not in answer  # nothing was remembered: nothing to tell the person
    block, _ = parse_block(answer["hookSpecificOutput"]["additionalContext"])
    assert ledger.id in block.body and parking.id not in block.body
    shown = open_app().facts.offered_to_run(session.run_id())
    assert [(e.fact_id, e.surface) for e in shown] == [(ledger.id, "prompt")]
    # The same prompt again: the session was shown that fact already.
    again, _ = session.hook("UserPromptSubmit", _prompt(session, "ledger tests flaky"))
    assert again.stdout == b""
    other, _ = session.hook("UserPromptSubmit", _prompt(session, "rename the tokenizer"))
    context = json.loads(other.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "No remembered fact matched this prompt." in context


def test_a_capture_that_cannot_be_stored_is_reported_in_one_line(world: World) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    (world.home / "fleetmem.toml").write_text("[agent.claude-code\nbroken", encoding="utf-8")
    proc, _ = session.hook("UserPromptSubmit", _prompt(session, "remember: we ship on Tuesdays"))
    assert proc.returncode == 0
    [line] = json.loads(proc.stdout)["systemMessage"].splitlines()
    assert line.startswith('fleetmem could not store "we ship on Tuesdays"; nothing was remembered')


def _tests_pass_in_the_transcript(session: Session) -> None:
    """The transcript's pytest result says nothing of failing (as a host may record it)."""
    text = session.transcript.read_text(encoding="utf-8")
    text = text.replace('"content": "Error: Exit code 1\\n', '"content": "').replace(
        '"is_error": true', '"is_error": false'
    )
    session.transcript.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("failure_seen", [True, False])
def test_a_failure_seen_by_the_failure_hook_makes_the_session_failed(
    world: World, failure_seen: bool
) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    _tests_pass_in_the_transcript(session)
    if failure_seen:
        payload = json.loads(session.payload("post_tool_use_bash"))
        payload.update(
            hook_event_name="PostToolUseFailure",
            tool_input={"command": "python -m pytest -q tests/test_app.py"},
            error="Exit code 1\n1 failed in 0.02s",
        )
        payload.pop("tool_response")
        proc, _ = session.hook("PostToolUseFailure", json.dumps(payload).encode())
        assert (proc.returncode, proc.stdout) == (0, b"")
    session.hook("SessionEnd", session.payload("session_end"))
    record = world.record(session.run_id())
    expected = ("failed", "verify_failed") if failure_seen else ("succeeded", "completed")
    assert (record["outcome"], record["reason"]) == expected


def _live_files(app: App, timeout: float = 30.0) -> tuple[str, ...]:
    """The session's run's files once its presence has any (a first edit's heartbeat is
    sent by a detached process, after the hook answered)."""
    deadline = time.monotonic() + timeout
    while True:
        [live] = app.runs.live_runs(REPO_KEY)
        if live.files or time.monotonic() > deadline:
            return live.files
        time.sleep(0.05)


def test_post_tool_use_reports_edits_as_presence(world: World, open_app: Callable[[], App]) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    app = open_app()
    proc, _ = session.hook("PostToolUse", session.payload("post_tool_use_edit"))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert _live_files(app) == ("app.py",)
    session.hook("PostToolUse", session.payload("post_tool_use_bash"))
    session.hook("PostToolUse", session.payload("post_tool_use_edit"))  # the same file again
    [live] = app.runs.live_runs(REPO_KEY)
    assert live.files == ("app.py",)
    # No hook opened the store: the command and the second edit were noted, and the first
    # edit's heartbeat went to a detached process of its own, which logged it.
    log = (world.home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert log.count("hook.done event=PostToolUse") == 3
    assert log.count("event=PostToolUse ms=") == log.count("fast=1") == 3
    assert log.count("heartbeat=deferred") == 1
    assert log.count("hook.heartbeat run=" + session.run_id()) == 1
    events = [json.loads(line) for line in _events_file(world, session).read_text().splitlines()]
    assert [e["type"] for e in events] == ["edit", "command", "edit"]


def test_a_deferred_heartbeat_that_cannot_be_sent_is_logged_and_never_raises(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fleetmem.integrations import hook_heartbeat, hookmain
    from fleetmem.integrations.hookstate import StateFiles

    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    edit = json.loads(session.payload("post_tool_use_edit"))
    log_file = world.home / "logs" / "hooks.log"
    # A request that is not JSON: logged by the detached process, which exits 0 silently.
    proc = subprocess.run(
        [sys.executable, "-m", "fleetmem.integrations.hook_heartbeat"],
        input=b"{not json", capture_output=True, env=env_for(world.home), timeout=60,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "hook.heartbeat_failed error=JSONDecodeError" in log_file.read_text()
    # The session ended meanwhile: nothing to tell, nothing built.
    StateFiles(world.home, "claude-code").remove(session.id)
    request = {"integration": "claude-code", "agent": None, "session_id": session.id,
               "path": edit["tool_input"]["file_path"]}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "fleetmem.integrations.hook_heartbeat"],
        input=json.dumps(request).encode(), capture_output=True, env=env_for(world.home),
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0
    assert "hook.heartbeat_skipped reason=no_session" in log_file.read_text()
    # No process to be had: the hook heartbeats in its own process, as before.
    session2 = Session(world)
    session2.hook("SessionStart", session2.payload("session_start"))

    def no_process(*args: object) -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(hook_heartbeat, "spawn", no_process)
    payload = json.loads(session2.payload("post_tool_use_edit"))
    assert (
        hookmain._noted_without_the_store(
            world.home, "claude-code", "PostToolUse", payload, defer=True
        )
        is False
    )


def test_session_end_closes_the_run_from_the_transcript(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    session.hook("SessionStart", session.payload("session_start"))
    (world.repo / "app.py").write_text("VALUE = 3\n")  # what the Edit in the transcript did
    (world.repo / "generated.txt").write_text("made by a formatter\n")  # seen only by git
    proc, _ = session.hook("SessionEnd", session.payload("session_end"))
    assert (proc.returncode, proc.stdout) == (0, b"")
    record = world.record(session.run_id())
    assert record["model"]["served"] == "claude-opus-4-1-20250805"
    assert record["result_text"].startswith("I changed VALUE to 3")
    assert record["cost"] == {"usd": 0.05, "source": "reported"}
    main, sub = record["sessions"]
    assert main["id"] == session.id and sub["parent_id"] == session.id and sub["subagent"]
    assert {"type": "edit", "path": str(world.repo / "app.py")} in main["events"]
    assert {"type": "verify", "passed": False, "error_class": "test_failure"} in main["events"]
    assert {"type": "edit", "path": str(world.repo / "generated.txt"), "source": "git"} in main[
        "events"
    ]
    assert sub["events"] == [{"type": "edit", "path": str(world.repo / "docs/notes.md")}]
    assert (record["outcome"], record["reason"]) == ("failed", "verify_failed")
    app = open_app()
    detail = app.runs.show_run(session.run_id())
    assert detail.live is not None and detail.live.state == "closed"
    # The episode is recorded off the hook's path, by a detached `fleetmem jobs`.
    episode = _wait_for_episode(app, session.run_id())
    assert episode.episode["files_touched"] == ["app.py", "docs/notes.md", "generated.txt"]
    _wait_for_detached(world.home)


def _wait_for_episode(app: App, run_id: str) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        episodes = [e for e in app.memory.list_episodes() if e.run_id == run_id]
        if episodes and app.store.index_rows_for_episode(episodes[0].id):
            return episodes[0]
        time.sleep(0.2)
    raise AssertionError("the episode was not recorded")


def _wait_for_detached(home: Path) -> None:
    """Wait for processes started with this FLEETMEM_HOME (the detached jobs) to end."""
    needle = f"FLEETMEM_HOME={home}".encode()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = False
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if needle in (proc / "environ").read_bytes().split(b"\0"):
                    alive = True
                    break
            except OSError:
                continue
        if not alive:
            return
        time.sleep(0.1)


@pytest.mark.parametrize(
    "payload",
    [b"not json", b"[]", b'{"hook_event_name": "SessionStart"}', b"\xff\xfe"],
)
def test_hooks_fail_open_on_bad_payloads(world: World, payload: bytes) -> None:
    world.config("[agent.claude-code]\nmemory_briefing = true\n")
    session = Session(world)
    proc, _took = session.hook("SessionStart", payload)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "hook.failed event=SessionStart" in (world.home / "logs" / "hooks.log").read_text()


def test_hooks_fail_open_on_a_broken_configuration(world: World) -> None:
    (world.home / "fleetmem.toml").write_text("[agent.claude-code\n")
    session = Session(world)
    for event, payload in (
        ("SessionStart", "session_start"),
        ("UserPromptSubmit", "user_prompt_submit"),
        ("PostToolUse", "post_tool_use_edit"),
        ("SessionEnd", "session_end"),
        ("Nope", "session_start"),
    ):
        proc, _took = session.hook(event, session.payload(payload))
        assert (proc.returncode, proc.stderr) == (0, b"")
        if event == "UserPromptSubmit":  # the person hears that their fact was not kept
            message = json.loads(proc.stdout)["systemMessage"]
            assert message.startswith("fleetmem could not store") and "\n" not in message
        else:
            assert proc.stdout == b""
    log = (world.home / "logs" / "hooks.log").read_text()
    assert log.count("hook.failed") == 5 and "ConfigError" in log


def test_session_start_briefs_without_episodes_when_the_provider_is_dead_or_hangs(
    world: World, open_app: Callable[[], App]
) -> None:
    # How long each case takes is measured by bench/bench_hooks.py, never asserted here.
    sleeper = f'command = "{sys.executable}"\nargs = ["-c", "import time; time.sleep(20)"]\n'
    for name, upstream in (
        ("healthy", None),
        ("exits at once", 'command = "/bin/false"\n'),
        ("closed port", 'url = "http://127.0.0.1:9/mcp"\n'),
        ("never answers", sleeper),
    ):
        # A long provider_timeout: the hook's own hard deadline (1 s) is what applies.
        extra = '[memory.episodes]\nprovider_timeout = "30s"\n'
        if upstream is not None:
            extra += f'[mcp.dead]\n{upstream}[memory]\nprovider = "dead"\n'
        _briefed(world, open_app, extra)
        session = Session(world)
        proc, _took = session.hook("SessionStart", session.payload("session_start"))
        block, _ = parse_block(_context(proc.stdout))
        document, _ = parse(block.body)
        facts, episodes = document.section("facts"), document.section("episodes")
        assert facts is not None and "no:cacheprovider" in facts.items[0].text, name
        assert episodes is not None
        degraded = ("degraded", "provider_unavailable") in episodes.attrs
        # A healthy built-in provider may miss its cold-start allowance on a loaded machine
        # (then the hook answers on time, degraded); test_provider_deadlines.py checks that it
        # answers in full with time to spare.
        assert degraded or upstream is None, name
        # The run keeps the degraded document it was given: the tool serves the same one.
        stored = open_app().agent_memory.stored_briefing(session.run_id())
        assert stored is not None and stored.text == block.body, name
    log = (world.home / "logs" / "hooks.log").read_text()
    # The one that never answers was given up on at the hook's deadline, not at 30 s.
    assert "briefing.provider_slow agent=claude-code after=1s" in log
    assert "after=30s" not in log


def test_the_installed_hook_commands_run_as_written(
    world: World, open_app: Callable[[], App]
) -> None:
    world.config("[agent.api-fixer]\nmemory_briefing = true\n")
    app = open_app()
    app.facts.add("Deploys freeze on Fridays.")
    app.close()
    env = env_for(world.home, HOME=str(world.tmp))
    subprocess.run(
        [FLEETMEM, "install", "claude-code", "--agent", "api-fixer"],
        env=env, check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    settings = json.loads((world.tmp / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["SessionStart"]
    command = group["hooks"][0]["command"]
    session = Session(world)
    # Claude Code runs the command through a shell, without FLEETMEM_HOME in its environment.
    plain = {k: v for k, v in env.items() if k != "FLEETMEM_HOME"}
    proc = subprocess.run(
        ["sh", "-c", command], input=session.payload("session_start"), env=plain,
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0
    assert "Fridays" in _context(proc.stdout)
    app = open_app()
    live = app.runs.show_run(session.run_id()).live
    assert live is not None and live.info.agent == "api-fixer"


def test_prompts_and_tools_with_nothing_to_record_do_not_open_the_store(world: World) -> None:
    world.config("[agent.claude-code]\n")
    session = Session(world)
    plain = json.dumps(
        {
            "session_id": session.id,
            "cwd": str(world.repo),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Fix the test.",
        }
    )
    read = json.dumps({"session_id": session.id, "cwd": str(world.repo),
                       "hook_event_name": "PostToolUse", "tool_name": "Read",
                       "tool_input": {"file_path": str(world.repo / "app.py")}})  # fmt: skip
    for event, payload in (("UserPromptSubmit", plain), ("PostToolUse", read)):
        proc, _ = session.hook(event, payload.encode())
        assert (proc.returncode, proc.stdout) == (0, b"")
    assert not (world.home / "fleetmem.db").exists()


def test_a_session_whose_agent_died_is_recorded_by_a_later_sessions_end(world: World) -> None:
    """Claude Code killed before its SessionEnd leaves a session open; the next SessionEnd
    (any session's) finds its process gone and records it from its transcript."""
    world.config("[agent.claude-code]\n")
    dead = Session(world)
    dead.transcript = world.tmp / f"{dead.id}.jsonl"
    dead.transcript.write_text(
        dead._fill((HOOKS / "transcript.jsonl").read_text(encoding="utf-8")), encoding="utf-8"
    )
    # The hook's parent (the "agent process") is a Python process that exits at once after.
    launcher = (
        "import subprocess, sys; subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(),"
        " check=True, stdout=subprocess.DEVNULL)"
    )
    subprocess.run(
        [sys.executable, "-c", launcher, FLEETMEM, "hook", "claude-code", "SessionStart"],
        input=dead.payload("session_start"), env=env_for(world.home), cwd=world.repo,
        timeout=60, check=True,
    )  # fmt: skip
    states = list((world.home / "hooks" / "claude-code").glob("*.json"))
    assert len(states) == 1 and json.loads(states[0].read_text())["owner_pid"]
    alive = Session(world)
    alive.hook("SessionStart", alive.payload("session_start"))
    alive.hook("SessionEnd", alive.payload("session_end"))
    record = world.record(dead.run_id())
    assert (record["outcome"], record["reason"]) == ("crashed", "unknown")
    assert record["model"]["served"] == "claude-opus-4-1-20250805"  # read from its transcript
    assert world.record(alive.run_id())["outcome"] != "crashed"
    assert not list((world.home / "hooks" / "claude-code").glob("*.json"))
    assert not list((world.home / "hooks" / "claude-code").glob("*.closing"))
    _wait_for_detached(world.home)


def test_a_session_start_needs_neither_the_tokenizer_nor_numpy_once_the_ranks_are_kept(
    world: World,
) -> None:
    """The hook answers a session's start in its own process (no daemon): the first one
    writes the token ranks under the home; a later one counts its new lines (here the line
    naming the first session, live in the same repository) from them, so neither the 0.45 s
    vocabulary nor numpy is loaded."""
    world.config("[agent.claude-code]\n")
    script = (
        "import json, sys\n"
        "from fleetmem.integrations.hookmain import run_hook\n"
        "given = []\n"
        "code, answer = run_hook(['claude-code', 'SessionStart'], stdin=sys.stdin.buffer.read(),\n"
        "                        on_answer=given.append)\n"
        "answer = ''.join(given) + answer\n"
        "from fleetmem import tokenize\n"
        "heavy = sorted(m for m in ('numpy', 'onnxruntime') if m in sys.modules)\n"
        "heavy += ['vocabulary'] if tokenize.loaded() else []\n"
        "print(json.dumps({'code': code, 'answer': answer, 'heavy': heavy}))\n"
    )
    sessions = [Session(world), Session(world)]
    answers = []
    for session in sessions:
        proc = subprocess.run(
            [sys.executable, "-c", script], input=session.payload("session_start"),
            capture_output=True, env=env_for(world.home), cwd=world.repo, timeout=60,
            check=True,
        )  # fmt: skip
        answers.append(json.loads(proc.stdout.splitlines()[-1]))
    assert (world.home / "cache" / "o200k-ranks.sqlite3").is_file()
    assert answers[0]["heavy"] == ["vocabulary"]  # the first session loads it, keeps the ranks
    assert sessions[0].run_id() in _context(answers[1]["answer"].encode())
    assert answers[1]["heavy"] == []


def test_a_hook_in_its_own_process_records_no_metrics_and_imports_no_client_for_them(
    world: World,
) -> None:
    """The process entry marks its metrics unexposed (nobody can read them before it
    exits), so a SessionStart answered in its own process imports neither the Prometheus
    client nor OpenTelemetry, nor the MCP client's asyncio: together about 40 ms of its
    300 ms budget. Its context still names the session live beside it."""
    world.config("[agent.claude-code]\n")
    script = (
        "import json, os, sys\n"
        "from fleetmem.integrations import hookmain\n"
        "leave = os._exit\n"
        "def report(code):\n"
        "    heavy = ('prometheus_client', 'opentelemetry', 'asyncio', 'fleetmem.metric_series')\n"
        "    sys.stdout.flush()\n"
        "    print('\\n' + json.dumps(sorted(m for m in heavy if m in sys.modules)), flush=True)\n"
        "    leave(code)\n"
        "os._exit = report\n"
        "hookmain.main(['claude-code', 'SessionStart'])\n"
    )
    first, second = Session(world), Session(world)
    assert first.hook("SessionStart", first.payload("session_start"))[0].returncode == 0
    proc = subprocess.run(
        [sys.executable, "-c", script], input=second.payload("session_start"),
        capture_output=True, env=env_for(world.home), cwd=world.repo, timeout=60, check=True,
    )  # fmt: skip
    *answer, imported = proc.stdout.decode().splitlines()
    assert json.loads(imported) == []
    assert first.run_id() in _context("\n".join(answer).encode())  # the scope line


def test_a_prompt_in_the_hooks_own_process_never_loads_the_embedding_model(
    world: World, open_app: Callable[[], App]
) -> None:
    """With the default embedder configured and no daemon, a prompt's capture is stored
    without its vector and its facts are matched by words: neither numpy nor onnxruntime is
    loaded (0.6 s and 300 MB a prompt). The next ranking by meaning embeds the capture."""
    (world.home / "fleetmem.toml").write_text("[agent.claude-code]\n", encoding="utf-8")
    app = open_app()
    flaky = app.facts.add("The ledger tests are flaky on CI: rerun them with a seed.").fact.id
    app.close()
    session = Session(world)
    proc, _ = session.hook("SessionStart", session.payload("session_start"))
    assert proc.returncode == 0
    script = (
        "import json, sys\n"
        "from fleetmem.integrations.hookmain import run_hook\n"
        "stdin = sys.stdin.buffer.read()\n"
        "code, answer = run_hook(['claude-code', 'UserPromptSubmit'], stdin=stdin)\n"
        "from fleetmem import tokenize\n"
        "heavy = sorted(m for m in ('numpy', 'onnxruntime') if m in sys.modules)\n"
        "heavy += ['vocabulary'] if tokenize.loaded() else []\n"
        "print(json.dumps({'answer': answer, 'heavy': heavy}))\n"
    )
    prompt = "remember that billing deploys wait for finance. Fix the flaky ledger test."
    done = subprocess.run(
        [sys.executable, "-c", script], input=_prompt(session, prompt), capture_output=True,
        env=env_for(world.home), cwd=world.repo, timeout=60, check=True,
    )  # fmt: skip
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["heavy"] == []
    assert "fleetmem remembered" in answer["answer"] and flaky in answer["answer"]
    app = open_app()
    assert app.facts.embedder is not None
    missing = app.store.fact_missing_vectors(app.facts.embedder.model_id, ["active"], 10)
    assert [r.body for r in missing] == ["billing deploys wait for finance."]
    app.close()
