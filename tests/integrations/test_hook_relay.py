"""Hooks answered by the running daemon over the home's socket (hookrelay), and handled in
their own process when no daemon listens.

The in-process tests drive a real HookRelay over a real Unix socket with a real App; the
end-to-end test runs ``fleetmem serve`` and the ``fleetmem hook`` command as subprocesses,
then kills the daemon with SIGKILL so its socket file is left behind.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fleetmem.integrations import hookrelay
from fleetmem.integrations.claude_hooks import ClaudeHooks
from fleetmem.integrations.hookmain import hooks_log_handler, serve_relayed
from fleetmem.integrations.hookstate import StateFiles
from fleetmem.service.bootstrap import App, build
from tests.conftest import write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for
from tests.surfaces.test_http import SLOW_START_S, free_port

VECTORS_OFF = '[model_api]\nembedding_model = ""\n'


@pytest.fixture
def relay_home(tmp_path: Path) -> Path:
    # Unix socket paths are short; pytest's tmp_path can be long on some systems.
    home = tmp_path / "h"
    home.mkdir()
    write_config(home, VECTORS_OFF)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.fixture
def served(relay_home: Path) -> Iterator[App]:
    # INFO, as the daemon logs: the hook lines (hook.done ... relay=1) are what is checked.
    hooks_logger = logging.getLogger("fleetmem.hooks")
    level = hooks_logger.level
    hooks_logger.setLevel(logging.INFO)
    app = build(relay_home, env_for(relay_home))
    relay = hookrelay.HookRelay(
        relay_home,
        functools.partial(serve_relayed, app),
        log_handler=hooks_log_handler(relay_home),
    )
    assert relay.start()
    try:
        yield app
    finally:
        relay.stop()
        app.close()
        hooks_logger.setLevel(level)


def _ask(
    home: Path, event: str, payload: dict[str, Any], integration: str = "claude-code"
) -> str | None:
    env = {"FLEETMEM_HOME": str(home), "HOME": os.environ.get("HOME", "/")}
    raw = json.dumps({"hook_event_name": event, **payload}).encode()
    return hookrelay.ask(home, [integration, event], env, raw, timeout_s=30)


def test_the_daemon_answers_codex_hooks_as_codex_sessions(
    served: App, relay_home: Path, repo: Path
) -> None:
    base = {"session_id": "sess-codex-1", "cwd": str(repo), "model": "gpt-5"}
    assert _ask(relay_home, "SessionStart", {**base, "source": "startup"}, "codex") == ""
    state = StateFiles(relay_home, "codex").load("sess-codex-1")
    assert state is not None and state.run_id == "codex-sess-codex-1"
    assert StateFiles(relay_home).load("sess-codex-1") is None  # not a Claude Code session
    live = served.runs.show_run("codex-sess-codex-1").live
    assert live is not None and live.info.adapter == "codex"
    wording = f"the {os.urandom(3).hex()} cache is warmed at six"
    prompt = {**base, "prompt": f"note for next time: {wording}"}
    answer = _ask(relay_home, "UserPromptSubmit", prompt, "codex")
    assert answer is not None and wording in json.loads(answer)["systemMessage"]
    [fact] = [f for f in served.facts.list(limit=50).items if wording in f.body]
    assert fact.conversation == "codex:sess-codex-1"
    command = {"tool_name": "Bash", "tool_input": {"command": "make lint"}, "tool_response": "ok"}
    assert _ask(relay_home, "PostToolUse", {**base, **command}, "codex") == ""
    events = StateFiles(relay_home, "codex").events("sess-codex-1")
    assert {"type": "command", "command": "make lint", "failed": False} in events


def test_the_daemon_answers_each_relayed_event(served: App, relay_home: Path, repo: Path) -> None:
    base = {"session_id": "sess-relay-1", "cwd": str(repo)}
    # A new memory has nothing to say at SessionStart, but the session's run is opened.
    assert _ask(relay_home, "SessionStart", {**base, "source": "startup"}) == ""
    state = StateFiles(relay_home).load("sess-relay-1")
    assert state is not None and state.run_id

    wording = "we never deploy billing on Fridays"
    answer = _ask(relay_home, "UserPromptSubmit", {**base, "prompt": f"remember that {wording}"})
    assert answer is not None and wording in answer
    texts = [f.body for f in served.facts.list(limit=50).items]
    assert wording in texts
    # The next session in the repository is told, by the daemon, of the one still live.
    second = _ask(
        relay_home, "SessionStart", {"session_id": "sess-relay-2", "cwd": str(repo), "source": "x"}
    )
    assert second is not None
    context = json.loads(second)["hookSpecificOutput"]["additionalContext"]
    assert "(run claude-sess-relay-1)" in context

    command = _ask(
        relay_home,
        "PostToolUse",
        {**base, "tool_name": "Bash", "tool_input": {"command": "pytest -x"}, "tool_response": {}},
    )
    assert command == ""
    events = StateFiles(relay_home).events("sess-relay-1")
    assert {"type": "command", "command": "pytest -x", "failed": False} in events

    log = (relay_home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert log.count("relay=1") >= 3


def test_the_socket_is_the_owners_alone(served: App, relay_home: Path) -> None:
    path = hookrelay.socket_path(relay_home)
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_second_daemon_leaves_the_listening_one_alone(served: App, relay_home: Path) -> None:
    second = hookrelay.HookRelay(relay_home, lambda hook, reply: reply("second"))
    assert second.start() is False
    assert _ask(relay_home, "PostToolUse", {"session_id": "x", "tool_name": "Read"}) == ""


def test_a_stale_socket_is_replaced_and_stop_removes_it(relay_home: Path) -> None:
    path = hookrelay.socket_path(relay_home)
    path.parent.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens: a daemon killed with SIGKILL
    assert _ask(relay_home, "SessionStart", {"session_id": "s"}) is None  # handled locally
    seen: list[str] = []

    def handle(hook: hookrelay.RelayedHook, reply: Any) -> None:
        seen.append(hook.argv[1])
        assert hook.pid == os.getpid()  # from the kernel, not from the request
        reply("ok")

    relay = hookrelay.HookRelay(relay_home, handle)
    assert relay.start()
    try:
        assert _ask(relay_home, "SessionStart", {"session_id": "s"}) == "ok"
    finally:
        relay.stop()
    assert seen == ["SessionStart"]
    assert not path.exists()
    assert _ask(relay_home, "SessionStart", {"session_id": "s"}) is None


def test_a_request_for_another_home_is_handed_back(served: App, relay_home: Path) -> None:
    other = relay_home.parent / "other"
    other.mkdir()
    # The socket of relay_home, asked about another home (a symlinked or copied socket).
    os.symlink(hookrelay.socket_path(relay_home).parent, other / "run")
    assert _ask(other, "SessionStart", {"session_id": "s"}) is None


def test_the_daemon_reads_the_configuration_as_a_hook_would(
    served: App, relay_home: Path, repo: Path
) -> None:
    base = {"session_id": "sess-config", "cwd": str(repo)}
    _ask(relay_home, "SessionStart", {**base, "source": "startup"})
    asked = {**base, "prompt": "remember: the staging database is rebuilt nightly"}
    assert "rebuilt nightly" in (_ask(relay_home, "UserPromptSubmit", asked) or "")
    # A configuration that does not load: the daemon hands the event back, so the hook's own
    # process reports it as it always has, instead of the daemon's last good settings.
    write_config(relay_home, VECTORS_OFF + "[memory.episodes]\nexcerpt_chars = -5\n")
    assert _ask(relay_home, "UserPromptSubmit", {**base, "prompt": "what runs nightly?"}) is None
    assert "hook_relay.declined" in (relay_home / "logs" / "hooks.log").read_text()
    # Mended, and changed: the daemon answers again, with the new settings.
    write_config(relay_home, VECTORS_OFF + "[memory.episodes]\nexcerpt_chars = 120\n")
    assert _ask(relay_home, "PostToolUse", {**base, "tool_name": "Read"}) == ""
    assert served.settings.memory.episodes.excerpt_chars == 120


def test_a_broken_request_gets_an_empty_answer(served: App, relay_home: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(str(hookrelay.socket_path(relay_home)))
        conn.sendall(b'{"v": 1, "argv": "not a list"}')
        conn.shutdown(socket.SHUT_WR)
        assert json.loads(conn.recv(1000)) == {"answer": ""}
    assert "hook_relay.failed error=ValueError" in (relay_home / "logs" / "hooks.log").read_text()


@pytest.mark.parametrize(
    ("event", "environ", "expected"),
    [
        ("SessionStart", {"FLEETMEM_HOME": "/h", "FLEETMEM_AGENT": "a"}, True),
        ("UserPromptSubmit", {"FLEETMEM_RUN_ID": "r", "CLAUDE_ENV_FILE": "/e"}, True),
        ("PostToolUseFailure", {}, True),
        ("SessionEnd", {}, True),  # answered at once, recorded after the answer
        ("SessionStart", {"FLEETMEM_STORE_URL": "sqlite:///x"}, False),  # its own settings
        ("Unknown", {}, False),
    ],
)
def test_what_is_relayed(event: str, environ: dict[str, str], expected: bool) -> None:
    assert hookrelay.relayable(event, environ) is expected


def test_a_relayed_session_end_answers_at_once_and_a_stopping_daemon_finishes_it(
    relay_home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent closing waits only for the daemon to take its SessionEnd; the episode is
    recorded after the answer, and a daemon asked to stop meanwhile lets it finish."""
    app = build(relay_home, env_for(relay_home))
    relay = hookrelay.HookRelay(relay_home, functools.partial(serve_relayed, app))
    assert relay.start()
    try:
        base = {"session_id": "sess-end-1", "cwd": str(repo)}
        assert _ask(relay_home, "SessionStart", {**base, "source": "startup"}) == ""
        state = StateFiles(relay_home).load("sess-end-1")
        assert state is not None
        recording = ClaudeHooks.session_end

        def slow(self: ClaudeHooks, payload: Any, **kwargs: Any) -> str:
            time.sleep(2.0)  # a long transcript to read
            return recording(self, payload, **kwargs)

        monkeypatch.setattr(ClaudeHooks, "session_end", slow)
        asked = time.monotonic()
        assert _ask(relay_home, "SessionEnd", {**base, "reason": "prompt_input_exit"}) == ""
        assert time.monotonic() - asked < 1.5
        assert app.runs.show_run(state.run_id).stored is None  # not recorded yet
    finally:
        relay.stop()  # waits for the SessionEnd it took
    try:
        detail = app.runs.show_run(state.run_id)
        assert detail.stored is not None and (detail.live is None or detail.live.state == "closed")
    finally:
        app.close()


def _hook(
    home: Path, repo: Path, event: str, payload: dict[str, Any], integration: str = "claude-code"
) -> str:
    proc = subprocess.run(
        [FLEETMEM, "hook", integration, event],
        input=json.dumps({"hook_event_name": event, **payload}).encode(),
        capture_output=True,
        env=env_for(home),
        cwd=repo,
        timeout=120,
        check=True,
    )
    return proc.stdout.decode()


def _serve(home: Path) -> subprocess.Popen[bytes]:
    """``fleetmem serve`` on ``home``, once it answers and its hook socket is there."""
    port = free_port()
    daemon = subprocess.Popen(
        [FLEETMEM, "serve", "--port", str(port)],
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + SLOW_START_S
    while time.monotonic() < deadline:
        assert daemon.poll() is None, "the daemon exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    assert hookrelay.socket_path(home).exists()
    return daemon


def test_a_codex_session_end_is_handed_to_the_daemon_by_its_detached_child(
    relay_home: Path, repo: Path
) -> None:
    """Codex's SessionEnd answers at once and goes on in a detached child; with a daemon up,
    that child hands the event over instead of building the application beside it."""
    daemon = _serve(relay_home)
    try:
        base = {"session_id": "sess-codex-end", "cwd": str(repo), "model": "gpt-5"}
        _hook(relay_home, repo, "SessionStart", {**base, "source": "startup"}, "codex")
        began = time.monotonic()
        _hook(relay_home, repo, "SessionEnd", {**base, "reason": "exit"}, "codex")
        assert time.monotonic() - began < 3.0  # within Codex's own 3 s
        log = relay_home / "logs" / "hooks.log"
        deadline = time.monotonic() + 60
        while "event=SessionEnd" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        [line] = [ln for ln in log.read_text().splitlines() if "hook.done event=SessionEnd" in ln]
        assert "relay=1" in line
        while StateFiles(relay_home, "codex").load("sess-codex-end") is not None:
            assert time.monotonic() < deadline, "the session was not closed"
            time.sleep(0.2)
    finally:
        daemon.terminate()
        daemon.wait(60)


def test_hooks_use_the_daemon_and_do_without_it_once_killed(relay_home: Path, repo: Path) -> None:
    daemon = _serve(relay_home)
    try:
        base = {"session_id": "sess-e2e", "cwd": str(repo)}
        _hook(relay_home, repo, "SessionStart", {**base, "source": "startup"})
        asked = {**base, "prompt": "remember: the alpha cluster is retired"}
        first = _hook(relay_home, repo, "UserPromptSubmit", asked)
        assert "the alpha cluster is retired" in first
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(30)
    log = relay_home / "logs" / "hooks.log"
    relayed = [line for line in log.read_text().splitlines() if "hook.done" in line]
    assert len(relayed) == 2 and all("relay=1" in line for line in relayed)
    # The daemon is gone and its socket file is left: the hook handles the event itself.
    assert hookrelay.socket_path(relay_home).exists()
    asked = {**base, "prompt": "remember: the beta queue drains hourly"}
    second = _hook(relay_home, repo, "UserPromptSubmit", asked)
    assert "the beta queue drains hourly" in second
    last = [line for line in log.read_text().splitlines() if "hook.done" in line][-1]
    assert "event=UserPromptSubmit" in last and "relay=1" not in last


def test_a_capture_the_daemon_cannot_store_is_told_in_one_line(
    served: App, relay_home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = {"session_id": "sess-broken", "cwd": str(repo)}
    _ask(relay_home, "SessionStart", {**base, "source": "startup"})

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(served.facts, "add", broken)
    asked = {**base, "prompt": "remember: the cache is warmed at six"}
    answer = _ask(relay_home, "UserPromptSubmit", asked)
    assert answer is not None
    told = json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert 'could not store "the cache is warmed at six"' in told
    assert "RuntimeError: the disk went away" in told


def test_the_daemon_warms_what_a_first_session_would_wait_on_and_writes_nothing(
    relay_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from fleetmem.integrations.hookmain import warm_for_hooks

    app = build(relay_home, {})
    try:
        before = app.store.last_loads(app.files.workspace, "claude-code")
        warm_for_hooks(app)
        assert app.store.last_loads(app.files.workspace, "claude-code") == before == []

        def broken(*_args: object, **_kwargs: object) -> None:
            raise OSError("disk gone")

        app.files.assemble = broken  # type: ignore[method-assign]
        with caplog.at_level(logging.INFO, logger="fleetmem.hooks"):
            warm_for_hooks(app)  # best effort: logged, never raised
        assert "hook.warm_failed error=OSError" in caplog.text
    finally:
        app.close()


def test_the_daemon_loads_the_embedder_before_the_assembly_counts_tokens(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The model's build-time temporaries are handed back before the token counter loads
    (the two at once made the daemon's start-up peak); a model that cannot load stops
    nothing else."""
    from types import SimpleNamespace

    from fleetmem.integrations.hookmain import warm_for_hooks

    order: list[str] = []

    def load() -> None:
        order.append("embedder")

    def assemble(*_args: object, **_kwargs: object) -> None:
        order.append("assembly")

    warm_for_hooks(
        SimpleNamespace(
            embedder=SimpleNamespace(load=load), files=SimpleNamespace(assemble=assemble)
        )
    )
    assert order == ["embedder", "assembly"]

    def missing() -> None:
        raise RuntimeError("no model package")

    order.clear()
    with caplog.at_level(logging.INFO, logger="fleetmem.hooks"):
        warm_for_hooks(
            SimpleNamespace(
                embedder=SimpleNamespace(load=missing), files=SimpleNamespace(assemble=assemble)
            )
        )
    assert order == ["assembly"]
    assert "hook.warm_failed part=embedder error=RuntimeError" in caplog.text
    order.clear()
    warm_for_hooks(SimpleNamespace(embedder=None, files=SimpleNamespace(assemble=assemble)))
    assert order == ["assembly"]  # vectors off: nothing to load
